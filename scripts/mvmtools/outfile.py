"""Files the tools write, whole or not at all, through symlinks (as minivmm's own,
mm/outfile.c): the text or the plot goes to a temporary in the directory of the
file the path names once every symlink is followed (dangling or not), and is
renamed over that file once complete. The link stays a link; a tool killed on
the way leaves the previous file as it was. A target that is not a regular file
(/dev/null, a FIFO) is written in place."""
import contextlib
import errno
import os
import stat
import tempfile


class OutError(OSError):
    """A file that cannot be written; str() says why and what to type."""

    def __str__(self):
        return self.args[0] if self.args else "cannot write"


def target(path):
    """The file PATH names once every symlink is followed, dangling or not."""
    real = os.path.realpath(path)
    if os.path.islink(real):  # realpath gives up inside a loop of links
        raise OutError("%s: %s" % (path, os.strerror(errno.ELOOP)))
    return real


def _in_place(real):
    try:
        return not stat.S_ISREG(os.stat(real).st_mode)
    except FileNotFoundError:
        return False


def temporary(path, what="", suffix=""):
    """A new empty temporary beside the file PATH names: its path. OutError when
    the directory is missing (named, with the mkdir to type) or is not writable."""
    real = target(path)
    if os.path.isdir(real):
        raise OutError("%s%s: a directory; name a file in it" % (what + " " if what else "", path))
    d = os.path.dirname(real) or "."
    if not os.path.isdir(d):
        via = " (a link to %s)" % real if os.path.abspath(path) != real else ""
        raise OutError("%s%s%s: no directory %s (make it first: mkdir -p %s)"
                       % (what + " " if what else "", path, via, d, d))
    # A device or a FIFO is written in place at the end: its temporary goes elsewhere (never into /dev).
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(real) + ".", suffix=suffix + ".tmp",
                               dir=None if _in_place(real) else d)
    os.close(fd)
    return tmp


def commit(tmp, path):
    """Put the complete temporary TMP in place of the file PATH names (keeping
    that file's mode), durably; a target that is not a regular file is written
    in place and TMP removed."""
    real = target(path)
    try:
        if _in_place(real):
            with open(tmp, "rb") as src, open(real, "wb") as dst:
                dst.write(src.read())
            return real
        try:
            mode = stat.S_IMODE(os.stat(real).st_mode)
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, real)
        tmp = None
        dfd = os.open(os.path.dirname(real) or ".", os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        return real
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def discard(tmp):
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)


@contextlib.contextmanager
def replacing(path, what="", newline=None):
    """with replacing(PATH) as f: write text to f; PATH's file is replaced only
    when the block ends without an exception."""
    tmp = temporary(path, what)
    try:
        with open(tmp, "w", newline=newline) as f:
            yield f
    except BaseException:
        discard(tmp)
        raise
    commit(tmp, path)


def write_text(path, text, what=""):
    with replacing(path, what) as f:
        f.write(text)
