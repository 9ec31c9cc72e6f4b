"""What every command-line entry point shares: how it ends."""
import signal
import sys


def run(main, argv=None):
    """Call main(argv) and exit with its status. A reader that goes away (a pipe
    into head) ends the program quietly, as it ends other Unix tools (SIGPIPE)."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        status = main(sys.argv[1:] if argv is None else argv)
    except KeyboardInterrupt:
        status = 130
    sys.exit(status)
