"""Run claims: so that concurrent sweeps over one cache (on one machine or on many sharing a file system) train each
run once.

:class:`RunClaim` is a claim file ``<hash>.claim`` beside a cached run. It records the holder's host, pid and process
start time; the holder touches its modification time every :data:`CLAIM_HEARTBEAT_S` seconds (the heartbeat). A claim
is stale when its heartbeat has stopped for :data:`CLAIM_TIMEOUT_S`, or, on the holder's own host, as soon as its pid
is dead or belongs to another process (another start time, :func:`initmem.base.files.process_start`). An empty or
unreadable claim (a full disk, a holder killed while writing it; more than :data:`CLAIM_MAX_BYTES`, a pid outside
1..:data:`~initmem.base.files.PID_MAX`) is stale once its heartbeat timeout has passed, and so is a heartbeat more
than :data:`CLAIM_CLOCK_AHEAD_S` ahead of this host's clock that has not moved for that long. A claim is read only as
a regular file, never through a link; a folder, FIFO, link, device or socket at its path is stale at once.
:func:`remove_stale_claims` clears a folder of them.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .files import PID_MAX, OutputError, file_kind, hostname, open_new, process_alive, process_start

__all__ = [
    "CLAIM_SUFFIX",
    "CLAIM_HEARTBEAT_S",
    "CLAIM_TIMEOUT_S",
    "CLAIM_CLOCK_AHEAD_S",
    "CLAIM_MAX_BYTES",
    "RunClaim",
    "remove_stale_claims",
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


class RunClaim:
    """An exclusive claim on one run of a cache: the file ``<run file without .nc>.claim``.

    ``acquire()`` creates the claim atomically (:func:`~initmem.base.files.open_new`) with the holder's ``host``,
    ``pid``, ``pid_start`` (:func:`~initmem.base.files.process_start`) and ``started`` (Unix time), and returns True,
    or returns False while another live holder has it; a stale claim (see the module docstring and :meth:`stale_reason`) is removed and taken over. While held, a
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
        """The claim's content (``host``: str, ``pid``: int in 1..:data:`~initmem.base.files.PID_MAX`, ``pid_start``,
        ``started``), or {} if it is missing, empty, unreadable, not a regular file, longer than :data:`CLAIM_MAX_BYTES` or holds
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
        if holder.get("host") != hostname() or pid is None:
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
    """Whether ``values`` (parsed JSON) is a claim's content: a host name, a pid in
    1..:data:`~initmem.base.files.PID_MAX`, and, if present, a ``pid_start`` string and a ``started`` time (Unix seconds) below 1e12."""
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
        "host": hostname(),
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
