"""The pieces every training loop shares: :func:`initmem.run.training.train` (one model) and
:func:`initmem.run.stacked.train_stacked` (K models as one) are both built from these, so that they set up,
schedule, measure and checkpoint a run in exactly the same way.

* :func:`setup_run` -- a run's threads, device, prepared data and autocast context (:class:`RunSetup`);
  :func:`resolve_device` and :func:`run_device` pick the device;
* :func:`initial_row` -- the epoch-0 measurement, on a copy whose BatchNorm statistics are recalibrated;
* :class:`Schedule` -- the learning rate of every step and the batches of an epoch;
* :class:`TrainingStep` -- the one optimisation step (scheduled learning rate, backward pass, update, forgetting
  clocks, step count) and what it records and checkpoints;
* :class:`DivergenceWatch` -- the divergence rule on every training loss and evaluation; :class:`BatchChecks`
  checks the batches' losses on the device every :data:`DIVERGENCE_CHECK_EVERY` batches (one host sync per check);
* :func:`save_checkpoint` / :func:`read_checkpoint` -- resumable state, written atomically, read back with
  ``torch.load(weights_only=True)``; :func:`checkpoint_due`, :func:`state_mismatch`;
* :func:`guard_memory` -- a failed allocation raises :class:`OutOfMemory`, one line naming what to reduce.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from ..base.bars import auto_tqdm
from ..base.files import atomic_write, set_aside
from .config import ConfigError, RunConfig
from .data.batches import steps_per_epoch, train_batches
from .data.prepare import PreparedData, prepare_data
from .kernels import kernel_parameters
from .metrics import ForgettingClocks
from .optim.schedules import LRSchedule, apply_lr_multiplier, lr_multiplier
from .records import autocast_dtype, eval_batch_size, measure, recalibrated_copy
from .thresholds import DIVERGENCE_FACTOR, exploded

__all__ = [
    "DIVERGENCE_CHECK_EVERY",
    "BatchChecks",
    "DivergenceWatch",
    "OutOfMemory",
    "RunSetup",
    "Schedule",
    "TrainingStep",
    "checkpoint_due",
    "epoch_bar",
    "guard_memory",
    "initial_row",
    "read_checkpoint",
    "resolve_device",
    "run_device",
    "save_checkpoint",
    "setup_run",
    "state_mismatch",
]

log = logging.getLogger(__name__)

#: Training batches between two divergence checks of :class:`BatchChecks` (every epoch's last batch is checked too).
#: It decides when the host waits for the device, never what a run computes: a run that diverges is stopped in the
#: same epoch with the same reason, and a run that does not is bit for bit the same, whatever the interval.
DIVERGENCE_CHECK_EVERY = 50


def epoch_bar(epochs: int, start_epoch: int, show: bool, desc: str) -> Any:
    """The tqdm bar over a run's (or a stack's) epochs, from ``start_epoch`` (after a resume) to ``epochs``; hidden
    unless ``show`` (and by tqdm off a terminal)."""
    return auto_tqdm()(
        total=epochs,
        initial=start_epoch - 1,
        disable=None if show else True,
        desc=desc,
        leave=False,
        dynamic_ncols=True,
    )


def resolve_device(name: str) -> torch.device:
    """``auto`` -> cuda if available else cpu; ``cuda`` without a GPU raises :class:`ConfigError` naming the field."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device: 'cuda' was requested but no CUDA device is available; use 'cpu' or 'auto'")
    return torch.device(name)


def run_device(config: RunConfig) -> torch.device:
    """The device ``config`` trains on (:func:`resolve_device`). A field that changes the run's hash but cannot act
    on that device raises :class:`ConfigError` naming it, rather than being ignored (two cache entries for one
    computation): ``compile``, which is applied on CUDA only."""
    device = resolve_device(config.device)
    if config.compile and device.type != "cuda":
        raise ConfigError(
            f"compile: allowed values on {device.type} are false; got true (torch.compile is applied on CUDA only: it "
            "would change the run's hash but not what it computes); drop --compile (compile: false)"
        )
    return device


@dataclass(frozen=True)
class RunSetup:
    """Where and how a run computes: its device, its data there, and the autocast context of its forward passes
    (:func:`initmem.run.records.autocast_dtype`: bfloat16 on the CPU and on CUDA when ``config.bf16``, else a
    no-op)."""

    device: torch.device
    data: PreparedData
    dtype: torch.dtype | None

    def autocast(self) -> contextlib.AbstractContextManager:
        """A fresh autocast context for one forward pass, on the run's device type."""
        if self.dtype is not None:
            return torch.autocast(self.device.type, dtype=self.dtype)
        return contextlib.nullcontext()


def setup_run(config: RunConfig, data: PreparedData | None = None) -> RunSetup:
    """Apply ``config.num_threads`` (torch's thread count: it changes the numbers, so it is part of the hash),
    resolve the device and prepare the data there (unless ``data`` is given)."""
    if config.num_threads:
        torch.set_num_threads(config.num_threads)
    device = run_device(config)
    if data is None:
        data = prepare_data(config, device)
    dtype = autocast_dtype(config)
    if dtype is torch.bfloat16 and device.type == "cpu" and not native_cpu_bf16():
        log.warning(
            "bf16: this CPU has no native bfloat16 instructions (avx512_bf16 or AMX); autocast emulates them and "
            "trains slower than float32 here (about 1.8x on an AVX2 EPYC)"
        )
    return RunSetup(device=device, data=data, dtype=dtype)


def native_cpu_bf16() -> bool:
    """Whether this CPU computes bfloat16 natively (avx512_bf16 or AMX tiles), where CPU autocast speeds training up
    (about 1.5x at one thread on an avx512_bf16 CPU); without them it is emulated and slower than float32."""
    probes = (getattr(torch.cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"))
    return any(bool(probe()) for probe in probes if probe is not None)  # private probes: absent in some builds


def initial_row(
    model: torch.nn.Module,
    setup: RunSetup,
    config: RunConfig,
    initial: dict[str, torch.Tensor],
    step: TrainingStep,
    loss: str = "cross_entropy",
    kernels: Callable[[torch.nn.Module], dict[str, torch.Tensor]] = kernel_parameters,
) -> tuple[dict[str, float], dict[str, float]]:
    """The epoch-0 row of a run (losses, accuracies, norms, and ``step``'s :meth:`TrainingStep.record` before its
    first step: the first step's lr, step 0 and the zero clocks) and its per-layer norms. Measured on a copy of
    ``model`` whose BatchNorm running statistics are the exact averages over the training sample
    (:func:`initmem.run.records.recalibrated_copy`): a fresh network's statistics do not describe its activations.
    ``model`` itself is not touched."""
    calibrated = recalibrated_copy(model, setup.data.train_eval, eval_batch_size(config))
    row, layer_norms = measure(calibrated, setup.data, config, initial, setup.autocast, loss, kernels)
    row.update(step.record())
    return row, layer_norms


@dataclass(frozen=True)
class Schedule:
    """The learning rate of each global step of a run and the batches of each epoch.

    ``steps_per_epoch`` optimizer steps per epoch (the last incomplete batch is dropped), ``multiplier`` the
    schedule of :func:`initmem.run.optim.schedules.lr_multiplier`; the lr of step ``k`` is
    ``config.lr * multiplier(k)``. Nothing here changes the optimizer on its own: :meth:`TrainingStep.take` calls
    :meth:`apply` before each step.
    """

    config: RunConfig
    steps_per_epoch: int
    multiplier: LRSchedule

    @classmethod
    def of(cls, config: RunConfig, data: PreparedData) -> Schedule:
        n_steps = steps_per_epoch(len(data.train), config.batch_size)
        return cls(config, n_steps, lr_multiplier(config, n_steps))

    def lr(self, step: int) -> float:
        """The learning rate of global step ``step`` (0-based), per step."""
        return self.config.lr * self.multiplier(step)

    def apply(self, optimizer: torch.optim.Optimizer, step: int) -> float:
        """Set every parameter group's learning rate to that of global step ``step`` (0-based): its peak
        ``group["initial_lr"]`` times ``multiplier(step)`` (:func:`initmem.run.optim.schedules.apply_lr_multiplier`).
        Returns the run's lr of that step, :meth:`lr` (per step), for the clocks and the record."""
        factor = self.multiplier(step)
        apply_lr_multiplier(optimizer, factor)
        return self.config.lr * factor

    def batches(self, data: PreparedData, epoch: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        """The training batches ``(images, labels)`` of ``epoch``, ``steps_per_epoch`` of them
        (:func:`initmem.run.data.batches.train_batches` with the run's ``batch_size``, data seed and augmentation)."""
        config = self.config
        return train_batches(data.train, config.batch_size, epoch, config.effective_data_seed, config.augment)


@dataclass
class TrainingStep:
    """The one optimisation step of :func:`initmem.run.training.train` and :func:`initmem.run.stacked.train_stacked`,
    and what the steps taken so far add up to.

    :meth:`take` is the whole update: set the scheduled learning rate of step ``taken`` on ``optimizer``
    (:meth:`Schedule.apply`), clear the gradients, back-propagate the loss, let the optimizer update, add the step to
    the forgetting ``clocks`` (:meth:`initmem.run.metrics.ForgettingClocks.tick` with that lr) and count it. The
    trainers compute the loss (their forward passes differ) and decide whether to take the step (divergence); the
    learning rate, the clocks and the count exist only here. ``taken`` is the number of steps taken (the 0-based index
    of the next one); :meth:`record` is what a recorded epoch adds to its row, :meth:`state` what a checkpoint keeps.
    """

    optimizer: torch.optim.Optimizer
    schedule: Schedule
    clocks: ForgettingClocks
    taken: int = 0

    @classmethod
    def of(cls, config: RunConfig, data: PreparedData, optimizer: torch.optim.Optimizer) -> TrainingStep:
        """The steps of run ``config`` (its :class:`Schedule` over ``data``, zero clocks) with ``optimizer``; for a
        stack, ``config`` is any member (they share everything the steps depend on)."""
        return cls(optimizer, Schedule.of(config, data), ForgettingClocks.for_config(config))

    def take(self, loss: torch.Tensor) -> None:
        """One optimisation step on the gradient of ``loss`` (a scalar tensor: a run's mean loss, a stack's sum of
        its members' mean losses, nats)."""
        lr = self.schedule.apply(self.optimizer, self.taken)  # set this step's learning rate on the optimizer
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.clocks.tick(lr)
        self.taken += 1

    def record(self) -> dict[str, float]:
        """``lr`` (the learning rate of the last step taken, of the first step before any; per step), ``step``
        (steps taken) and the three cumulative clocks ``T_SGD``, ``T_L2``, ``T_adapt``: the schedule's columns of
        a recorded epoch's row."""
        return dict(lr=self.schedule.lr(max(self.taken - 1, 0)), step=float(self.taken), **self.clocks.as_dict())

    def state(self) -> dict[str, Any]:
        """What a checkpoint keeps of the steps: ``step``, the optimizer's state dict and the clocks' sums."""
        return {"step": self.taken, "optimizer": self.optimizer.state_dict(), "clocks": self.clocks.as_dict()}

    def resume(self, state: Mapping[str, Any]) -> None:
        """Continue from a checkpoint's :meth:`state`: the optimizer's state, the clocks' sums and the step count."""
        self.optimizer.load_state_dict(state["optimizer"])
        self.clocks = replace(self.clocks, **state["clocks"])
        self.taken = state["step"]


@dataclass(frozen=True)
class DivergenceWatch:
    """The divergence rule of one run: a loss or the kernel norm that is not finite or exceeds
    :data:`~initmem.run.thresholds.DIVERGENCE_FACTOR` times its epoch-0 value ends the run with ``diverged = 1``.

    ``initial_loss`` is the epoch-0 training loss (nats) and ``initial_norm`` the epoch-0 kernel norm; both come from
    the run's epoch-0 row (:meth:`of`), also after a resume. Each check returns the reason (one line) or ``""``.
    """

    initial_loss: float
    initial_norm: float

    @classmethod
    def of(cls, initial_row: dict[str, float]) -> DivergenceWatch:
        return cls(float(initial_row["train_loss"]), float(initial_row["weight_norm"]))

    @property
    def loss_limit(self) -> float:
        """The largest magnitude a finite loss may reach (nats): :data:`~initmem.run.thresholds.DIVERGENCE_FACTOR`
        times that of ``initial_loss``; infinite where ``initial_loss`` is not finite or zero (then only
        finiteness is checked, as :func:`~initmem.run.thresholds.exploded` does)."""
        initial = self.initial_loss
        return DIVERGENCE_FACTOR * abs(initial) if math.isfinite(initial) and initial != 0 else math.inf

    def batch(self, loss: float, epoch: int) -> str:
        """The reason a training batch's ``loss`` ends the run in ``epoch``, or ``""``."""
        return _reason("a training batch's loss", loss, self.initial_loss, f"in epoch {epoch}")

    def record(self, row: dict[str, float], epoch: int) -> str:
        """The reason the evaluation ``row`` of ``epoch`` ends the run (an exploded loss or kernel norm), or ``""``."""
        checks = [(name, row[name], self.initial_loss) for name in ("train_loss", "val_loss", "test_loss")]
        checks.append(("the kernel norm", row["weight_norm"], self.initial_norm))
        for name, value, initial in checks:
            reason = _reason(name, value, initial, f"at epoch {epoch}")
            if reason:
                return reason
        return ""


@dataclass
class BatchChecks:
    """:meth:`DivergenceWatch.batch` over the training batches of K runs trained together (K = 1 for
    :func:`initmem.run.training.train`, a stack's members for :func:`initmem.run.stacked.train_stacked`), without
    a host sync per batch.

    Each batch's losses (a tensor of K values, nats, on the training device; a scalar for K = 1) are queued with
    :meth:`add`, which says when ``every`` are queued; :meth:`check` then judges the queue in one host sync and
    empties it. The trainers check when :meth:`add` says so, before that batch's step, and after every epoch's last
    step: with ``every = 1`` that is a check before every step. A run's reason is its first exploding batch's,
    exactly as :meth:`DivergenceWatch.batch` of that loss gives it, so the interval decides only how many steps a
    diverging run takes before it stops (those steps are never recorded), not its epoch or its reason.
    """

    watches: Sequence[DivergenceWatch]
    every: int
    queued: list[torch.Tensor] = field(default_factory=list)

    @classmethod
    def of(cls, watches: Sequence[DivergenceWatch]) -> BatchChecks:
        """Checks of ``watches`` every :data:`DIVERGENCE_CHECK_EVERY` batches (read now)."""
        return cls(list(watches), DIVERGENCE_CHECK_EVERY)

    def add(self, losses: torch.Tensor) -> bool:
        """Queue one batch's ``losses`` (K values, or a scalar for K = 1; detached here); whether a check is due."""
        self.queued.append(losses.detach().reshape(len(self.watches)))
        return len(self.queued) >= self.every

    def check(self, epoch: int) -> list[str]:
        """Per run, the reason its first queued loss that explodes ends it in ``epoch`` (:meth:`DivergenceWatch.batch`),
        or ``""``; empties the queue. The rule is evaluated on the device in float64 (the same decisions as in
        Python: float32 losses are exact there) and read with one sync; the losses are copied to the host only when
        one of them explodes."""
        if not self.queued:
            return [""] * len(self.watches)
        values = torch.stack(self.queued).double()  # (batches, K)
        self.queued.clear()
        limits = torch.tensor([w.loss_limit for w in self.watches], dtype=torch.float64, device=values.device)
        if not bool((~torch.isfinite(values) | (values.abs() > limits)).any()):
            return [""] * len(self.watches)
        reasons = [""] * len(self.watches)
        for row in values.cpu().tolist():
            reasons = [reason or watch.batch(value, epoch) for reason, watch, value in zip(reasons, self.watches, row)]
        return reasons


def _reason(name: str, value: float, initial: float, where: str) -> str:
    if not exploded(value, initial):
        return ""
    if not math.isfinite(value):
        return f"{name} is {value} {where}"
    return f"{name} is {value:.3g} {where}, over {DIVERGENCE_FACTOR:g} x its epoch-0 value {initial:.3g}"


def checkpoint_due(path: Path | None, config: RunConfig, epoch: int) -> bool:
    """Whether a checkpoint is saved after ``epoch``: a path was given and ``epoch`` is a multiple of
    ``config.checkpoint_every`` (> 0)."""
    return path is not None and bool(config.checkpoint_every) and epoch % config.checkpoint_every == 0


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """Write ``state`` (plus torch's RNG state as ``torch_rng``) atomically (:func:`initmem.base.files.atomic_write`).

    ``state`` must hold only what ``torch.load(weights_only=True)`` reads back: tensors, numbers, strings,
    and lists, tuples and dicts of them (a run history is stored as its dict).
    """
    state = {**state, "torch_rng": torch.get_rng_state()}
    atomic_write(path, lambda handle: torch.save(state, handle))


def read_checkpoint(path: Path | None, owner: str, mismatch: Callable[[dict[str, Any]], str]) -> dict[str, Any] | None:
    """The state saved at ``path`` if it is a readable checkpoint for which ``mismatch(state)`` finds nothing wrong
    (returns ``""``; else why it does not fit), else None. A state that is returned has already restored torch's RNG
    state from it; nothing is restored from one that is refused.

    Loads with ``weights_only=True``: a file holding anything but tensors and plain containers (for example a
    planted object whose unpickling would run code) is refused without executing it. A refused, corrupt or
    foreign file is reported in one warning line and moved aside to ``<path>.rejected`` (so the run starts
    fresh and the file can be inspected); ``owner`` names the run or stack in that line.
    """
    if path is None or not path.exists():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(state, dict):
            raise TypeError(f"holds a {type(state).__name__}, not a checkpoint dict")
        reason = mismatch(state) or None
    except Exception as exc:  # noqa: BLE001 - anything unreadable is set aside, never executed or trusted
        reason = f"unreadable or unsafe ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    if reason is None:
        torch.set_rng_state(state["torch_rng"])
        return state
    log.warning("ignoring checkpoint %s of %s: %s; %s, training starts fresh", path, owner, reason, set_aside(path))
    return None


def state_mismatch(
    saved: Any, model: torch.nn.Module, optimizer: torch.optim.Optimizer | None = None, saved_optimizer: Any = None
) -> str:
    """Why a saved model state (and optimizer state) does not fit ``model`` (and ``optimizer``), or ``""``: a key
    missing or unknown, a tensor of another shape, parameter groups of other sizes. Checked before anything is loaded,
    so that a checkpoint that would fail half-way through ``load_state_dict`` is set aside instead."""
    live = model.state_dict()
    if not isinstance(saved, Mapping):
        return "it holds no model state"
    missing, unknown = [k for k in live if k not in saved], [k for k in saved if k not in live]
    if missing or unknown:
        what, keys = ("lacks", missing) if missing else ("has the unknown", unknown)
        more = f" and {len(keys) - 1} more" if len(keys) > 1 else ""
        return f"its model state {what} {keys[0]!r}{more} (it does not match the model)"
    for key, tensor in live.items():
        other = saved[key]
        if not isinstance(other, torch.Tensor) or other.shape != tensor.shape:
            shape = tuple(other.shape) if isinstance(other, torch.Tensor) else type(other).__name__
            return f"its {key!r} is {shape}, the model's {tuple(tensor.shape)} (it does not match the model)"
    if optimizer is None:
        return ""
    groups = saved_optimizer.get("param_groups") if isinstance(saved_optimizer, Mapping) else None
    sizes = [len(g["params"]) for g in optimizer.state_dict()["param_groups"]]
    if not isinstance(groups, list) or [len(g.get("params", ())) for g in groups if isinstance(g, Mapping)] != sizes:
        return "its optimizer state has other parameter groups than the optimizer (it does not match)"
    return ""


class OutOfMemory(MemoryError):
    """A run needs more memory than its device has; the message is one line (``memory: ...``) naming the run's size
    and what to reduce."""


#: The allocator messages that mean "out of memory" (CPU and CUDA).
_OOM_PATTERNS = ("can't allocate memory", "out of memory", "cannot allocate memory")


def guard_memory(trainer: Callable) -> Callable:
    """Decorate a trainer whose first argument is a :class:`RunConfig` (or a sequence of them): an allocation that
    fails (``torch.OutOfMemoryError``, ``MemoryError``, the CPU allocator's ``RuntimeError``) is re-raised as
    :class:`OutOfMemory` with one line; other errors pass unchanged."""

    @functools.wraps(trainer)
    def guarded(config: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return trainer(config, *args, **kwargs)
        except (MemoryError, RuntimeError) as exc:
            text = str(exc)
            if isinstance(exc, OutOfMemory) or not (
                isinstance(exc, (MemoryError, torch.OutOfMemoryError)) or any(p in text.lower() for p in _OOM_PATTERNS)
            ):
                raise
            first = config[0] if isinstance(config, (list, tuple)) else config
            raise OutOfMemory(_oom_line(first, text)) from None

    return guarded


def _oom_line(config: RunConfig, text: str) -> str:
    asked = re.search(r"allocate (\d+) bytes", text) or re.search(r"allocate ([\d.]+ [KMGT]iB)", text)
    size = ""
    if asked is not None:
        size = asked.group(1)
        size = f" (it asked for {int(size) / 2**30:.1f} GiB at once)" if size.isdigit() else f" (it asked for {size})"
    return (
        f"memory: the run does not fit in the memory of device {config.device!r}{size}: {config.model} at width "
        f"{config.width}, batch_size {config.batch_size}, image_size {config.image_size}; reduce width or "
        f"batch_size"
    )
