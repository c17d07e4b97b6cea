"""The data of a measurement (:func:`initmem.sweeps.measure.measure_init_memory`) as its jobs carry it to the
executors: :class:`TensorSplits`, a fingerprint and, for the parallel executors, a file of the three splits' CPU
tensors that each worker loads once (``weights_only=True``) into this process's cache of prepared data."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import torch

from ..base.files import atomic_write
from ..run.data.prepare import PreparedData, SplitData, prepare_tensors
from ..run.loop import resolve_device

__all__ = ["TensorSplits"]

#: Prepared data of this process, by :meth:`TensorSplits.key` (the workers of a parallel measurement fill it once).
_PREPARED: dict[tuple, PreparedData] = {}


@dataclass(frozen=True)
class TensorSplits:
    """The data of a measurement as its jobs carry it: a fingerprint, the device, the train-eval size, and (for the
    parallel executors) a file of the three splits' CPU tensors, loaded with ``weights_only=True`` once per worker."""

    fingerprint: str
    device: str
    train_eval_size: int
    path: Path | None = None

    def key(self, data_seed: int) -> tuple:
        """The key of ``data_seed``'s prepared data in this process's cache."""
        return (self.fingerprint, self.device, self.train_eval_size, data_seed)

    def hold(self, data_seed: int, data: PreparedData) -> None:
        """Keep ``data``, prepared already, as ``data_seed``'s prepared data in this process."""
        _PREPARED[self.key(data_seed)] = data

    @staticmethod
    def release() -> None:
        """Forget every measurement's prepared data in this process (a measurement holds it only while it runs)."""
        _PREPARED.clear()

    def prepared(self, data_seed: int) -> PreparedData:
        """The :class:`~initmem.run.data.prepare.PreparedData` of ``data_seed`` (its train-eval sample and batch order)."""
        key = self.key(data_seed)
        if key not in _PREPARED:
            for other in [k for k in _PREPARED if k[0] != self.fingerprint]:  # a worker keeps one measurement's data
                del _PREPARED[other]
            if self.path is None:
                raise RuntimeError("the data of this measurement was not prepared in this process")
            splits = torch.load(self.path, map_location="cpu", weights_only=True)
            _PREPARED[key] = prepare_tensors(
                splits["train"],
                splits["val"],
                splits["test"],
                resolve_device(self.device),
                self.train_eval_size,
                data_seed,
            )
        return _PREPARED[key]

    def prepare_in_this_process(
        self, data_seeds: Iterable[int], splits: tuple[SplitData, SplitData, SplitData]
    ) -> None:
        """Prepare the data of every data seed here (the ``serial`` executor: no file, no pickling)."""
        for data_seed in dict.fromkeys(data_seeds):
            if self.key(data_seed) not in _PREPARED:
                _PREPARED[self.key(data_seed)] = prepare_tensors(
                    *splits, resolve_device(self.device), self.train_eval_size, data_seed
                )

    @contextlib.contextmanager
    def written_to(self, folder: Path, data: PreparedData):
        """This data with its splits in ``folder/.<fingerprint>.splits.pt`` while the block runs (then deleted)."""
        path = folder / f".{self.fingerprint[:16]}.splits.pt"
        cpu = {
            name: (getattr(data, name).images.cpu(), getattr(data, name).labels.cpu())
            for name in ("train", "val", "test")
        }
        atomic_write(path, lambda handle: torch.save(cpu, handle))
        try:
            yield dataclasses.replace(self, path=path)
        finally:
            path.unlink(missing_ok=True)
