"""Files: output checks before any work, the one atomic writer, files set aside, the processes that wrote them.

* :func:`check_output_file` / :func:`check_output_dir` prove that an output location can be written (a probe file)
  *before* a run trains, so that finished work is never lost to an unwritable path.
* :func:`atomic_write` is the one way this package writes a file that others read: into :func:`temp_name` in the
  same folder, fsync, then ``os.replace``, so a reader or a killed writer never leaves half a file;
  :func:`remove_stale_temp_files` deletes temporary files whose process on this host is gone.
* Temporary and probe files are created by :func:`open_new` (``O_CREAT | O_EXCL | O_NOFOLLOW``) at a name no one
  can guess beforehand: a symlink planted in an output folder is never followed.
* :func:`set_aside` moves a file that cannot be used (corrupt, foreign, unsafe) to ``<name>.rejected``.
* :func:`process_alive` / :func:`process_start` tell whether a process of this host is still the one that wrote a
  file (the temporary files here, the run claims of :mod:`initmem.base.claims`).
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "OutputError",
    "atomic_write",
    "set_aside",
    "PID_MAX",
    "check_output_dir",
    "check_output_file",
    "file_kind",
    "hostname",
    "open_new",
    "process_alive",
    "process_start",
    "remove_stale_temp_files",
    "temp_name",
]

log = logging.getLogger(__name__)

#: The largest pid (Linux's ``PID_MAX_LIMIT``, 2**22); a claim naming another is unreadable.
PID_MAX = 2**22


class OutputError(OSError):
    """An output location that cannot be written; the message names the option (``--out: ...``)."""


# --- output checks --------------------------------------------------------------------------------
def check_output_dir(path: str | os.PathLike, option: str) -> Path:
    """Create folder ``path`` (and its parents) if needed and prove it writable with a probe file.

    Raises:
        OutputError: ``"<option>: cannot write to <path> (<why>)"``, e.g. when a parent is a file, the path
            is a file, or the folder is read-only.
    """
    if str(path) == "":
        raise OutputError(f"{option}: an empty path; name a folder (e.g. {option} results/cache)")
    return _writable_dir(Path(path), option, Path(path))


def _writable_dir(folder: Path, option: str, target: Path) -> Path:
    """Create ``folder`` if needed and write and remove a probe file there; errors name ``target``."""
    blocker = _file_in_the_way(folder)
    if blocker is not None:
        what = "it is a file" if blocker == target else f"{blocker} is a file"
        raise OutputError(f"{option}: cannot write to {target} ({what})")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = temp_name(folder / "probe")
        open_new(probe).close()
        probe.unlink()
    except OSError as exc:
        raise OutputError(f"{option}: cannot write to {target} ({exc.strerror or type(exc).__name__})") from None
    return folder


def check_output_file(path: str | os.PathLike, option: str) -> Path:
    """Prove that file ``path`` can be written (its folder is created if needed); an existing file is kept.

    Raises:
        OutputError: naming ``option`` when ``path`` is empty or a folder, or its folder cannot be written.
    """
    file = Path(path)
    if str(path) == "":
        raise OutputError(f"{option}: an empty path; name a file")
    if file.is_dir():
        raise OutputError(f"{option}: cannot write to {file} (it is a folder)")
    _refuse_non_regular(file, option)
    _writable_dir(file.parent, option, file)
    return file


def _refuse_non_regular(file: Path, option: str) -> None:
    """Raise :class:`OutputError` when ``file`` exists and is anything but a regular file: the atomic writer would
    replace a symlink, FIFO or device by a regular file (``--out /dev/stdout``, say)."""
    try:
        mode = os.lstat(file).st_mode
    except OSError:  # nothing there (or a parent in the way: the writability check names it)
        return
    if not stat.S_ISREG(mode):
        raise OutputError(
            f"{option}: {file} is {file_kind(mode)}, not a regular file; name a regular file or a "
            f"new path (it is replaced as a whole when the result is written)"
        )


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words (``a symlink``, ``a FIFO``, ...)."""
    kinds = (
        (stat.S_ISLNK, "a symlink"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _file_in_the_way(folder: Path) -> Path | None:
    """The first of ``folder`` and its ancestors that exists and is not a folder, or None."""
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            return None if candidate.is_dir() else candidate
    return None


# --- temporary files ------------------------------------------------------------------------------
def hostname() -> str:
    """This machine's name (:func:`socket.gethostname`; socket is imported here, not by the command line's --help)."""
    import socket

    return socket.gethostname()


def temp_name(path: Path) -> Path:
    """A new temporary name for an atomic write of ``path``: ``.<name>.<host>.<pid>.<random>.tmp`` in the same folder,
    ``<random>`` being 16 hex digits drawn afresh (so no one can plant a file there beforehand)."""
    return path.with_name(f".{path.name}.{hostname()}.{os.getpid()}.{secrets.token_hex(8)}.tmp")


def open_new(path: Path) -> BinaryIO:
    """``path`` created as a new empty file and opened for writing (binary): ``O_CREAT | O_EXCL | O_NOFOLLOW``, so
    never an existing file, and never the target of a symlink or a FIFO planted at ``path``.

    Raises:
        FileExistsError: something (a file, a link, ...) is already at ``path``; it is left alone.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    return os.fdopen(os.open(path, flags, 0o644), "wb")


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], object], *, fsync: bool = True) -> Path:
    """Write ``path`` atomically: ``write(handle)`` writes the whole file into ``handle``, a binary file opened by
    :func:`open_new` at a fresh :func:`temp_name`, which is then flushed to disk (``fsync``) and renamed over
    ``path``. The folder is created if needed; on any error the temporary file is removed and the error propagates
    (``path`` keeps its previous content).

    Returns ``path`` as a :class:`~pathlib.Path`.

    Raises:
        OutputError: ``path`` exists and is not a regular file (a symlink, FIFO, device, ...): it is left alone.
    """
    path = Path(path)
    _refuse_non_regular(path, str(path))  # never replace a symlink, FIFO or device
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path)
    handle = open_new(tmp)
    try:
        with handle:
            write(handle)
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def set_aside(path: Path) -> str:
    """Move ``path`` to ``<name>.rejected`` beside it; returns what happened, for a log line
    (``"moved to <name>.rejected"`` or why it could not be moved)."""
    rejected = path.with_name(path.name + ".rejected")
    try:
        if path.is_dir():
            raise IsADirectoryError(path)
        os.replace(path, rejected)
        return f"moved to {rejected.name}"
    except OSError as exc:
        return f"left in place ({type(exc).__name__})"


def remove_stale_temp_files(folder: Path) -> None:
    """Delete the :func:`temp_name` files in ``folder`` left by killed processes of this host (and those of earlier
    versions, ``.<name>.<host>.<pid>.tmp``)."""
    host = hostname()
    for tmp in Path(folder).glob(".*.tmp"):
        head, _, pid = tmp.name.removesuffix(".tmp").rpartition(".")
        if re.fullmatch("[0-9a-f]{16}", pid):  # the random part of the name
            head, _, pid = head.rpartition(".")
        if head.endswith(f".{host}") and pid.isdigit() and not process_alive(int(pid)):  # a host name may hold dots
            log.info("removing %s, left by a killed process", tmp)
            tmp.unlink(missing_ok=True)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (never one outside 1..:data:`PID_MAX`)."""
    if not 0 < pid <= PID_MAX:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_start(pid: int) -> str | None:
    """An opaque token of when process ``pid`` of this host started (Linux: the boot id and the start time in clock
    ticks from ``/proc``), equal for one process and different for a later one that reuses the pid; None where
    ``/proc`` cannot tell (another system, or no such process)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return f"{boot}:{fields[19]}"  # field 22 of stat(5); fields[0] is field 3
    except (OSError, IndexError):
        return None
