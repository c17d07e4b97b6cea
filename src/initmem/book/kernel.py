"""The kernels the notebooks run in: their environment, their sockets, and what a failing cell reports.

* :func:`kernel_environment` -- what every notebook's kernel inherits: the inline matplotlib backend (glue needs it),
  ``initmem`` importable from the checkout, the repository root, and :data:`initmem.base.paths.TRAIN_ENV` (a run of
  ``initmem experiments`` trains the missing runs);
* :func:`quiet_kernel_options` and :class:`IPCKernelManager` -- kernels that listen on IPC sockets in a private
  temporary folder (no "running over TCP" warning, no socket files in the working directory);
* :func:`kill_kernels` -- the kernels of those managers killed at once, when the command is interrupted, and the
  reports of their deaths silenced;
* :func:`failure_details` -- the failing cell and ``"ename: evalue"`` of a papermill error;
* :func:`environment` -- set and restore environment variables around a block.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import tempfile
import weakref
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..base.paths import TRAIN_ENV

__all__ = ["environment", "kernel_environment", "failure_details", "quiet_kernel_options", "kill_kernels"]

#: The :class:`IPCKernelManager` instances alive in this process (their kernels may be running).
_MANAGERS: weakref.WeakSet[Any] = weakref.WeakSet()


@contextlib.contextmanager
def environment(values: Mapping[str, str | None]) -> Iterator[None]:
    """Set the environment variables of ``values`` (None: unset it) while the block runs; restore them afterwards."""
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def kernel_environment(root: Path) -> contextlib.AbstractContextManager[None]:
    """The environment of the kernels started while the block runs (see the module docstring): ``MPLBACKEND`` unset
    (a forced Agg would make glue paste text instead of images), ``<root>/src`` first on ``PYTHONPATH`` when it holds
    the package, ``INITMEM_ROOT`` the root and :data:`~initmem.base.paths.TRAIN_ENV` set."""
    src = str(root / "src")
    paths = [p for p in (os.environ.get("PYTHONPATH") or "").split(os.pathsep) if p]
    if (root / "src" / "initmem").is_dir() and src not in paths:
        paths = [src, *paths]
    return environment(
        {"MPLBACKEND": None, "PYTHONPATH": os.pathsep.join(paths) or None, "INITMEM_ROOT": str(root), TRAIN_ENV: "1"}
    )


def failure_details(exc: BaseException) -> tuple[int | None, str]:
    """``(failing cell index, "ename: evalue")`` of a papermill execution error (cell unknown: None)."""
    cell_index = getattr(exc, "cell_index", None)
    ename = getattr(exc, "ename", None)
    evalue = getattr(exc, "evalue", None)
    if ename is not None:
        return cell_index, f"{ename}: {evalue}"
    return cell_index, f"{type(exc).__name__}: {exc}"


def quiet_kernel_options() -> dict[str, Any]:
    """papermill options that start the kernel over IPC (local sockets) rather than TCP.

    Over TCP, ipykernel logs "Kernel is running over TCP without encryption ..." on every start (ipykernel
    >= 7, ``IPKernelApp.init_sockets``). IPC needs Unix sockets, which Windows lacks: there TCP stays.
    """
    if os.name == "nt":
        return {}
    return {"kernel_manager_class": f"{__name__}.IPCKernelManager"}


class _KilledKernelReports(logging.Filter):
    """Drops the reports of a kernel's death that :func:`kill_kernels` caused: papermill's "Kernel died while waiting
    for execute reply" and asyncio's "Task exception was never retrieved" of nbclient's ``DeadKernelError`` (the
    cell's task, abandoned when the interrupt left the event loop, fails when the loop is collected)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "papermill":
            return not record.getMessage().startswith("Kernel died")
        exc = record.exc_info[1] if record.exc_info else None
        return type(exc).__name__ != "DeadKernelError"


#: The filter :func:`kill_kernels` puts on the loggers in :data:`_DEATH_REPORTERS` once it has killed a kernel.
KILLED_KERNEL_REPORTS = _KilledKernelReports()
_DEATH_REPORTERS = ("papermill", "asyncio")


def kill_kernels() -> int:
    """Kill (SIGKILL) the kernel of every :class:`IPCKernelManager` of this process that still runs, with the
    processes of its process group; returns how many. Called when the command is interrupted (SIGINT, SIGTERM): papermill
    would otherwise shut a kernel down gracefully in the middle of its cell, and the kernel, whose sockets close under
    the cell's reply, prints a ZMQ traceback. Killed, it prints nothing, and papermill's own shutdown finds it gone.
    Once one is killed, :data:`KILLED_KERNEL_REPORTS` filters the loggers that would report its death as an error."""
    killed = 0
    for manager in list(_MANAGERS):
        provisioner = getattr(manager, "provisioner", None)
        process = getattr(provisioner, "process", None)
        if process is None or process.poll() is not None:
            continue
        pgid = getattr(provisioner, "pgid", None)
        with contextlib.suppress(OSError):
            if pgid and hasattr(os, "killpg") and pgid != os.getpgid(0):  # the kernel's own group: it and its children
                os.killpg(pgid, signal.SIGKILL)
            else:
                process.kill()
            killed += 1
    if killed:
        for name in _DEATH_REPORTERS:
            logging.getLogger(name).addFilter(KILLED_KERNEL_REPORTS)
    return killed


def __getattr__(name: str) -> Any:
    """``IPCKernelManager`` is built on first use, so importing this module does not import jupyter_client."""
    if name == "IPCKernelManager":
        from jupyter_client import AsyncKernelManager
        from traitlets import CaselessStrEnum

        class IPCKernelManager(AsyncKernelManager):
            """A kernel manager whose kernels listen on IPC sockets in a private temporary folder (removed with the
            kernel), never in the working directory (jupyter_client's default there is ``./kernel-ipc-<port>``)."""

            transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

            def __init__(self, **kwargs: Any) -> None:
                super().__init__(**kwargs)
                _MANAGERS.add(self)  # for kill_kernels

            def _ip_default(self) -> str:
                self._socket_dir = tempfile.mkdtemp(prefix="initmem-kernel-")
                return os.path.join(self._socket_dir, "kernel-ipc")

            async def _async_cleanup_resources(self, restart: bool = False) -> None:
                await super()._async_cleanup_resources(restart=restart)
                if not restart and getattr(self, "_socket_dir", None):
                    shutil.rmtree(self._socket_dir, ignore_errors=True)

        IPCKernelManager.__module__ = __name__
        globals()[name] = IPCKernelManager
        return IPCKernelManager
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
