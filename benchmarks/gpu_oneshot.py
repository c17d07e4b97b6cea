"""The scale ladder's GPU rung in one shot: throughput, stacked-vs-sequential parity, then the rung a CPU cannot reach.

Chapter 11's ladder climbs in width and training images on a CPU (results/cpu/11_scale_ladder/design.json: widths 8
to 32, 5,000 and 20,000 images). This script trains its next rung on one GPU within a hard wall-time budget (default
8 minutes from its start): ResNet-9 at width 64, or 32 where the measured throughput does not allow 64, on the
paper's split (45,000 training images, validation 5,000, test 10,000), with the ladder's declared conditions,
network and schedule (chapter 11's cpu preset: SGD and Adam at their learning rates, batch 64, constant lr after a
1-epoch warm-up, logit scale 1.0, fp32, since chapter 01's parity study did not find bf16 in parity) at its sigma_w
(0.1 and 2.5), seeds 0-4, for the epochs of :func:`rule_epochs` (72). In this order:

1. the device, the versions, and ``--throughput-seconds`` (20 s) of probes: training images/s per model of the rung's
   network at each candidate width (64, 32; ``--width`` pins one), one model at a time and stacked (one seed's
   sigma_w as one model), within a quarter of the budget; a probe that overruns its limit is abandoned;
2. stacked-vs-sequential parity: ``--parity-steps`` SGD steps of the two sigma_w, stacked and one by one; the largest
   relative difference of the recorded losses and norms must be <= ``--parity-rtol`` (2e-2: cuDNN's TF32
   convolutions and max-pool near-ties move a few steps by ~1e-3, a bug by O(1));
3. the plan (:func:`plan_rung`, printed): the widest candidate whose estimate fits ``--safety`` times the time left,
   stacked where that was faster and parity held. Where none fits it shrinks in this order, and says what it
   dropped: the narrower width; then, the seeds being at their floor of five and the epochs at the rule's (a run that
   does not interpolate cannot carry C1), the runs train in the order SGD's seeds, then Adam's, and stop cleanly at
   the deadline (rerun the printed command to continue: finished runs are reused). Where no probe gave a figure,
   the conservative plan: the narrowest width, stacked if parity held, and no estimate (the first group trains until
   it is done or the deadline comes, the next ones are estimated from its measured time);
4. the runs through the package's timed runner (:func:`initmem.study.costs.timed.run_timed_experiment`), each written as it
   finishes into ``<results-dir>/gpu/11_scale_ladder/runs/`` (every run file records its hardware), the combined
   ``11_scale_ladder.nc`` of the conditions whose every run finished, ``oneshot.json`` and the one-page
   ``summary.txt``, printed. Re-running the same command reuses the finished runs.

    benchmarks/gpu_oneshot.sh                                              # on the GPU machine: results/gpu
    python benchmarks/gpu_oneshot.py --dry-run        # CPU, synthetic data, about a minute, into a temporary folder

``--dry-run`` runs every step on the CPU at chapter 11's smoke sizes (widths 8 and 4, 200 synthetic 16-px images,
2 epochs) with the same five seeds and conditions; the test suite runs it (tests/test_gpu_oneshot.py).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import logging
import math
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from initmem.base.files import atomic_write
from initmem.base.paths import git_commit
from initmem.run.config import ConfigError
from initmem.run.thresholds import INTERPOLATION_THRESHOLD
from initmem.study.costs import costs, results, timed
from initmem.study.design import presets, registry
from initmem.study.experiments import e11_scale_ladder
from initmem.study.verdicts import gpu_results, ladder
from initmem.sweeps.budget import Deadline, DeadlineExceeded, run_groups, train_group
from initmem.sweeps.driver import sweep
from initmem.sweeps.spec import SweepSpec

log = logging.getLogger("gpu_oneshot")

#: The experiment whose rung this trains, and the preset folder its results go to (``results/gpu/``).
EXPERIMENT = e11_scale_ladder.EXPERIMENT.name
PRESET = gpu_results.GPU_PRESET
#: Candidate widths, preferred first: the paper's 64, then 32 (still above every CPU rung's training set).
WIDTHS = (64, 32)
#: The paper's training images: CIFAR-10's 50,000 less its 5,000 validation images.
TRAIN_SIZE = 45_000
#: The seeds of the rung: five, the floor the plan never goes below (chapter 01's record has five).
SEEDS = list(range(5))
#: Chapter 11's parameters that describe the whole ladder, not this rung (:func:`rung_spec` sets them).
LADDER_ONLY = ("rungs", "lever_rungs", "lever_lr")
#: The paper's split (01's paper preset) that replaces the ladder's cpu split.
PAPER_SPLIT = ("data", "image_size", "val_size", "test_size", "train_eval_size", "augment")
#: --dry-run: the widths and the smoke preset's values of chapter 11 (its first rung gives images and epochs).
DRY_WIDTHS = (8, 4)
DRY_RUN_FROM_SMOKE = (*PAPER_SPLIT, "logit_scale", "batch_size", "eval_every", "warmup_epochs", "lrs", "num_threads")
#: Seconds per run beyond training and evaluation (writing its file, combining, Python), added to every estimate.
PER_RUN_OVERHEAD_S = 1.0
#: The probes' share of the budget, all together; and each probe's limit: this many times its share of
#: --throughput-seconds, at least PROBE_MIN_LIMIT_S (a first CUDA call initialises the context and cuDNN).
PROBE_BUDGET_SHARE = 0.25
PROBE_LIMIT_FACTOR = 4.0
PROBE_MIN_LIMIT_S = 30.0
#: The rung's design record, under the results folder: written by --declare and committed before its first run.
DESIGN = Path(PRESET) / EXPERIMENT / "design.json"
#: The chapter 11 design record whose judging rules the rung shares, and the record its noise is measured on.
LADDER_DESIGN = Path("cpu") / EXPERIMENT / "design.json"
NOISE_SOURCE = Path("cpu") / "01_optimizers.nc"
#: Fields of a run that the stacked and sequential parity runs compare (relative difference).
PARITY_VARIABLES = ("train_loss", "val_loss", "test_loss", "weight_norm", "dist_from_init")


def rule_epochs(train_size: int) -> int:
    """Epochs on ``train_size`` training images by the ladder's declared rule, extrapolated: the line through its
    declared points (:data:`initmem.study.experiments.e11_scale_ladder.DESIGN_RUNGS`: 40 epochs on 5,000 images, 60
    on 20,000) in log2 of the images, rounded up: ``40 + 10 log2(n / 5,000)``, 72 on 45,000."""
    (n0, e0), (n1, e1) = sorted({(n, e) for _, n, e in e11_scale_ladder.DESIGN_RUNGS})
    return math.ceil(e0 + (e1 - e0) * math.log2(train_size / n0) / math.log2(n1 / n0))


def epoch_rule_text() -> str:
    """The rule of :func:`rule_epochs` in one line, as printed and recorded."""
    (n0, e0), (n1, e1) = sorted({(n, e) for _, n, e in e11_scale_ladder.DESIGN_RUNGS})
    slope = (e1 - e0) / math.log2(n1 / n0)
    return (
        f"epochs = {e0} + {slope:g} log2(n / {n0:,}), rounded up: the line through the ladder's declared {e0} epochs "
        f"on {n0:,} images and {e1} on {n1:,}, in log2 of the training images; {rule_epochs(TRAIN_SIZE)} on "
        f"{TRAIN_SIZE:,} (each run's final train accuracy checks the premise that low-lr SGD interpolates)"
    )


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def _number(kind: type) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {kind.__name__}, got {text!r}") from None
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gpu_oneshot.py", description=__doc__.split("\n\n")[0])
    add, positive, real = parser.add_argument, _number(int), _number(float)
    add(
        "--results-dir",
        type=Path,
        default=None,
        help="results root: writes <it>/gpu (default results; --dry-run: a new temporary folder, never results)",
    )
    add("--budget-min", type=real, default=None, help="hard wall-time budget in minutes (8; --dry-run 3)")
    add("--dry-run", action="store_true", help="chapter 11's smoke sizes on the CPU, synthetic data (a minute)")
    add("--declare", action="store_true", help="write the rung's design record (DESIGN) and stop; commit it first")
    add("--data", default=None, help="CIFAR-10 location (default: initmem's search)")
    add("--device", default=None, choices=("cpu", "cuda"), help="default cuda (cpu with --dry-run)")
    add("--allow-cpu", action="store_true", help="run the full-size rung without a GPU")
    add("-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"), help="set a parameter of 11 (JSON)")
    add("--width", type=positive, default=None, help="train at this width only (default: 64, else 32)")
    add("--mode", default="auto", choices=("auto", "stacked", "sequential"), help="step 4 (auto: the faster)")
    add("--throughput-seconds", type=real, default=None, help="all probes together (20; dry run 2)")
    add("--parity-steps", type=positive, default=5)
    add("--parity-rtol", type=real, default=2e-2)
    add("--safety", type=real, default=0.85, help="plan step 4 to fill this fraction of the time left, in (0, 1]")
    add("-v", "--verbose", action="store_true")
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, checked (one line and exit 2 on a bad value), with the derived ``budget_s``, ``widths``,
    ``train_size``, ``epochs`` and ``parameters`` (the rung's parameters of chapter 11)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    dry = args.dry_run
    args.budget_s = 60.0 * (args.budget_min or (3.0 if dry else 8.0))
    args.device = args.device or ("cpu" if dry else "cuda")
    args.throughput_seconds = args.throughput_seconds or (2.0 if dry else 20.0)
    args.widths = (args.width,) if args.width else DRY_WIDTHS if dry else WIDTHS
    if args.device == "cuda" and not torch.cuda.is_available():
        if not (args.allow_cpu or args.declare):
            parser.error("--device cuda: no CUDA device here; use --dry-run (or --device cpu --allow-cpu)")
        args.device = "cpu"
    if args.device == "cpu" and not (dry or args.allow_cpu or args.declare):
        parser.error("--device cpu: the full-size rung is a GPU job; add --allow-cpu or use --dry-run")
    try:
        args.parameters = rung_parameters(args)
        smoke_rung = presets.notebook_parameters("smoke", EXPERIMENT)["rungs"][0]
        args.train_size, args.epochs = smoke_rung[1:] if dry else (TRAIN_SIZE, rule_epochs(TRAIN_SIZE))
        if args.safety > 1:
            raise ConfigError(f"--safety: must be in (0, 1], got {args.safety}")
        SweepSpec.from_dict(rung_spec(args, args.widths[0]))
    except (ConfigError, ValueError) as exc:
        parser.error(str(exc).splitlines()[0])
    # a dry run's synthetic runs must never land where the GPU rung's results are committed and read by the book
    args.results_dir = args.results_dir or (
        Path(tempfile.mkdtemp(prefix="initmem-oneshot-dry-")) if dry else Path("results")
    )
    return args


def rung_parameters(args: argparse.Namespace) -> dict[str, Any]:
    """Chapter 11's parameters for the rung: its cpu preset (the declared design's conditions, sigma_w, network and
    schedule; not its rungs and lever, :data:`LADDER_ONLY`) on the paper's split with :data:`SEEDS` and torch's own thread count, the smoke preset's sizes with
    --dry-run, then the command line's ``-p`` changes."""
    p = {k: v for k, v in presets.notebook_parameters("cpu", EXPERIMENT).items() if k not in LADDER_ONLY}
    paper = presets.notebook_parameters("paper", "01_optimizers")
    p.update({name: paper[name] for name in PAPER_SPLIT}, seeds=list(SEEDS), num_threads=None)
    if args.dry_run:
        smoke = presets.notebook_parameters("smoke", EXPERIMENT)
        p.update({name: smoke[name] for name in DRY_RUN_FROM_SMOKE})
    p["data"] = args.data or p["data"]
    for name, text in args.p:
        if name not in p:
            raise ValueError(f"-p: unknown parameter {name!r}; the rung's parameters are {', '.join(p)}")
        try:
            p[name] = json.loads(text)
        except ValueError:
            p[name] = text
    if not isinstance(p["sigma_ws"], list) or len(set(p["sigma_ws"])) < 2:
        raise ValueError(f"-p sigma_ws: need a list of at least two values to measure a spread, got {p['sigma_ws']}")
    if not isinstance(p["seeds"], list) or len(set(p["seeds"])) < len(SEEDS):
        raise ValueError(f"-p seeds: need at least {len(SEEDS)} distinct seeds (the rung's floor), got {p['seeds']}")
    return p


def rung_spec(args: argparse.Namespace, width: int, **base: Any) -> dict[str, Any]:
    """Chapter 11's sweep (its spec builder) of the one rung ``width`` x ``args.train_size`` images x ``args.epochs``
    on ``args.device``, with ``base`` changes. Without the larger-lr lever (the design trains it on the two cheapest
    rungs only): chapter 11 trains it on its first rung, as the zip's last condition, which is dropped here; the
    epochs in ``base``, where the timed runner sets them."""
    rung = {"rungs": [[width, args.train_size, args.epochs]], "lever_rungs": [[width, args.train_size]]}
    spec = registry.experiment_spec(EXPERIMENT, {**args.parameters, **rung, "lever_lr": None})
    spec["zip"] = {key: values[:-1] for key, values in spec["zip"].items()}
    spec["base"].update(device=args.device, epochs=spec["grid"].pop("epochs")[0], **base)
    return spec


def probe_spec(args: argparse.Namespace, width: int, sigmas: Sequence[float], steps: int, eval_size: int, **base):
    """What steps 1 and 2 train: the rung's SGD condition (its first if it has none) at ``width`` and ``sigmas``,
    the first seed, one epoch of ``steps`` steps, each split evaluated on ``eval_size`` images."""
    spec = rung_spec(args, width, **base)
    zipped = spec.pop("zip")
    row = zipped["optimizer"].index("sgd") if "sgd" in zipped["optimizer"] else 0
    batch = spec["base"]["batch_size"]
    sizes = dict(train_size=steps * batch, val_size=eval_size, test_size=eval_size, train_eval_size=eval_size)
    spec["base"].update({k: v[row] for k, v in zipped.items()}, width=width, epochs=1, warmup_epochs=0.0, **sizes)
    spec["base"]["eval_every"] = 1
    spec["grid"] = {"sigma_w": list(sigmas), "seed": args.parameters["seeds"][:1]}
    return spec


def scratch_sweep(spec: dict, scratch: Path, stacked: bool) -> Any:
    """One sweep of ``spec`` into a fresh folder of ``scratch`` (the package's driver): the combined Dataset."""
    return sweep(spec, tempfile.mkdtemp(dir=scratch), executor="stacked" if stacked else "serial", progress=False)


def environment(device: torch.device) -> dict[str, Any]:
    cuda = device.type == "cuda"
    cpu = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    return {
        **{"device": str(device), "hardware": torch.cuda.get_device_name(device) if cuda else cpu},
        **{"torch": str(torch.__version__), "cuda": str(torch.version.cuda or "")},
        **{"cudnn": str(torch.backends.cudnn.version() or ""), "python": sys.version.split()[0]},
        # a bare GPU machine gets the working tree without .git: gpu_oneshot.sh --prepare carries the commit
        **{"platform": platform.platform(), "git_commit": git_commit() or os.environ.get("INITMEM_ONESHOT_COMMIT")},
    }


def throughput(args: argparse.Namespace, deadline: Deadline, scratch: Path) -> list[dict[str, Any]]:
    """Step 1: at every candidate width, one model at a time and one seed's sigma_w stacked, within
    :data:`PROBE_BUDGET_SHARE` of the budget (read from ``deadline``'s clock)."""
    k = len(args.parameters["sigma_ws"])
    kinds = [(width, stack) for width in args.widths for stack in (1, k)]
    phase = Deadline(PROBE_BUDGET_SHARE * args.budget_s, deadline.clock, hard=deadline.hard)
    share = args.throughput_seconds / len(kinds)
    return [probe(args, phase, scratch, width, stack, share) for width, stack in kinds]


def probe(args: argparse.Namespace, phase: Deadline, scratch: Path, width: int, stack: int, share: float) -> dict:
    """One throughput figure: a 3-step sweep (warm-up, cuDNN's choices: ``first_call_s``), then one sized to take
    about ``share`` seconds; images/s per model from the runs' own training time (``wall_time_s``; a stack's shared).

    Abandoned (``note``, ``images_per_s`` NaN) once it has run longer than its limit (``PROBE_LIMIT_FACTOR`` x
    ``share``, at least :data:`PROBE_MIN_LIMIT_S`) or than the probes' time left, by ``phase``'s clock: its timer
    interrupts it on the real clock, and the clock is read again after each sweep."""
    name = f"width {width} " + (f"stacked x{stack}" if stack > 1 else "sequential")
    result = {"name": name, "width": width, "stacked": stack, "note": ""}
    result.update(images_per_s=math.nan, seconds=math.nan, first_call_s=math.nan)
    batch, sigmas = args.parameters["batch_size"], args.parameters["sigma_ws"][:stack]
    limit = min(max(PROBE_LIMIT_FACTOR * share, PROBE_MIN_LIMIT_S), phase.remaining())
    start = phase.elapsed()
    try:
        with phase.guard(limit, what=f"probe {name}"):
            for key, steps in (("first_call_s", 3), ("seconds", None)):
                steps = steps or int(min(args.train_size // batch, max(5, share * 3 / result["first_call_s"])))
                spec = probe_spec(args, width, sigmas, steps, batch)
                result[key] = float(scratch_sweep(spec, scratch, stack > 1)["wall_time_s"].sum())
                if phase.elapsed() - start > limit:
                    raise DeadlineExceeded(f"probe {name}: ran past its {limit:.0f} s")
            result["images_per_s"] = stack * steps * batch / result["seconds"]
    except DeadlineExceeded as exc:
        result["note"] = f"abandoned ({exc})"
    except Exception as exc:  # noqa: BLE001 - a failing variant is reported, the others go on
        result["note"] = f"failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    log.info("throughput %-24s %10.0f img/s %s", name, result["images_per_s"], result["note"])
    return result


def parity(args: argparse.Namespace, deadline: Deadline, scratch: Path) -> dict[str, Any]:
    """Step 2: the smallest and largest sigma_w at the widest candidate, stacked and one by one (NCHW, as the stacked
    model is), in fp32."""
    sigmas = [min(args.parameters["sigma_ws"]), max(args.parameters["sigma_ws"])]
    result: dict[str, Any] = {"steps": args.parity_steps, "sigma_w": sigmas, "rtol": args.parity_rtol}
    eval_size = max(args.parameters["batch_size"], 500)
    spec = probe_spec(args, args.widths[0], sigmas, args.parity_steps, eval_size, channels_last=False)
    try:
        with deadline.guard(max(60.0, 10 * args.throughput_seconds), what="parity check"):
            stacked, alone = (scratch_sweep(spec, scratch, stacked=s) for s in (True, False))
    except (Exception, DeadlineExceeded) as exc:  # noqa: BLE001 - reported; step 4 then trains sequentially
        return {**result, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
    worst = {}
    for name in PARITY_VARIABLES:
        x, y = np.asarray(stacked[name].values, float), np.asarray(alone[name].values, float)
        rel = np.abs(x - y) / np.maximum(np.abs(y), 1e-12)
        worst[name] = float(np.nanmax(rel)) if np.isfinite(rel).any() else math.inf
    return {**result, "max_rel_diff": worst, "ok": all(v <= args.parity_rtol for v in worst.values())}


def _groups_text(groups: list[list[Any]]) -> str:
    """``"sgd lr 0.02 seeds 0-4, adam lr 0.008 seeds 0, 1"``: the conditions and seeds of ``groups`` (lists of
    configs)."""
    seeds: dict[str, set[int]] = {}
    for group in groups:
        seeds.setdefault(f"{group[0].optimizer} lr {group[0].lr:g}", set()).update(c.seed for c in group)
    parts = []
    for name, values in seeds.items():
        ordered = sorted(values)
        span = len(ordered) > 2 and ordered == list(range(ordered[0], ordered[-1] + 1))
        shown = f"{ordered[0]}-{ordered[-1]}" if span else ", ".join(map(str, ordered))
        parts.append(f"{name} seed{'s' if len(ordered) > 1 else ''} {shown}")
    return ", ".join(parts)


def plan_rung(
    args: argparse.Namespace, probes: list[dict[str, Any]], parity_ok: bool, available_s: float
) -> dict[str, Any]:
    """Step 3: the rung's ``width``, ``mode`` (``stacked`` or ``sequential``) and ``rate`` (training images/s per
    model; inf where no probe measured one: ``conservative``), its ``runs`` in ``groups``, ``estimated_s`` of
    ``available_s`` seconds, whether it ``fits`` (None without a figure), what it ``dropped`` and the ``lines`` it
    prints (one line each).

    The widest of ``args.widths`` whose estimate fits; else the narrowest measured, whose groups train in their order
    (the conditions', then the seeds') until the deadline (see the module docstring)."""
    allowed = {"stacked": [True], "sequential": [False], "auto": [False, True] if parity_ok else [False]}[args.mode]
    rates = {(p["width"], p["stacked"] > 1): p["images_per_s"] for p in probes}
    rates = {key: rate for key, rate in rates.items() if math.isfinite(rate) and rate > 0 and key[1] in allowed}
    measured = [w for w in args.widths if any((w, m) in rates for m in allowed)]
    planned_blind = () if measured else args.widths[-1:]  # the conservative plan's width
    dropped = [f"width {w}: no throughput figure" for w in args.widths if w not in (*measured, *planned_blind)]

    def cost(width: int, stacked: bool, rate: float) -> tuple[list[list[Any]], list[float]]:
        groups = run_groups(SweepSpec.from_dict(rung_spec(args, width)), stacked)
        return groups, [costs.group_seconds(group, rate, PER_RUN_OVERHEAD_S) for group in groups]

    if not measured:
        width, stacked, rate = args.widths[-1], allowed[-1], math.inf
        groups, seconds = cost(width, stacked, rate)
    for width in measured:
        rate, stacked = max((rates[(width, m)], m) for m in allowed if (width, m) in rates)
        groups, seconds = cost(width, stacked, rate)
        if sum(seconds) <= available_s or width == measured[-1]:
            break
        dropped.append(f"width {width}: needs ~{sum(seconds):.0f} s of the {available_s:.0f} s available")
    mode, estimate = "stacked" if stacked else "sequential", sum(seconds)
    fits = estimate <= available_s if measured else None
    if fits is False:
        left = groups[int(np.searchsorted(np.cumsum(seconds), available_s, side="right")) :]
        dropped.append(
            f"expected not to fit: {_groups_text(left)} ({sum(map(len, left))} runs: trained if time is left, else by "
            "a rerun of the same command, which reuses the finished runs)"
        )
    if measured:
        head = (
            f"width {width}, {mode} at {rate:.0f} images/s per model: estimated {estimate:.0f} s of the "
            f"{available_s:.0f} s available"
        )
    else:
        head = (
            f"no throughput figure to plan with (every probe failed or overran): the conservative plan, width {width} "
            f"(the narrowest), {mode}, no estimate: the first group trains until it is done or the deadline comes, "
            "the next ones are estimated from its measured time"
        )
    p = args.parameters
    conditions = ", ".join(f"{o} lr {lr:g}" for o, lr in zip(p["optimizers"], p["lrs"]))
    lines = [
        f"plan: the ladder's rung width {width} x {args.train_size:,} images x {args.epochs} epochs, {conditions}, "
        f"sigma_w {p['sigma_ws']}, seeds {p['seeds']}, batch {p['batch_size']}, fp32: "
        f"{sum(map(len, groups))} runs in {len(groups)} groups",
        f"epoch rule: {epoch_rule_text()}",
        head,
        *(f"dropped: {line}" for line in dropped),
    ]
    return {
        **{"width": width, "mode": mode, "rate": rate, "runs": sum(map(len, groups)), "groups": len(groups)},
        **{"estimated_s": estimate, "available_s": available_s, "fits": fits, "conservative": not measured},
        **{"dropped": dropped, "lines": lines},
    }


def _rung_dataset(results_dir: Path) -> Any:
    """The combined Dataset of the rung's finished conditions (``optimizer`` a dimension), or None."""
    found = results.load_results(results_dir, PRESET, [EXPERIMENT]).get(EXPERIMENT)
    if found is None or "optimizer" in found.dims:
        return found
    return found.swap_dims({next(d for d in found["optimizer"].dims): "optimizer"})


def summary_text(m: dict[str, Any], results_dir: Path) -> str:
    """The one-page summary of a session from its manifest ``m``: environment, throughput, parity, the plan and what
    ran, and the rung's spreads as chapter 11 reads them (:func:`initmem.study.verdicts.ladder.rungs`)."""
    env, p = m.get("environment", {}), m.get("parameters", {})
    lines = [
        f"initmem scale ladder, GPU rung in one shot ({'DRY RUN, ' if m.get('dry_run') else ''}status: "
        f"{m.get('status')}, {m.get('elapsed_s', math.nan):.0f} s of a {m.get('budget_s', math.nan):.0f} s budget)",
        f"device {env.get('device')} ({env.get('hardware')}), torch {env.get('torch')}, CUDA {env.get('cuda') or '-'}"
        f", cuDNN {env.get('cudnn') or '-'}, commit {env.get('git_commit') or 'unknown (not a git checkout)'}",
        "",
        f"1. training throughput, ResNet-9, batch {p.get('batch_size')}, fp32 (images/s per model):",
    ]
    for probe_ in m.get("throughput", []):
        first = probe_.get("first_call_s", math.nan)
        lines.append(
            f"   {probe_['name']:<26}{probe_.get('images_per_s', math.nan):10.0f}"
            + (f"  first call {first:.1f} s" if math.isfinite(first) else "")
            + (f"  {probe_['note']}" if probe_.get("note") else "")
        )
    par = m.get("parity", {})
    if par:
        worst = max(par.get("max_rel_diff", {}).values(), default=math.nan)
        lines += [
            "",
            f"2. stacked vs sequential, {par.get('steps')} SGD steps, sigma_w {par.get('sigma_w')}: largest "
            f"relative difference {worst:.2e} (tolerance {par.get('rtol'):.0e}): "
            f"{'ok' if par.get('ok') else 'FAILED'}" + (f" ({par['error']})" if par.get("error") else ""),
        ]
    if m.get("plan"):
        lines += ["", "3. " + "\n   ".join(m["plan"]["lines"])]
    if m.get("sweep"):
        counts: dict[str, int] = {}
        for run in m["sweep"].get("runs", []):
            status = run["status"].split(":")[0]
            counts[status] = counts.get(status, 0) + 1
        lines += ["", "4. runs: " + ", ".join(f"{v} {k}" for k, v in counts.items())]
    ds = _rung_dataset(results_dir)
    if ds is not None:
        sgd = ds.sel(optimizer="sgd")["final_train_acc"].values if "sgd" in ds["optimizer"].values else np.array([])
        lines += [
            f"   premise (low-lr SGD interpolates): {int((sgd >= INTERPOLATION_THRESHOLD).sum())}/"
            f"{int(np.isfinite(sgd).sum())} SGD runs at >= {INTERPOLATION_THRESHOLD:g} % final train accuracy",
            *("   " + line for line in ladder.ladder_frame(ladder.rungs(ds)).to_string().splitlines()),
        ]
    folder = results.results_paths(results_dir, PRESET, EXPERIMENT)[1].parent
    lines += ["", f"files: {folder}/{EXPERIMENT}/runs/*.nc, {folder}/{EXPERIMENT}.nc, {folder}/{gpu_results.MANIFEST}"]
    if m.get("status") != "complete" and m.get("plan"):
        lines.append(
            f"continue with: benchmarks/gpu_oneshot.sh --width {m['plan']['width']} (finished runs are reused)"
        )
    return "\n".join(lines)


def design_record(args: argparse.Namespace) -> dict[str, Any]:
    """The rung's design, declared before its first run (``--declare``): what it trains, how it is judged (the
    ladder's rules, :data:`LADDER_DESIGN`) and the power of "in the paper's band" for each condition at the noise of
    01's record at the rung's sigma_w and seeds (:func:`initmem.study.verdicts.preregistration.band_power`)."""
    import xarray as xr

    from initmem.study.verdicts.preregistration import band_power, read_design, spread_noise

    p = args.parameters
    ladder_design = read_design(args.results_dir / LADDER_DESIGN)
    zipped = {key: values[:-1] for key, values in e11_scale_ladder.condition_zip({**p, "lever_lr": -1.0}).items()}
    with xr.open_dataset(args.results_dir / NOISE_SOURCE, engine="h5netcdf") as record:
        sds = spread_noise(record, zipped["optimizer"], p["sigma_ws"])
    power = {}
    for optimizer, by in sds.items():
        truth, band = ladder.target(optimizer)
        power[optimizer] = {
            predictor: round(band_power(sd, len(p["seeds"]), truth, band, len(p["sigma_ws"])), 4)
            for predictor, sd in by.items()
        }
    runs = [config for _, config in SweepSpec.from_dict(rung_spec(args, WIDTHS[0])).configs()]
    return {
        "study": f"{EXPERIMENT}, GPU rung",
        "preset": PRESET,
        "question": "At the paper's width and training set, are SGD's and Adam's spreads in the paper's bands?",
        "widths": list(WIDTHS),
        "width_rule": "the widest whose estimate at the measured throughput fits the budget (plan_rung); where none "
        "fits, the narrower, then SGD's seeds before Adam's, stopping cleanly at the deadline",
        "train_size": TRAIN_SIZE,
        "epochs": rule_epochs(TRAIN_SIZE),
        "epoch_rule": epoch_rule_text(),
        "conditions": [
            {"optimizer": o, "lr": lr, "weight_decay": wd, "aux_lr": a, "row": ladder.CONDITIONS[o].row}
            for o, lr, wd, a in zip(zipped["optimizer"], zipped["lr"], zipped["weight_decay"], zipped["aux_lr"])
        ],
        "sigma_ws": p["sigma_ws"],
        "seeds": p["seeds"],
        "fixed": {k: p[k] for k in ("model", "logit_scale", "batch_size", "warmup_epochs", *PAPER_SPLIT, "bf16")},
        **{k: ladder_design[k] for k in ("premise", "predictor", "spread", "size_rule")},
        "noise": {
            "source": NOISE_SOURCE.as_posix(),
            "sd_per_seed_spread_pp": {o: {k: round(v, 3) for k, v in by.items()} for o, by in sds.items()},
        },
        "power_in_band": power,
        "estimated_a100_s_at_width_64": round(costs.estimate_runs(runs)["gpu_seconds"]),
        "written_at_commit": git_commit(),
    }


def main(argv: Sequence[str] | None = None, clock: Callable[[], float] = time.monotonic, train=train_group) -> int:
    """Run steps 1-4; 0 when the rung completed, 3 when it stopped early (what finished is saved), 1 when it failed.

    ``clock``: the budget's clock, seconds (the probes' limits and the deadline read it; a fake one disables the
    hard timer); ``train``: trains one group of step 4 (initmem.sweeps.budget.train_group; tests wrap it)."""
    args = parse_args(argv)
    if args.declare:
        out = args.results_dir / DESIGN
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(design_record(args), indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {out}: commit it before the rung's first run")
        return 0
    deadline = Deadline(args.budget_s, clock)
    level = logging.DEBUG if args.verbose else logging.INFO
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    device = torch.device(args.device)
    folder = results.results_paths(args.results_dir, PRESET, EXPERIMENT)[1].parent
    folder.mkdir(parents=True, exist_ok=True)
    created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    m: dict[str, Any] = {"status": "running", "command": [sys.argv[0], *(sys.argv[1:] if argv is None else argv)]}
    m.update(created=created, budget_s=args.budget_s, dry_run=args.dry_run, parameters=args.parameters)
    m["rung"] = {"widths": list(args.widths), "train_size": args.train_size, "epochs": args.epochs}
    m["rung"]["epoch_rule"] = epoch_rule_text()
    m["environment"] = env = environment(device)
    log.info(
        "device %s (%s), torch %s; budget %.0f s; into %s", device, env["hardware"], env["torch"], args.budget_s, folder
    )

    def save(swept: Any = None) -> None:
        m.update(elapsed_s=deadline.elapsed(), **({"sweep": swept.as_dict()} if swept is not None else {}))
        atomic_write(
            folder / gpu_results.MANIFEST, lambda handle: handle.write(json.dumps(m, indent=1, default=str).encode())
        )

    code = 1
    try:
        with tempfile.TemporaryDirectory(prefix="oneshot-probes-") as scratch:
            m["throughput"] = throughput(args, deadline, Path(scratch))
            m["parity"] = parity(args, deadline, Path(scratch))
        plan = m["plan"] = plan_rung(args, m["throughput"], m["parity"]["ok"], args.safety * deadline.remaining())
        for line in plan["lines"]:
            log.info("%s", line)
        save()
        swept = timed.run_timed_experiment(
            EXPERIMENT,
            rung_spec(args, plan["width"]),
            preset=PRESET,
            results_dir=args.results_dir,
            deadline=deadline,
            group_seconds=lambda group: costs.group_seconds(group, plan["rate"], PER_RUN_OVERHEAD_S),
            stacked=plan["mode"] == "stacked",
            on_group=save,
            train=train,
            max_epochs=args.epochs,
            min_epochs=args.epochs,
            safety=args.safety,
        )
        m["status"], code = swept.status, 0 if swept.status == "complete" else 3
    except (KeyboardInterrupt, DeadlineExceeded) as exc:
        m["status"], code = f"killed ({type(exc).__name__})", 3
    except Exception as exc:  # noqa: BLE001 - recorded; what finished is saved and summarised
        log.exception("the one-shot run failed")
        m["status"] = f"failed ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    save()
    text = summary_text(m, args.results_dir)
    (folder / gpu_results.SUMMARY).write_text(text + "\n")
    print("\n" + text, flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
