"""Files: output checks before any work, the one atomic writer, files set aside, run claims.

* :func:`check_output_file` / :func:`check_output_dir` prove that an output location can be written (by creating
  and removing a probe file) *before* a run trains, so that finished work is never lost to an unwritable path.
* :func:`atomic_write` is the one way this package writes a file that others read (run files, combined
  results, checkpoints, executed notebooks, the decoded data cache): into :func:`temp_name`
  (``.<name>.<host>.<pid>.tmp`` in the same folder), fsync, then ``os.replace``, so a reader or a killed writer
  never leaves half a file; :func:`remove_stale_temp_files` deletes temporary files whose process on this host
  is gone.
* :func:`set_aside` moves a file that cannot be used (corrupt, foreign, unsafe) to ``<name>.rejected``, so the
  work is redone and the file can be inspected.
* :class:`RunClaim` is a claim file ``<hash>.claim`` beside a cached run, so that concurrent sweeps over one
  cache train each run once. It records host, pid and start time, is refreshed while held, and is stale when
  its process is gone (same host) or when it has not been refreshed for :data:`CLAIM_TIMEOUT_S` (another host).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "OutputError",
    "atomic_write",
    "set_aside",
    "CLAIM_SUFFIX",
    "CLAIM_TIMEOUT_S",
    "RunClaim",
    "check_output_dir",
    "check_output_file",
    "process_alive",
    "remove_stale_temp_files",
    "temp_name",
]

log = logging.getLogger(__name__)

#: Suffix of claim files (never ``.nc``: a claim is not a run file).
CLAIM_SUFFIX = ".claim"
#: A claim of another host that has not been refreshed for this long is stale (its holder is presumed dead).
CLAIM_TIMEOUT_S = 600.0
#: How often a held claim is refreshed (its modification time), well inside :data:`CLAIM_TIMEOUT_S`.
CLAIM_REFRESH_S = 30.0


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
        probe.write_bytes(b"")
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
    _writable_dir(file.parent, option, file)
    return file


def _file_in_the_way(folder: Path) -> Path | None:
    """The first of ``folder`` and its ancestors that exists and is not a folder, or None."""
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            return None if candidate.is_dir() else candidate
    return None


# --- temporary files ------------------------------------------------------------------------------
def temp_name(path: Path) -> Path:
    """The temporary file of an atomic write of ``path``: ``.<name>.<host>.<pid>.tmp`` in the same folder."""
    return path.with_name(f".{path.name}.{socket.gethostname()}.{os.getpid()}.tmp")


def atomic_write(path: str | os.PathLike, write: Callable[[Path], object], *, fsync: bool = True) -> Path:
    """Write ``path`` atomically: ``write(tmp)`` writes the whole file at the temporary path :func:`temp_name`,
    which is then flushed to disk (``fsync``) and renamed over ``path``. The folder is created if needed; on any
    error the temporary file is removed and the error propagates (``path`` keeps its previous content).

    Returns ``path`` as a :class:`~pathlib.Path`.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path)
    try:
        write(tmp)
        if fsync:
            with open(tmp, "rb") as handle:
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
    """Delete the :func:`temp_name` files in ``folder`` left by killed processes of this host."""
    host = socket.gethostname()
    for tmp in Path(folder).glob(".*.tmp"):
        parts = tmp.name.rsplit(".", 3)  # .<name>.<host>.<pid>.tmp
        if len(parts) != 4 or parts[1] != host or not parts[2].isdigit():
            continue
        if not process_alive(int(parts[2])):
            log.info("removing %s, left by a killed process", tmp)
            tmp.unlink(missing_ok=True)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --- claims ---------------------------------------------------------------------------------------
class RunClaim:
    """An exclusive claim on one run of a cache: the file ``<run file without .nc>.claim``.

    ``acquire()`` creates the claim atomically (``O_EXCL``) and returns True, or returns False while another
    live holder has it; a stale claim (see the module docstring) is removed and taken over. While held, a
    daemon thread refreshes the file's modification time; ``release()`` (or leaving the ``with`` block) stops it
    and deletes the file.
    """

    def __init__(self, run_file: str | os.PathLike, timeout_s: float = CLAIM_TIMEOUT_S) -> None:
        run_file = Path(run_file)
        self.path = run_file.with_name(run_file.name.removesuffix(".nc") + CLAIM_SUFFIX)
        self.timeout_s = timeout_s
        self._stop: threading.Event | None = None

    def acquire(self) -> bool:
        """Take the claim if it is free or stale; False if a live holder has it."""
        for _ in range(2):  # a stale claim is removed once, then created again
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if not self.is_stale():
                    return False
                log.warning("taking over the stale claim %s (%s)", self.path, self.holder())
                self.path.unlink(missing_ok=True)
                continue
            with os.fdopen(fd, "w") as handle:
                json.dump({"host": socket.gethostname(), "pid": os.getpid(), "started": time.time()}, handle)
            self._start_refreshing()
            return True
        return False

    def release(self) -> None:
        """Stop refreshing and delete the claim file (if this process holds it)."""
        if self._stop is None:
            return
        self._stop.set()
        self._stop = None
        holder = self.holder()
        if holder.get("pid") == os.getpid() and holder.get("host") == socket.gethostname():
            self.path.unlink(missing_ok=True)

    def holder(self) -> dict:
        """The claim's content (``host``, ``pid``, ``started``), or {} if it is missing or unreadable."""
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}

    def is_stale(self) -> bool:
        """True if the claim's holder is gone: its process (this host) or its refreshes (another host)."""
        holder = self.holder()
        if holder.get("host") == socket.gethostname() and isinstance(holder.get("pid"), int):
            return not process_alive(holder["pid"])
        try:
            age = time.time() - self.path.stat().st_mtime
        except FileNotFoundError:
            return True
        return age > self.timeout_s

    def _start_refreshing(self) -> None:
        stop = self._stop = threading.Event()
        period = min(CLAIM_REFRESH_S, self.timeout_s / 4)

        def refresh() -> None:
            while not stop.wait(period):
                try:
                    os.utime(self.path)
                except OSError:
                    return

        threading.Thread(target=refresh, name=f"claim-{self.path.name}", daemon=True).start()

    def __enter__(self) -> "RunClaim":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
