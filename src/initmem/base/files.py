"""Files: output checks before any work, the one atomic writer, files set aside, run claims.

* :func:`check_output_file` / :func:`check_output_dir` prove that an output location can be written (by creating
  and removing a probe file) *before* a run trains, so that finished work is never lost to an unwritable path.
* :func:`atomic_write` is the one way this package writes a file that others read (run files, combined
  results, checkpoints, executed notebooks, the decoded data cache): into :func:`temp_name`
  (``.<name>.<host>.<pid>.<random>.tmp`` in the same folder), fsync, then ``os.replace``, so a reader or a killed
  writer never leaves half a file; :func:`remove_stale_temp_files` deletes temporary files whose process on this
  host is gone.
* Temporary and probe files are created by :func:`open_new` (``O_CREAT | O_EXCL | O_NOFOLLOW``) at a name no one
  can guess beforehand, and written through that handle only: a symlink planted in an output folder is never
  followed, so nothing outside the folder is overwritten and no output becomes a link.
* :func:`set_aside` moves a file that cannot be used (corrupt, foreign, unsafe) to ``<name>.rejected``, so the
  work is redone and the file can be inspected.
* :class:`RunClaim` is a claim file ``<hash>.claim`` beside a cached run, so that concurrent sweeps over one
  cache (on one machine or on many sharing a file system) train each run once. It records the holder's host, pid
  and process start time; the holder touches its modification time every :data:`CLAIM_HEARTBEAT_S` seconds (the
  heartbeat). A claim is stale when its heartbeat has stopped for :data:`CLAIM_TIMEOUT_S`, or, on the holder's own
  host, as soon as its pid is dead or belongs to another process (another start time). An empty or unreadable
  claim (a full disk, a holder killed while writing it; more than :data:`CLAIM_MAX_BYTES`, a pid outside
  1..:data:`PID_MAX`) is stale once its heartbeat timeout has passed, and so is a heartbeat more than
  :data:`CLAIM_CLOCK_AHEAD_S` ahead of this host's clock that has not moved for that long. A claim is read only as a
  regular file, never through a link; a folder, FIFO, link, device or socket at its path is stale at once.
  :func:`remove_stale_claims` clears a folder of them.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "OutputError",
    "atomic_write",
    "set_aside",
    "CLAIM_SUFFIX",
    "CLAIM_HEARTBEAT_S",
    "CLAIM_TIMEOUT_S",
    "CLAIM_CLOCK_AHEAD_S",
    "CLAIM_MAX_BYTES",
    "PID_MAX",
    "RunClaim",
    "check_output_dir",
    "check_output_file",
    "file_kind",
    "open_new",
    "process_alive",
    "process_start",
    "remove_stale_claims",
    "remove_stale_temp_files",
    "temp_name",
]

log = logging.getLogger(__name__)

#: Suffix of claim files (never ``.nc``: a claim is not a run file).
CLAIM_SUFFIX = ".claim"
#: Seconds between two heartbeats of a held claim (its holder touches the file's modification time).
CLAIM_HEARTBEAT_S = 5.0
#: Seconds without a heartbeat after which a claim is stale, whatever host holds it. Well above
#: :data:`CLAIM_HEARTBEAT_S`, and above the 60 s for which an NFS client may cache a file's attributes.
CLAIM_TIMEOUT_S = 120.0
#: Seconds by which a claim's heartbeat may be ahead of this host's clock (clocks of hosts sharing a file system
#: differ a little); a heartbeat further ahead is not believed (:meth:`RunClaim.stale_reason`).
CLAIM_CLOCK_AHEAD_S = 60.0
#: The longest claim file read (bytes); a claim holds a hundred or so.
CLAIM_MAX_BYTES = 4096
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
def _hostname() -> str:
    """This machine's name (:func:`socket.gethostname`; socket is imported here, not by the command line's --help)."""
    import socket

    return socket.gethostname()


def temp_name(path: Path) -> Path:
    """A new temporary name for an atomic write of ``path``: ``.<name>.<host>.<pid>.<random>.tmp`` in the same folder,
    ``<random>`` being 16 hex digits drawn afresh (so no one can plant a file there beforehand)."""
    return path.with_name(f".{path.name}.{_hostname()}.{os.getpid()}.{secrets.token_hex(8)}.tmp")


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
    host = _hostname()
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


# --- claims ---------------------------------------------------------------------------------------
class RunClaim:
    """An exclusive claim on one run of a cache: the file ``<run file without .nc>.claim``.

    ``acquire()`` creates the claim atomically (:func:`open_new`) with the holder's ``host``, ``pid``, ``pid_start``
    (:func:`process_start`) and ``started`` (Unix time), and returns True, or returns False while another live holder
    has it; a stale claim (see the module docstring and :meth:`stale_reason`) is removed and taken over. While held, a
    daemon thread touches the file every :data:`CLAIM_HEARTBEAT_S` seconds; ``release()`` (or leaving the ``with``
    block) stops it and deletes the file.

    A claim is only ever read as a regular file, without following a link, and at most :data:`CLAIM_MAX_BYTES` of it;
    anything else at its path (a folder, FIFO, symlink, device, socket) is not a claim of this package and is taken
    over at once. ``clock`` (Unix seconds) is the clock its heartbeat is compared with.
    """

    def __init__(
        self, run_file: str | os.PathLike, timeout_s: float = CLAIM_TIMEOUT_S, clock: Callable[[], float] = time.time
    ) -> None:
        run_file = Path(run_file)
        self.path = run_file.with_name(run_file.name.removesuffix(".nc").removesuffix(CLAIM_SUFFIX) + CLAIM_SUFFIX)
        self.timeout_s = timeout_s
        self.clock = clock
        self._stop: threading.Event | None = None
        self._ahead: tuple[float, float] | None = None  # (mtime, clock) when a heartbeat ahead of the clock was seen

    def acquire(self) -> bool:
        """Take the claim if it is free or stale; False if a live holder has it.

        Raises:
            OutputError: a stale claim that cannot be removed (a folder that cannot be moved aside, say).
        """
        for _ in range(2):  # a stale claim is removed once, then created again
            try:
                handle = open_new(self.path)
            except FileExistsError:
                reason = self.stale_reason()
                if reason is None:
                    return False
                log.warning("taking over the claim %s (%s): %s", self.path, self.describe(), reason)
                self._remove()
                continue
            try:
                with handle:
                    handle.write(json.dumps(_me()).encode())
            except OSError:  # a full disk, say: never leave an empty claim to be waited on
                self.path.unlink(missing_ok=True)
                raise
            self._start_heartbeat()
            return True
        return False

    def release(self) -> None:
        """Stop the heartbeat and delete the claim file (if this process holds it)."""
        if self._stop is None:
            return
        self._stop.set()
        self._stop = None
        if self._held_by_me():
            self.path.unlink(missing_ok=True)

    def holder(self) -> dict:
        """The claim's content (``host``: str, ``pid``: int in 1..:data:`PID_MAX`, ``pid_start``, ``started``), or
        {} if it is missing, empty, unreadable, not a regular file, longer than :data:`CLAIM_MAX_BYTES` or holds
        anything else."""
        status = self._lstat()
        if status is None or not stat.S_ISREG(status.st_mode):  # a device is not even opened
            return {}
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return {}
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced meanwhile: never a read that waits or never ends
                return {}
            text = os.read(fd, CLAIM_MAX_BYTES + 1)
        except OSError:
            return {}
        finally:
            os.close(fd)
        try:
            values = json.loads(text) if len(text) <= CLAIM_MAX_BYTES else None
        except ValueError:
            return {}
        return values if _a_claim(values) else {}

    def _lstat(self) -> os.stat_result | None:
        """The claim's own status (a link is not followed), or None if there is nothing at its path (or it cannot be
        looked at)."""
        try:
            return os.lstat(self.path)
        except OSError:
            return None

    def heartbeat_age(self) -> float | None:
        """Seconds since the claim's last heartbeat (its modification time) by :attr:`clock`, or None if there is no
        claim; negative when the heartbeat is ahead of the clock."""
        status = self._lstat()
        return None if status is None else self.clock() - status.st_mtime

    def stale_reason(self) -> str | None:
        """Why the claim's holder is presumed gone (one phrase), or None while it is alive.

        Stale: anything but a regular file at its path (at once, ``"not a claim file"``); no heartbeat for ``timeout_s`` (any host; an empty
        or unreadable claim too); a heartbeat more than :data:`CLAIM_CLOCK_AHEAD_S` ahead of :attr:`clock` that has
        not moved for ``timeout_s`` by that clock (one warning when first seen); or on this host a holder pid that is
        dead or now belongs to another process (its start time differs from the recorded one).
        """
        status = self._lstat()
        if status is None:
            return "it is gone"
        if not stat.S_ISREG(status.st_mode):
            return "not a claim file"
        now = self.clock()
        age = now - status.st_mtime
        if age > self.timeout_s:
            return f"no heartbeat for {age:.0f} s (timeout {self.timeout_s:g} s)"
        if -age > CLAIM_CLOCK_AHEAD_S:
            if self._ahead is None:
                log.warning(
                    "the claim %s has a heartbeat %.0f s ahead of this host's clock; it is taken over if its "
                    "heartbeat does not move for %g s",
                    self.path,
                    -age,
                    self.timeout_s,
                )
            if self._ahead is None or self._ahead[0] != status.st_mtime:  # first seen, or its heartbeat moved
                self._ahead = (status.st_mtime, now)
            still = now - self._ahead[1]
            if still > self.timeout_s:
                return (
                    f"its heartbeat is {-age:.0f} s ahead of this host's clock and has not moved for {still:.0f} s "
                    f"(timeout {self.timeout_s:g} s)"
                )
        holder = self.holder()
        pid = holder.get("pid")
        if holder.get("host") != _hostname() or pid is None:
            return None  # another host (or a claim being written): only its heartbeat tells
        if not process_alive(pid):
            return f"its process {pid} is gone"
        recorded, now_start = holder.get("pid_start"), process_start(pid)
        if recorded and now_start and recorded != now_start:
            return f"pid {pid} now belongs to another process"
        return None

    def is_stale(self) -> bool:
        """True if the claim's holder is gone (:meth:`stale_reason`)."""
        return self.stale_reason() is not None

    def describe(self) -> str:
        """The holder and its heartbeat in words, for a log line: ``host vm, pid 123, claimed 40 s ago, last
        heartbeat 2 s ago`` (``an empty or unreadable claim``, ``a FIFO (named pipe)``, ``last heartbeat 86400 s
        ahead of this host's clock``...)."""
        status = self._lstat()
        if status is not None and not stat.S_ISREG(status.st_mode):
            return file_kind(status.st_mode)
        holder, age = self.holder(), self.heartbeat_age()
        if age is None:
            beat = ""
        elif -age > CLAIM_CLOCK_AHEAD_S:
            beat = f", last heartbeat {-age:.0f} s ahead of this host's clock"
        else:
            beat = f", last heartbeat {max(0.0, age):.0f} s ago"
        if not holder:
            return f"an empty or unreadable claim{beat}"
        started = holder.get("started")
        since = f", claimed {self.clock() - started:.0f} s ago" if started is not None else ""
        return f"host {holder['host']}, pid {holder['pid']}{since}{beat}"

    def _remove(self) -> None:
        """Delete the claim (a link: the link itself); a folder at its path is moved aside to ``<name>.rejected``,
        its content not being this package's to delete.

        Raises:
            OutputError: it cannot be removed, naming the path.
        """
        try:
            status = self._lstat()
            if status is not None and stat.S_ISDIR(status.st_mode):
                os.rename(self.path, self.path.with_name(self.path.name + ".rejected"))
            else:
                self.path.unlink(missing_ok=True)
        except OSError as exc:
            raise OutputError(
                f"cache: cannot remove the stale claim {self.path} ({exc.strerror or type(exc).__name__}); "
                f"remove it by hand"
            ) from None

    def _held_by_me(self) -> bool:
        holder = self.holder()
        return all(holder.get(key) == value for key, value in _me().items() if key != "started")

    def _start_heartbeat(self) -> None:
        stop = self._stop = threading.Event()
        period = min(CLAIM_HEARTBEAT_S, self.timeout_s / 4)

        def beat() -> None:
            while not stop.wait(period):
                if not self._held_by_me():  # removed or taken over meanwhile: never keep another's claim alive
                    log.warning("lost the claim %s (%s)", self.path, self.describe())
                    return
                try:
                    os.utime(self.path)
                except OSError:
                    return

        threading.Thread(target=beat, name=f"claim-{self.path.name}", daemon=True).start()

    def __enter__(self) -> RunClaim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _a_claim(values: object) -> bool:
    """Whether ``values`` (parsed JSON) is a claim's content: a host name, a pid in 1..:data:`PID_MAX`, and, if
    present, a ``pid_start`` string and a ``started`` time (Unix seconds) below 1e12."""
    if not isinstance(values, dict):
        return False
    host, pid, pid_start, started = (values.get(key) for key in ("host", "pid", "pid_start", "started"))
    return (
        isinstance(host, str)
        and len(host) <= 255
        and type(pid) is int
        and 0 < pid <= PID_MAX
        and (pid_start is None or isinstance(pid_start, str))
        and (started is None or (type(started) in (int, float) and abs(started) < 1e12))  # not NaN or infinite
    )


def _me() -> dict:
    """This process as a claim holder."""
    return {
        "host": _hostname(),
        "pid": os.getpid(),
        "pid_start": process_start(os.getpid()),
        "started": time.time(),
    }


def remove_stale_claims(folder: Path) -> None:
    """Delete the claims in ``folder`` whose holders are gone (:meth:`RunClaim.stale_reason`), one log line each.

    Raises:
        OutputError: a stale claim that cannot be removed, naming it.
    """
    for path in Path(folder).glob("*" + CLAIM_SUFFIX):
        claim = RunClaim(path)
        reason = claim.stale_reason()
        if reason is not None:
            log.info("removing the claim %s (%s): %s", path, claim.describe(), reason)
            claim._remove()
