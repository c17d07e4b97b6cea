"""Run-level progress of a notebook while its kernel trains: runs done of the sweep's total, with an ETA.

A notebook's sweep trains inside its kernel, where a progress bar would only reach the executed notebook. The
runner knows the sweep before the kernel starts (:func:`initmem.study.costs.reuse.notebook_plan`: the run hashes of the
experiment's spec at the notebook's parameters, with the thread count each run will have, and which of them will
train), so :class:`RunProgress` watches the run store from outside: a thread counts the run files (``<hash>.nc`` or
``<hash>.stacked<K>.nc``) every :data:`POLL_S` seconds and advances a tqdm bar, whose rate (runs per second, averaged
over the runs trained in this session) gives the ETA.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.bars import auto_tqdm

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = ["POLL_S", "RunProgress"]

#: Seconds between two looks at the run store.
POLL_S = 2.0


def _done(runs_dir: Path, hashes: list[str]) -> int:
    """How many of ``hashes`` have a run file in ``runs_dir``."""
    if not runs_dir.is_dir():
        return 0
    names = {path.name.split(".", 1)[0] for path in runs_dir.glob("*.nc")}
    return sum(1 for digest in hashes if digest in names)


class RunProgress:
    """``with RunProgress(name, runs_dir, hashes):`` shows a bar of the runs in ``runs_dir`` while the block runs.

    Nothing is shown for a notebook without runs or with ``enabled=False``; the bar starts at the runs already
    there, so its rate and ETA count only the runs trained now.
    """

    def __init__(self, name: str, runs_dir: Path, hashes: list[str], *, enabled: bool = True, poll_s: float = POLL_S):
        self.name, self.runs_dir, self.hashes, self.poll_s = name, Path(runs_dir), list(hashes), poll_s
        self.enabled = enabled and bool(self.hashes)
        self.bar: tqdm | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> RunProgress:
        if self.enabled:
            self.bar = auto_tqdm()(
                total=len(self.hashes),
                initial=_done(self.runs_dir, self.hashes),
                desc=f"  {self.name}",
                unit="run",
                smoothing=0,
                dynamic_ncols=True,
                leave=False,
            )
            self._thread = threading.Thread(target=self._watch, name=f"initmem-progress-{self.name}", daemon=True)
            self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._stop.wait(self.poll_s):
            self.update()

    def update(self) -> int:
        """Count the run files now and advance the bar; returns the count."""
        done = _done(self.runs_dir, self.hashes)
        if self.bar is not None and done > self.bar.n:
            self.bar.update(done - self.bar.n)
        return done

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.bar is not None:
            self.update()
            self.bar.close()
