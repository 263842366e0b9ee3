"""Where a command's `--out` goes: stdout, a device or FIFO as it is, a file replaced whole.

Why not always "write a temporary file, rename it over the target": renamed over `/dev/null`
(run as root) that replaces the machine's null device with a regular file, renamed over a FIFO
it leaves the reader waiting forever, and over `/dev/stdout` it prints nothing. So only a
regular file, or a path that does not exist yet, is written through a fresh temporary file in
the same folder (`mkstemp`: never someone else's `PATH.partial`) and renamed into place at the
end, so a reader never sees half an export and a failure leaves the old file as it was.
Anything else that exists (a character device, a FIFO, a symlink) is opened and written
straight through, as a shell's `>` would; `-` is stdout.
"""

import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, BinaryIO, TextIO, cast

from arena.core.errors import InputError

STDOUT = "-"


def _umask() -> int:
    """The process umask (only readable by setting it; the CLI is single-threaded here)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _cannot_write(target: str, exc: OSError, option: str) -> InputError:
    reason = exc.strerror or type(exc).__name__
    return InputError(f"cannot write {target}: {reason}", f"choose a writable {option} path")


@contextmanager
def open_output(target: str | None, option: str = "--out") -> Iterator[TextIO]:
    """A text handle for `target` (None or `-`: stdout), closed and in place on exit.

    On an error inside the block a regular file is left untouched and the temporary file is
    removed; an OSError while opening, writing or renaming becomes one InputError naming the
    path. Newlines are written as given (CSV writers choose their own).
    """
    if target is None or target == STDOUT:
        yield sys.stdout
        sys.stdout.flush()
        return
    with _opened(target, option, "w") as handle:
        yield cast(TextIO, handle)


@contextmanager
def open_binary_output(target: str | None, option: str = "--out") -> Iterator[BinaryIO]:
    """`open_output` for bytes (a bundle's zip): the same targets, the same guarantees."""
    if target is None or target == STDOUT:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    with _opened(target, option, "wb") as handle:
        yield cast(BinaryIO, handle)


@contextmanager
def _opened(target: str, option: str, how: str) -> Iterator[IO[Any]]:
    """`target` opened for writing (`how`: "w" or "wb"): a regular file or a new path replaced
    whole, anything else that exists written straight through."""
    if not target.strip():
        raise InputError(f"{option} is empty", f"give a file path, or {option} - for stdout")
    path = Path(target)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise _cannot_write(target, exc, option) from None
    if mode is not None and stat.S_ISDIR(mode):
        raise InputError(f"{option} {target} is a folder", "give a file path inside it")
    if mode is None or stat.S_ISREG(mode):
        with _replaced_whole(path, mode, option, how) as handle:
            yield handle
        return
    try:
        handle = open(path, how, **_text_args(how))  # noqa: SIM115
    except OSError as exc:
        raise _cannot_write(target, exc, option) from None
    try:
        with handle:
            yield handle
    except OSError as exc:
        raise _cannot_write(target, exc, option) from None


def _text_args(how: str) -> dict[str, Any]:
    """UTF-8 and newlines as written for text; nothing for bytes."""
    return {} if "b" in how else {"encoding": "utf-8", "newline": ""}


@contextmanager
def _replaced_whole(path: Path, mode: int | None, option: str, how: str) -> Iterator[IO[Any]]:
    """Write a unique temporary file beside `path`, then rename it over `path` atomically.

    The new file keeps the old one's permission bits (or gets the umask's, for a new path):
    `mkstemp` creates owner-only files, which would quietly narrow who can read an export.
    """
    folder = path.parent
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=folder)
    except OSError as exc:
        raise _cannot_write(str(path), exc, option) from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, how, **_text_args(how)) as handle:
            os.fchmod(fd, stat.S_IMODE(mode) if mode is not None else 0o666 & ~_umask())
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _cannot_write(str(path), exc, option) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
