"""Paper scale in one shot: throughput, stacked-vs-sequential parity and a reduced paper-scale 01 on one GPU.

Within a hard wall-time budget (default 8 minutes, counted from the start of the script), in this order:

1. the device, torch/CUDA versions, and ``--throughput-seconds`` (20 s) of throughput probes: training images/s
   of ResNet-9 at width 64 sequentially (one model) and stacked (K sigma_w models as one, counted per model
   image), in fp32 and bf16, and sequential with ``torch.compile`` (bf16/compile on CUDA only);
2. stacked-vs-sequential parity on the device: ``--parity-steps`` SGD steps of two sigma_w values, stacked and
   one by one; the largest relative difference of the recorded losses and norms must be <= ``--parity-rtol``
   (default 2e-2: cuDNN's TF32 convolutions and max-pool near-ties move a few steps by ~1e-3, a bug by O(1));
3. a reduced paper-scale experiment 01: the optimizers of :data:`OPTIMIZER_TABLE` x ``--sigmas`` (>= 4 values
   in [0.1, 2.5]) x one seed, on the full training set with the paper preset's split (45,000 train / 5,000
   validation / 10,000 test), batch 128, no augmentation, at the largest epoch count that the measured
   throughput fits into what is left of the budget (at most ``--max-epochs``), with the stacked trainer where
   it was faster and parity held. Every finished run is written at once; before each group of runs the clock
   is checked against the group's estimate (scaled by how far the earlier groups overran theirs), a group that
   would not fit stops the run cleanly, and a timer interrupts a group that overruns the budget anyway;
4. ordinary run files (``initmem.sweeps.write_run``: checksum, config, device, provenance) in
   ``<out>/01_optimizers/runs/``, the combined Dataset ``<out>/01_optimizers.nc`` (rewritten after every group,
   optimizers with every sigma_w finished), ``<out>/oneshot.json`` and the one-page ``<out>/summary.txt``, which
   is also printed. Re-running the same command reuses the finished runs.

    benchmarks/gpu_oneshot.sh                      # on the GPU machine: results in $OUT or results/gpu
    python benchmarks/gpu_oneshot.py --dry-run --out /tmp/oneshot   # CPU, synthetic data, seconds

``--dry-run`` runs every step with tiny sizes on the CPU (synthetic data, width 4, 16 px); the test suite runs
it (tests/test_gpu_oneshot.py). ``initmem.study.gpu_results.paper_scale_column("results/gpu")`` turns the folder into
the ledger's "paper scale (GPU)" column.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as _dt
import json
import logging
import math
import os
import platform
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from initmem.run.config import ConfigError, RunConfig
from initmem.run.data import PreparedData
from initmem.study.gpu_results import EXPERIMENT, GPU_PRESET, MANIFEST, SUMMARY, optimizer_summary, paper_scale_column
from initmem.study.costs import EVAL_SPEEDUP, run_images
from initmem.run.records import git_commit, hardware_description, recorded_epochs
from initmem.run.stacked import SEQUENTIAL_OPTIMIZERS, stack_groups, train_stacked
from initmem.sweeps.spec import SweepSpec
from initmem.sweeps.combine import combine_runs
from initmem.sweeps.store import load_run, run_path, write_run
from initmem.sweeps.executors import prepared_data
from initmem.run.loop import resolve_device
from initmem.run.training import train

log = logging.getLogger("gpu_oneshot")


# ==============================================================================================
# What step 3 runs
# ==============================================================================================
@dataclasses.dataclass(frozen=True)
class OptimizerRow:
    """One optimizer of step 3: learning rate (per step), decay lambda, Muon's AdamW-group lr, logit factor."""

    optimizer: str
    lr: float
    weight_decay: float = 0.0
    aux_lr: float = 0.001
    logit_scale: float = 1.0


#: The optimizers of step 3, in the order they run (SGD and an adaptive optimizer first, so that a run cut short
#: still measures C1 and C2). They follow the recalibrated cpu preset of 01_optimizers (batch 64, ResNet-9
#: logit_scale 1: SGD 0.02, SGD+momentum 0.002 (mu 0.9), Adam 8e-3, AdamW 8e-3 with decoupled decay 0.05, Muon
#: 0.02 with its AdamW group at 8e-3) rescaled to the paper's batch 128: plain SGD and SGD+momentum scale the lr
#: linearly with the batch size (x2), which keeps SGD's per-epoch clock (n/b)(1/b) lr^2 and its noise scale lr/b
#: unchanged; the adaptive optimizers (Adam, AdamW, Muon and its AdamW group) keep their lr (their step size does
#: not scale with the gradient's noise), and the decay strengths are unchanged. Override a row with
#: ``--opt NAME:lr=...,weight_decay=...,aux_lr=...,logit_scale=...``; choose and order rows with ``--optimizers``.
OPTIMIZER_TABLE: tuple[OptimizerRow, ...] = (
    OptimizerRow("sgd", lr=0.04),
    OptimizerRow("muon", lr=0.02, aux_lr=0.008),
    OptimizerRow("adam", lr=0.008),
    OptimizerRow("adamw", lr=0.008, weight_decay=0.05),
    OptimizerRow("sgd_momentum", lr=0.004),
)
#: sigma_w grid of step 3: both ends of the paper's [0.1, 2.5] and the cpu preset's 0.25 and 1.
DEFAULT_SIGMAS = (0.1, 0.25, 1.0, 2.5)
#: The paper preset's data and model (initmem.study.presets, "paper"): full training set minus 5,000 for validation.
PAPER_SCALE = dict(
    model="resnet9", width=64, data=None, image_size=32, train_size=None, val_size=5000, test_size=None,
    train_eval_size=5000, augment=False, batch_size=128, schedule="constant", warmup_epochs=1.0, eval_every=1,
)  # fmt: skip
#: --dry-run: everything tiny, on the CPU, synthetic data (seconds).
DRY_RUN = dict(
    model="resnet9", width=4, data="synthetic", image_size=16, train_size=200, val_size=100, test_size=100,
    train_eval_size=100, augment=False, batch_size=50, schedule="constant", warmup_epochs=0.0, eval_every=1,
    num_threads=1,
)  # fmt: skip
#: Seconds per run file beyond training and evaluation (writing, combining, Python), added to every estimate.
PER_RUN_OVERHEAD_S = 1.0
#: The longest a compile probe may take (seconds) before it is abandoned.
COMPILE_PROBE_LIMIT_S = 90.0
#: Run statuses (in oneshot.json) of runs whose file is there.
DONE = ("finished", "cached")
#: Fields of a run that the stacked and sequential parity runs compare (relative difference).
PARITY_VARIABLES = ("train_loss", "val_loss", "test_loss", "weight_norm", "dist_from_init")


# ==============================================================================================
# The budget
# ==============================================================================================
class BudgetExceeded(Exception):
    """The wall-time budget ran out while something was running."""


class Budget:
    """A wall-time budget of ``seconds`` from construction, read from ``clock`` (seconds, monotonic).

    ``hard``: :meth:`guard` arms a real timer (SIGALRM) that interrupts the guarded code when the budget runs
    out. Only meaningful with the real clock; tests inject a fake clock with ``hard=False``.
    """

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic, hard: bool = True) -> None:
        self.seconds, self.clock = float(seconds), clock
        self.start = clock()
        self.hard = hard

    def elapsed(self) -> float:
        return self.clock() - self.start

    def remaining(self) -> float:
        return self.seconds - self.elapsed()

    @contextlib.contextmanager
    def guard(self, limit: float | None = None, what: str = "the budget"):
        """Raise :class:`BudgetExceeded` inside the block once ``limit`` seconds (default: the remaining budget)
        have passed. A no-op where no timer can be armed (not the main thread, no SIGALRM, ``hard`` False)."""
        seconds = self.remaining() if limit is None else min(limit, self.remaining())
        if not self.hard or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
            yield
            return
        if seconds <= 0:
            raise BudgetExceeded(f"{what}: no time left")

        def expire(signum, frame):  # noqa: ARG001
            raise BudgetExceeded(f"{what}: {seconds:.0f} s ran out")

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


# ==============================================================================================
# Arguments
# ==============================================================================================
class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def _float_list(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError("expected at least one number")
    return values


def _positive(kind: type) -> Callable[[str], Any]:
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {kind.__name__}, got {text!r}") from None
        if not value > 0 or (isinstance(value, float) and not math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        return value

    return parse


_OPT_KEYS = ("lr", "weight_decay", "aux_lr", "logit_scale")


def parse_override(text: str) -> tuple[str, dict[str, float]]:
    """``NAME:key=value,key=value`` -> (NAME, {key: value}) for :data:`OPTIMIZER_TABLE` rows."""
    name, sep, rest = text.partition(":")
    if not sep or not name or not rest:
        raise argparse.ArgumentTypeError(f"expected NAME:key=value[,key=value], got {text!r}")
    values: dict[str, float] = {}
    for item in rest.split(","):
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq or key not in _OPT_KEYS:
            raise argparse.ArgumentTypeError(f"{text!r}: keys are {', '.join(_OPT_KEYS)}, got {item!r}")
        try:
            value = float(raw)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: {key} must be a number, got {raw!r}") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and key != "weight_decay"):
            raise argparse.ArgumentTypeError(f"{text!r}: {key} must be {'>= 0' if key == 'weight_decay' else '> 0'}")
        values[key] = value
    return name.strip(), values


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gpu_oneshot.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("results") / GPU_PRESET,
                        help="folder of the results (default results/gpu)")  # fmt: skip
    parser.add_argument("--budget-min", type=_positive(float), default=None,
                        help="hard wall-time budget in minutes (default 8; --dry-run 2)")  # fmt: skip
    parser.add_argument("--dry-run", action="store_true", help="tiny sizes on the CPU with synthetic data (seconds)")
    parser.add_argument("--data", default=None, help="CIFAR-10 location (default: initmem's search; 'synthetic')")
    parser.add_argument("--device", default=None, choices=("auto", "cpu", "cuda"),
                        help="default cuda (cpu with --dry-run)")  # fmt: skip
    parser.add_argument("--allow-cpu", action="store_true", help="run the full-size protocol without a GPU")
    parser.add_argument("--sigmas", type=_float_list, default=list(DEFAULT_SIGMAS),
                        help=f"comma-separated sigma_w values (default {','.join(map(str, DEFAULT_SIGMAS))})")  # fmt: skip
    parser.add_argument("--optimizers", default=None,
                        help="comma-separated subset of the table's optimizers, in run order (default: all)")  # fmt: skip
    parser.add_argument("--opt", action="append", type=parse_override, default=[], metavar="NAME:key=value,...",
                        help=f"override a row of OPTIMIZER_TABLE (keys {', '.join(_OPT_KEYS)}); repeatable")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--width", type=_positive(int), default=None, help="ResNet-9 width (default 64; dry run 4)")
    parser.add_argument("--max-epochs", type=_positive(int), default=None, help="at most this many epochs (200; dry 2)")
    parser.add_argument("--min-epochs", type=_positive(int), default=1,
                        help="run at least this many epochs even if the plan says fewer (default 1)")  # fmt: skip
    parser.add_argument("--eval-every", type=_positive(int), default=1, help="record metrics every N epochs")
    parser.add_argument("--mode", default="auto", choices=("auto", "stacked", "sequential"),
                        help="trainer of step 3 (auto: stacked where faster and parity held)")  # fmt: skip
    parser.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16"),
                        help="step 3's precision (auto: the faster measured one; bf16 only on CUDA)")  # fmt: skip
    parser.add_argument("--compile", action="store_true", help="torch.compile the sequential runs of step 3 (CUDA)")
    parser.add_argument("--no-compile-probe", action="store_true", help="skip measuring torch.compile in step 1")
    parser.add_argument("--throughput-seconds", type=_positive(float), default=None,
                        help="time of all throughput probes together (default 20; dry run 2)")  # fmt: skip
    parser.add_argument("--parity-steps", type=_positive(int), default=5)
    parser.add_argument("--parity-rtol", type=_positive(float), default=2e-2)
    parser.add_argument("--safety", type=_positive(float), default=0.85,
                        help="plan step 3 to fill this fraction of the remaining budget (default 0.85)")  # fmt: skip
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    dry = args.dry_run
    args.budget_s = 60.0 * (args.budget_min if args.budget_min is not None else (2.0 if dry else 8.0))
    args.device = args.device or ("cpu" if dry else "cuda")
    args.max_epochs = args.max_epochs or (2 if dry else 200)
    args.throughput_seconds = args.throughput_seconds or (2.0 if dry else 20.0)
    if args.safety > 1:
        parser.error(f"--safety: must be in (0, 1], got {args.safety}")
    if args.min_epochs > args.max_epochs:
        parser.error(f"--min-epochs ({args.min_epochs}) exceeds --max-epochs ({args.max_epochs})")
    if len(set(args.sigmas)) != len(args.sigmas) or any(s <= 0 for s in args.sigmas):
        parser.error(f"--sigmas: need distinct positive values, got {args.sigmas}")
    if len(args.sigmas) < 2:
        parser.error("--sigmas: need at least two values to measure a spread")
    table = {row.optimizer: row for row in OPTIMIZER_TABLE}
    names = [n.strip() for n in args.optimizers.split(",") if n.strip()] if args.optimizers else list(table)
    for name in [*names, *(n for n, _ in args.opt)]:
        if name not in table:
            parser.error(f"unknown optimizer {name!r}; the table has {', '.join(table)}")
    if len(set(names)) != len(names) or not names:
        parser.error(f"--optimizers: need distinct names, got {args.optimizers!r}")
    for name, values in args.opt:
        table[name] = dataclasses.replace(table[name], **values)
    args.table = [table[name] for name in names]
    if args.device == "cuda" and not torch.cuda.is_available() and not args.allow_cpu:
        parser.error("--device cuda: no CUDA device here; use --dry-run (or --device cpu --allow-cpu)")
    if args.device == "cpu" and not dry and not args.allow_cpu:
        parser.error("--device cpu: the full-size protocol is a GPU job; add --allow-cpu or use --dry-run")
    if args.device == "cuda" and not torch.cuda.is_available():
        args.device = "cpu"  # --allow-cpu
    try:
        args.base = base_config(args)
        for row in args.table:
            row_config(args.base, row, args.sigmas[0], args.seed)
    except ConfigError as exc:
        parser.error(str(exc))
    return args


def base_config(args: argparse.Namespace) -> RunConfig:
    """The fields shared by every run of step 3 (epochs are set by the plan)."""
    sizes = dict(DRY_RUN if args.dry_run else PAPER_SCALE)
    if args.width:
        sizes["width"] = args.width
    if args.data is not None:
        sizes["data"] = args.data
    sizes.update(eval_every=args.eval_every, device=args.device, progress=False, seed=args.seed)
    return RunConfig.from_dict(sizes)


def row_config(base: RunConfig, row: OptimizerRow, sigma_w: float, seed: int, **changes: Any) -> RunConfig:
    return base.replace(optimizer=row.optimizer, lr=row.lr, weight_decay=row.weight_decay, aux_lr=row.aux_lr,
                        logit_scale=row.logit_scale, sigma_w=sigma_w, seed=seed, **changes)  # fmt: skip


# ==============================================================================================
# Step 1: environment and throughput
# ==============================================================================================
def environment(device: torch.device) -> dict[str, Any]:
    info = {
        "device": str(device), "hardware": hardware_description(device), "torch": str(torch.__version__),
        "cuda": str(torch.version.cuda or ""), "cudnn": str(torch.backends.cudnn.version() or ""),
        "python": sys.version.split()[0], "platform": platform.platform(),
        # a bare GPU machine gets the working tree without .git: gpu_oneshot.sh --prepare carries the commit
        "git_commit": git_commit() or os.environ.get("INITMEM_ONESHOT_COMMIT", ""),
    }  # fmt: skip
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info["gpu_memory_gib"] = round(props.total_memory / 2**30, 1)
    return info


def subset(data: PreparedData, n_train: int, n_eval: int) -> PreparedData:
    """The first ``n_train`` training and ``n_eval`` evaluation images of each split (for probes)."""
    take = lambda ds, n: ds.subset(np.arange(min(n, len(ds))))  # noqa: E731
    return PreparedData(train=take(data.train, n_train), train_eval=take(data.train_eval, n_eval),
                        val=take(data.val, n_eval), test=take(data.test, n_eval), split=data.split, source=data.source)  # fmt: skip


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _train_group(configs: list[RunConfig], data: PreparedData, stacked: bool):
    """Train ``configs`` (a stack if ``stacked`` and more than one, else one by one); returns the Datasets."""
    if stacked and len(configs) > 1:
        return train_stacked(configs, data=data, progress=False)
    return [train(c, data=data, progress=False) for c in configs]


@dataclasses.dataclass
class Probe:
    """One throughput figure: training images per second, counted per model (a stack of K counts K per image)."""

    name: str
    stacked: int
    bf16: bool
    compile: bool
    images_per_s: float = math.nan
    seconds: float = math.nan
    first_call_s: float = math.nan
    note: str = ""


def probe_throughput(probe: Probe, configs: list[RunConfig], data: PreparedData, seconds: float,
                     device: torch.device, budget: Budget) -> Probe:  # fmt: skip
    """Fill ``probe``: one short call (warm-up, compilation; timed as ``first_call_s``), then one call sized to take
    about ``seconds``. Evaluation splits are one batch, so the figure is training throughput."""
    batch = configs[0].batch_size
    n_eval = batch

    def timed(steps: int) -> float:
        part = subset(data, steps * batch, n_eval)
        cs = [c.replace(epochs=1, eval_every=1, warmup_epochs=0.0) for c in configs]
        _sync(device)
        t0 = time.perf_counter()
        _train_group(cs, part, stacked=probe.stacked > 1)
        _sync(device)
        return time.perf_counter() - t0

    limit = COMPILE_PROBE_LIMIT_S if probe.compile else max(4 * seconds, 30.0)
    try:
        with budget.guard(limit, what=f"probe {probe.name}"):
            first_steps = 3
            probe.first_call_s = timed(first_steps)
            rough = len(configs) * first_steps * batch / probe.first_call_s
            max_steps = max(1, len(data.train) // batch)
            steps = int(min(max_steps, max(5, seconds * rough / (len(configs) * batch))))
            probe.seconds = timed(steps)
            probe.images_per_s = len(configs) * steps * batch / probe.seconds
    except BudgetExceeded as exc:
        probe.note = f"abandoned ({exc})"
    except Exception as exc:  # noqa: BLE001 - a failing variant is reported, the others go on
        probe.note = f"failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        log.warning("throughput probe %s failed: %s", probe.name, probe.note)
    return probe


def throughput(args: argparse.Namespace, data: PreparedData, device: torch.device, budget: Budget) -> list[Probe]:
    """Step 1: the probes (SGD, the first ``len(sigmas)`` sigma_w values for a stack)."""
    sgd = next((r for r in args.table if r.optimizer == "sgd"), OptimizerRow("sgd", lr=0.04))
    k = len(args.sigmas)
    cuda = device.type == "cuda"
    probes = [Probe("sequential fp32", 1, False, False), Probe(f"stacked x{k} fp32", k, False, False)]
    if cuda:
        probes += [Probe("sequential bf16", 1, True, False), Probe(f"stacked x{k} bf16", k, True, False)]
        if not args.no_compile_probe:
            probes += [Probe("sequential fp32 compile", 1, False, True), Probe("sequential bf16 compile", 1, True, True)]
    share = args.throughput_seconds / len(probes)
    for probe in probes:
        configs = [row_config(args.base, sgd, s, args.seed, bf16=probe.bf16, compile=probe.compile)
                   for s in args.sigmas[: probe.stacked]]  # fmt: skip
        probe_throughput(probe, configs, data, share, device, budget)
        log.info("throughput %-24s %10.0f img/s%s", probe.name, probe.images_per_s, f"  ({probe.note})" if probe.note else "")
    if not cuda:
        probes += [Probe("bf16 / compile", 0, True, True, note="n/a: CUDA only")]
    return probes


# ==============================================================================================
# Step 2: parity
# ==============================================================================================
def parity(args: argparse.Namespace, data: PreparedData, device: torch.device, budget: Budget) -> dict[str, Any]:
    """Step 2: ``parity_steps`` SGD steps of the smallest and largest sigma_w, stacked and one by one (NCHW, as
    the stacked model is), in fp32. Returns the largest relative difference per variable and ``ok``."""
    sgd = next((r for r in args.table if r.optimizer == "sgd"), OptimizerRow("sgd", lr=0.04))
    sigmas = [min(args.sigmas), max(args.sigmas)]
    configs = [row_config(args.base, sgd, s, args.seed, epochs=1, warmup_epochs=0.0, channels_last=False)
               for s in sigmas]  # fmt: skip
    batch = configs[0].batch_size
    part = subset(data, args.parity_steps * batch, max(batch, 500))
    result: dict[str, Any] = {"steps": args.parity_steps, "sigma_w": sigmas, "rtol": args.parity_rtol, "precision": "fp32"}
    try:
        with budget.guard(max(60.0, 10 * args.throughput_seconds), what="parity check"):
            stacked = train_stacked(configs, data=part, progress=False)
            alone = [train(c, data=part, progress=False) for c in configs]
    except Exception as exc:  # noqa: BLE001 - reported; step 3 then trains sequentially
        result.update(ok=False, error=f"{type(exc).__name__}: {exc}")
        log.warning("parity check failed to run: %s", result["error"])
        return result
    worst: dict[str, float] = {}
    for a, b in zip(stacked, alone):
        for name in PARITY_VARIABLES:
            x, y = np.asarray(a[name].values, float), np.asarray(b[name].values, float)
            rel = np.abs(x - y) / np.maximum(np.abs(y), 1e-12)
            worst[name] = max(worst.get(name, 0.0), float(np.nanmax(rel)) if np.isfinite(rel).any() else math.inf)
    result["max_rel_diff"] = worst
    result["ok"] = bool(all(v <= args.parity_rtol for v in worst.values()))
    log.info("parity (%d steps, sigma_w %s): max relative difference %.2e (%s, tolerance %.0e)", args.parity_steps,
             sigmas, max(worst.values()), "ok" if result["ok"] else "FAILED", args.parity_rtol)  # fmt: skip
    return result


# ==============================================================================================
# Step 3: plan and run
# ==============================================================================================
def choose_trainer(args: argparse.Namespace, probes: list[Probe], parity_ok: bool, cuda: bool) -> dict[str, Any]:
    """Mode (stacked/sequential) and precision of step 3, with the rates (img/s per model) it plans with."""
    rate = {(p.stacked > 1, p.bf16): p.images_per_s for p in probes if not p.compile and p.stacked >= 1}
    ok = lambda v: v is not None and math.isfinite(v) and v > 0  # noqa: E731
    precisions = {"fp32": [False], "bf16": [True], "auto": [False, True] if cuda else [False]}[args.precision]
    if args.precision == "bf16" and not cuda:
        precisions = [False]
    modes = {"stacked": [True], "sequential": [False], "auto": [False, True] if parity_ok else [False]}[args.mode]
    options = [(rate.get((m, p)), m, p) for m in modes for p in precisions if ok(rate.get((m, p)))]
    if not options:
        raise RuntimeError("no throughput figure to plan with: every probe failed (see the log)")
    best_rate, stacked, bf16 = max(options)
    seq_rate = rate.get((False, bf16))
    return {"mode": "stacked" if stacked else "sequential", "bf16": bool(bf16),
            "stacked_rate": best_rate if stacked else math.nan,
            "sequential_rate": seq_rate if ok(seq_rate) else best_rate,
            "compile": bool(args.compile and cuda)}  # fmt: skip


def run_seconds(config: RunConfig, n: dict[str, int], rate: float, k: int = 1) -> float:
    """Estimated seconds of ``k`` runs of ``config`` trained together at ``rate`` training images/s per model:
    training, evaluation (forward-only, :data:`initmem.study.presets.EVAL_SPEEDUP` times cheaper per image) and
    :data:`PER_RUN_OVERHEAD_S` per run."""
    trained, evaluated = run_images(config.epochs, n["train"], config.batch_size, len(recorded_epochs(config)),
                                    n["eval"], n["train_eval"])  # fmt: skip
    return k * ((trained + evaluated / EVAL_SPEEDUP) / rate + PER_RUN_OVERHEAD_S)


def make_groups(configs_by_opt: dict[str, list[RunConfig]], mode: str) -> list[list[RunConfig]]:
    """Groups in run order: under ``stacked`` one stack per optimizer (Muon one run at a time,
    :func:`initmem.run.stacked.stack_groups`), under ``sequential`` one run per group."""
    groups: list[list[RunConfig]] = []
    for configs in configs_by_opt.values():
        groups += stack_groups(configs) if mode == "stacked" else [[c] for c in configs]
    return groups


def group_seconds(group: list[RunConfig], n: dict[str, int], trainer: dict[str, Any]) -> float:
    stacked = len(group) > 1
    rate = trainer["stacked_rate"] if stacked else trainer["sequential_rate"]
    return run_seconds(group[0], n, rate, k=len(group))


def plan_epochs(estimate: Callable[[int], float], available_s: float, max_epochs: int, min_epochs: int = 1) -> int:
    """The largest epoch count E in [min_epochs, max_epochs] with ``estimate(E) <= available_s`` (``estimate``
    increasing in E); ``min_epochs`` if none fits."""
    lo, hi = min_epochs, max_epochs
    if estimate(lo) > available_s:
        return min_epochs
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate(mid) <= available_s:
            lo = mid
        else:
            hi = mid - 1
    return lo


def stacked_size(group: list[RunConfig]) -> int:
    """K of the file name (:func:`initmem.sweeps.run_path`): the stack size, 0 for runs trained alone."""
    return len(group) if len(group) > 1 and group[0].optimizer not in SEQUENTIAL_OPTIMIZERS else 0


def build_spec(args: argparse.Namespace, epochs: int, trainer: dict[str, Any], rows: Sequence[OptimizerRow]) -> SweepSpec:
    """The sweep spec of step 3 (same shape as notebook 01's): grid sigma_w x seed, zip over the rows."""
    warmup = min(args.base.warmup_epochs, float(epochs))
    base = args.base.replace(epochs=epochs, warmup_epochs=warmup, bf16=trainer["bf16"],
                             compile=trainer["compile"] and trainer["mode"] == "sequential").to_dict()  # fmt: skip
    for name in ("sigma_w", "seed", "optimizer", "lr", "weight_decay", "aux_lr", "logit_scale"):
        base.pop(name)
    zipped = {"optimizer": [r.optimizer for r in rows], "lr": [r.lr for r in rows],
              "weight_decay": [r.weight_decay for r in rows], "aux_lr": [r.aux_lr for r in rows],
              "logit_scale": [r.logit_scale for r in rows]}  # fmt: skip
    return SweepSpec.from_dict({"base": base, "grid": {"sigma_w": list(args.sigmas), "seed": [args.seed]}, "zip": zipped})


def run_experiment(args: argparse.Namespace, data: PreparedData, trainer: dict[str, Any], budget: Budget,
                   manifest: dict[str, Any], save: Callable[[], None]) -> None:  # fmt: skip
    """Step 3: plan the epochs, then train group by group, saving each run as soon as it finishes."""
    n = {"train": len(data.train), "eval": len(data.train_eval) + len(data.val) + len(data.test),
         "train_eval": len(data.train_eval)}  # fmt: skip
    available = args.safety * budget.remaining()
    shape = make_groups(_configs_by_optimizer(build_spec(args, 1, trainer, args.table)), trainer["mode"])

    def total(epochs: int) -> float:
        warmup = min(args.base.warmup_epochs, float(epochs))
        return sum(group_seconds([c.replace(epochs=epochs, warmup_epochs=warmup) for c in g], n, trainer) for g in shape)

    epochs = plan_epochs(total, available, args.max_epochs, args.min_epochs)
    spec = build_spec(args, epochs, trainer, args.table)
    groups = make_groups(_configs_by_optimizer(spec), trainer["mode"])
    manifest["plan"] = {**trainer, "epochs": epochs, "estimated_s": total(epochs), "available_s": available,
                        "remaining_at_plan_s": budget.remaining(), "images": n, "groups": len(groups),
                        "fits": total(epochs) <= available}  # fmt: skip
    manifest["spec"] = spec.to_dict()
    log.info("plan: %d epochs, %s, %s, %d groups, estimated %.0f s of %.0f s available",
             epochs, trainer["mode"], "bf16" if trainer["bf16"] else "fp32", len(groups), total(epochs), available)  # fmt: skip
    runs_dir = args.out / EXPERIMENT / "runs"
    runs = manifest["runs"] = []
    overrun = 1.0  # measured / estimated seconds of the groups so far (>= 1): scales the next estimates
    stop: str | None = None
    for group in groups:
        k = stacked_size(group)
        paths = [run_path(runs_dir, c, stacked=k) for c in group]
        entries = [{"optimizer": c.optimizer, "sigma_w": c.sigma_w, "hash": c.hash(), "file": str(p.relative_to(args.out)),
                    "stacked": k} for c, p in zip(group, paths)]  # fmt: skip
        runs.extend(entries)
        if stop is not None:
            for e in entries:
                e["status"] = f"skipped: {stop}"
            continue
        if all(load_run(p, c) is not None for p, c in zip(paths, group)):
            for e in entries:
                e["status"] = "cached"
            continue
        estimate = group_seconds(group, n, trainer) * overrun
        if estimate > budget.remaining():
            stop = (f"budget: the group needs ~{estimate:.0f} s, {max(0.0, budget.remaining()):.0f} s left")
            log.warning("stopping before %s x%d: %s", group[0].optimizer, len(group), stop)
            for e in entries:
                e["status"] = f"skipped: {stop}"
            continue
        t0 = budget.elapsed()
        try:
            with budget.guard(what=f"{group[0].optimizer} x{len(group)}"):
                datasets = _train_group(group, data, stacked=k > 1)
                for ds, path, e in zip(datasets, paths, entries):
                    write_run(ds, path)
                    e["status"] = "finished"
                    e["wall_time_s"] = float(ds["wall_time_s"])
        except BudgetExceeded as exc:
            stop = f"interrupted: {exc}"
            log.warning("%s", stop)
            for e in entries:
                e.setdefault("status", stop)
            save()
            continue
        seconds = budget.elapsed() - t0
        overrun = max(overrun, seconds / max(group_seconds(group, n, trainer), 1e-9))
        for e in entries:
            e["group_seconds"] = seconds
            e["estimated_s"] = estimate
        log.info("finished %s x%d in %.1f s (estimated %.1f s)", group[0].optimizer, len(group), seconds, estimate)
        save()
    manifest["status"] = "complete" if stop is None else "partial"


def _configs_by_optimizer(spec: SweepSpec) -> dict[str, list[RunConfig]]:
    out: dict[str, list[RunConfig]] = {}
    for coords, config in spec.configs():
        out.setdefault(coords["optimizer"], []).append(config)
    return out


# ==============================================================================================
# Step 4: files and summary
# ==============================================================================================
def write_combined(args: argparse.Namespace, manifest: dict[str, Any]) -> Path | None:
    """Rewrite ``<out>/01_optimizers.nc`` from the optimizers whose every run finished (or was cached)."""
    if "spec" not in manifest:
        return None
    full = SweepSpec.from_dict(manifest["spec"])
    done = {(e["optimizer"], e["sigma_w"]): e for e in manifest.get("runs", []) if e.get("status") in DONE}
    rows = [r for r in args.table if all((r.optimizer, s) in done for s in full.grid["sigma_w"])]
    path = args.out / f"{EXPERIMENT}.nc"
    if not rows:
        path.unlink(missing_ok=True)
        return None
    spec = build_spec(args, full.base["epochs"], manifest["plan"], rows)
    datasets = []
    for _, config in spec.configs():
        entry = done[(config.optimizer, config.sigma_w)]
        ds = load_run(args.out / entry["file"], config)
        if ds is None:
            raise RuntimeError(f"run file {entry['file']} vanished or is corrupt")
        datasets.append(ds)
    combined = combine_runs(spec, datasets)
    combined.attrs.update(preset=GPU_PRESET, experiment=EXPERIMENT, oneshot_status=manifest.get("status", "running"),
                          created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))  # fmt: skip
    write_run(combined, path)
    return path


def save_manifest(args: argparse.Namespace, manifest: dict[str, Any], budget: Budget) -> None:
    manifest["elapsed_s"] = budget.elapsed()
    args.out.mkdir(parents=True, exist_ok=True)
    tmp = args.out / f".{MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest, indent=1, default=_json_default))
    tmp.replace(args.out / MANIFEST)


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.generic,)):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    return str(value)


def summary_text(args: argparse.Namespace, manifest: dict[str, Any]) -> str:
    """The one-page summary: environment, throughput, parity, plan, per-optimizer spreads, the C1/C2 column."""
    env = manifest.get("environment", {})
    lines = [f"initmem paper scale in one shot ({'DRY RUN, ' if args.dry_run else ''}status: {manifest.get('status')}, "
             f"{manifest.get('elapsed_s', math.nan):.0f} s of a {args.budget_s:.0f} s budget)",
             f"device {env.get('device')} ({env.get('hardware')}), torch {env.get('torch')}, CUDA {env.get('cuda') or '-'}, "
             f"cuDNN {env.get('cudnn') or '-'}, commit {env.get('git_commit') or 'unknown (not a git checkout)'}",
             "", "1. training throughput, ResNet-9 width %s, batch %s (images/s per model):" % (
                 args.base.effective_width, args.base.batch_size)]  # fmt: skip
    for p in manifest.get("throughput", []):
        figure = f"{p['images_per_s']:10.0f}" if math.isfinite(p["images_per_s"]) else f"{'-':>10}"
        extra = f"  first call {p['first_call_s']:.1f} s" if math.isfinite(p.get("first_call_s", math.nan)) else ""
        lines.append(f"   {p['name']:<26}{figure}{extra}{'  ' + p['note'] if p.get('note') else ''}")
    par = manifest.get("parity", {})
    if par:
        worst = max(par.get("max_rel_diff", {}).values(), default=math.nan)
        lines += ["", f"2. stacked vs sequential, {par.get('steps')} SGD steps, sigma_w {par.get('sigma_w')}: largest relative "
                      f"difference {worst:.2e} (tolerance {par.get('rtol'):.0e}): {'ok' if par.get('ok') else 'FAILED'}"
                      + (f" ({par['error']})" if par.get("error") else "")]  # fmt: skip
    plan = manifest.get("plan", {})
    if plan:
        lines += ["", f"3. reduced paper-scale 01: {plan['epochs']} epochs of {plan['images']['train']} images, batch "
                      f"{args.base.batch_size}, {plan['mode']}, {'bf16' if plan['bf16'] else 'fp32'}; estimated "
                      f"{plan['estimated_s']:.0f} s of {plan['available_s']:.0f} s available"]  # fmt: skip
        counts: dict[str, int] = {}
        for e in manifest.get("runs", []):
            status = e.get("status", "?").split(":")[0]
            counts[status] = counts.get(status, 0) + 1
        lines.append("   runs: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    from initmem.study.gpu_results import load_paper_scale

    ds = load_paper_scale(args.out)
    if ds is not None:
        table = optimizer_summary(ds)
        lines += ["", f"   {'optimizer':<13}{'lr':>8}{'spread sel':>11}{'final':>8}{'min train':>10}{'interp':>8}"
                      f"{'T_SGD':>9}{'T_adapt':>9}"]  # fmt: skip
        lrs = {r.optimizer: r.lr for r in args.table}
        for name, row in table.iterrows():
            lines.append(f"   {name:<13}{lrs.get(name, math.nan):>8.3g}{row['selected_spread_pp']:>9.1f}pp"
                         f"{row['final_spread_pp']:>6.1f}pp{row['min_final_train_acc']:>9.1f}%"
                         f"{int(row['interpolated']):>5}/{int(row['runs']):<2}{row['T_SGD']:>9.3g}{row['T_adapt']:>9.3g}")  # fmt: skip
    lines += ["", "4. ledger column 'paper scale (GPU)':"]
    for claim, text in paper_scale_column(args.out).items():
        lines.append(f"   {claim}: {text}")
    lines += ["", f"files: {args.out}/{EXPERIMENT}/runs/*.nc, {args.out}/{EXPERIMENT}.nc, {args.out}/{MANIFEST}, "
                  f"{args.out}/{SUMMARY}"]  # fmt: skip
    return "\n".join(lines)


# ==============================================================================================
# main
# ==============================================================================================
def main(argv: Sequence[str] | None = None, clock: Callable[[], float] = time.monotonic) -> int:
    """Run steps 1-4; returns 0 when step 3 completed, 3 when it stopped early (partial results saved).

    ``clock``: the budget's clock (seconds); a fake clock disables the hard timer (tests)."""
    budget_clock = clock
    args = parse_args(argv)
    budget = Budget(args.budget_s, budget_clock, hard=budget_clock is time.monotonic)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S")  # fmt: skip
    device = resolve_device(args.device)
    manifest: dict[str, Any] = {
        "status": "running", "command": [sys.argv[0], *(argv if argv is not None else sys.argv[1:])],
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "budget_s": args.budget_s,
        "dry_run": args.dry_run, "optimizer_table": [dataclasses.asdict(r) for r in args.table],
        "sigmas": list(args.sigmas), "environment": environment(device),
    }  # fmt: skip
    env = manifest["environment"]
    print(f"device {env['device']} ({env['hardware']}), torch {env['torch']}, CUDA {env['cuda'] or '-'}, "
          f"cuDNN {env['cudnn'] or '-'}; budget {args.budget_s:.0f} s; results in {args.out}", flush=True)  # fmt: skip

    complete: set[str] = set()

    def save() -> None:
        """The manifest, and the combined file whenever another optimizer has every run finished."""
        finished = {(e["optimizer"], e["sigma_w"]) for e in manifest.get("runs", []) if e.get("status") in DONE}
        now = {r.optimizer for r in args.table if all((r.optimizer, s) in finished for s in args.sigmas)}
        if now != complete or manifest["status"] != "running":
            write_combined(args, manifest)
            complete.clear()
            complete.update(now)
        save_manifest(args, manifest, budget)

    code = 0
    try:
        t0 = budget.elapsed()
        data = prepared_data(args.base)
        manifest["data"] = {"source": data.source, "sizes": data.sizes, "load_s": budget.elapsed() - t0}
        log.info("data: %s in %.1f s", data.sizes, budget.elapsed() - t0)
        probes = throughput(args, data, device, budget)
        manifest["throughput"] = [dataclasses.asdict(p) for p in probes]
        save_manifest(args, manifest, budget)
        manifest["parity"] = parity(args, data, device, budget)
        save_manifest(args, manifest, budget)
        trainer = choose_trainer(args, probes, manifest["parity"].get("ok", False), device.type == "cuda")
        run_experiment(args, data, trainer, budget, manifest, save)
        code = 0 if manifest["status"] == "complete" else 3
    except (KeyboardInterrupt, BudgetExceeded) as exc:
        manifest["status"] = f"killed ({type(exc).__name__})"
        code = 3
    except Exception as exc:  # noqa: BLE001 - recorded, and whatever finished is still saved and summarised
        log.exception("the one-shot run failed")
        manifest["status"] = f"failed ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
        code = 1
    try:
        save()
    except Exception:  # noqa: BLE001 - the run files are already written; the summary still prints
        log.exception("could not write the combined results or the manifest")
        code = code or 1
    text = summary_text(args, manifest)
    (args.out / SUMMARY).write_text(text + "\n")
    print("\n" + text, flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
