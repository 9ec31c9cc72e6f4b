"""gnuplot, the renderer: the tools write its data files and scripts and run it."""
import shutil
import subprocess

MISSING = "gnuplot is missing (apt-get install gnuplot-nox)"


def available():
    return shutil.which("gnuplot") is not None


def run(script_path):
    """Run gnuplot on a script file. Returns (ok, first line of its stderr)."""
    try:
        p = subprocess.run(["gnuplot", script_path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    except OSError as e:
        return False, str(e)
    err = p.stderr.decode("utf-8", "replace")
    first = err.splitlines()[0] if err.strip() else ""
    return p.returncode == 0, first


def quote(s):
    """A gnuplot string literal: double-quoted, with backslash, quote and newline
    escaped (a newline breaks a title into lines)."""
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


# Distinct colours, one per series (gnuplot's default cycle repeats after 8 and
# reuses purple): the Okabe-Ito palette first, then more, chosen to stay apart.
COLORS = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000",
          "#999999", "#8b4513", "#9400d3", "#2e8b57", "#ff69b4", "#4b0082", "#00ced1", "#808000",
          "#ff0000", "#1e90ff", "#adff2f", "#800000")


def color(i):
    return COLORS[i % len(COLORS)]
