"""Paper scale in one shot: throughput, stacked-vs-sequential parity, then experiment 01 at preset "gpu" on one GPU.

Within a hard wall-time budget (default 8 minutes from the start of the script), in this order:

1. the device, torch/CUDA versions, and ``--throughput-seconds`` (20 s) of throughput probes: training images/s of
   01's network at preset ``gpu`` (ResNet-9, width 64) sequentially and stacked (the sigma_w models as one, counted
   per model), in fp32 and bf16, and sequentially with ``torch.compile`` (bf16 and compile: CUDA only);
2. stacked-vs-sequential parity: ``--parity-steps`` SGD steps of the smallest and largest sigma_w, stacked and one by
   one; the largest relative difference of the recorded losses and norms must be <= ``--parity-rtol`` (2e-2: cuDNN's
   TF32 convolutions and max-pool near-ties move a few steps by ~1e-3, a bug by O(1));
3. experiment 01 at preset ``gpu`` (initmem.study.presets: the paper's split and network, batch 128, its optimizer
   table, four sigma_w, one seed) through the package's timed runner (initmem.study.timed.run_timed_experiment):
   as many epochs as the measured throughput fits into the time left (at most ``--max-epochs``, the preset's 200),
   stacked where that was faster and parity held, every finished run written at once, a clean stop at the deadline;
4. ``<results-dir>/gpu/``: the run files, the combined ``01_optimizers.nc`` (the optimizers whose every run
   finished), ``oneshot.json`` and the one-page ``summary.txt`` (initmem.study.gpu_results.summary_text), printed.
   Re-running the same command reuses the finished runs.

    benchmarks/gpu_oneshot.sh                                            # on the GPU machine: results/gpu
    python benchmarks/gpu_oneshot.py --dry-run --results-dir /tmp/oneshot   # CPU, synthetic data, a minute

``--dry-run`` runs every step on the CPU at the smoke preset's data and network sizes; the test suite runs it
(tests/test_gpu_oneshot.py). The ledger's "paper scale (GPU)" column is ``initmem.study.gpu_results.ledger_column``.
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
from initmem.study import costs, gpu_results, presets, registry, results, timed
from initmem.sweeps import SweepSpec, sweep
from initmem.sweeps.budget import Deadline, DeadlineExceeded, train_group

log = logging.getLogger("gpu_oneshot")

#: The smoke preset's values of 01 that --dry-run takes: tiny sizes, synthetic data (seconds per run on a CPU).
DRY_RUN_FROM_SMOKE = ("data", "image_size", "train_size", "val_size", "test_size", "train_eval_size", "width")
DRY_RUN_FROM_SMOKE += ("batch_size", "warmup_epochs", "num_threads")
#: 01's lists with one entry per optimizer, reordered by --optimizers.
PER_OPTIMIZER = ("optimizers", "lrs", "weight_decays", "aux_lrs")
#: Seconds per run beyond training and evaluation (writing its file, combining, Python), added to every estimate.
PER_RUN_OVERHEAD_S = 1.0
#: The longest a compile probe may take (seconds) before it is abandoned.
COMPILE_PROBE_LIMIT_S = 90.0
#: Fields of a run that the stacked and sequential parity runs compare (relative difference).
PARITY_VARIABLES = ("train_loss", "val_loss", "test_loss", "weight_norm", "dist_from_init")


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
    add("--results-dir", type=Path, default=Path("results"), help="results root: writes <it>/gpu (default results)")
    add("--budget-min", type=real, default=None, help="hard wall-time budget in minutes (8; --dry-run 2)")
    add("--dry-run", action="store_true", help="the smoke preset's sizes on the CPU, synthetic data (a minute)")
    add("--data", default=None, help="CIFAR-10 location (default: initmem's search)")
    add("--device", default=None, choices=("cpu", "cuda"), help="default cuda (cpu with --dry-run)")
    add("--allow-cpu", action="store_true", help="run the full-size protocol without a GPU")
    add("-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"), help="set a parameter of 01 (JSON)")
    add("--optimizers", default=None, help="comma-separated subset of the preset's optimizers, in run order")
    add("--max-epochs", type=positive, default=None, help="at most this many epochs (the preset's; dry run 2)")
    add("--min-epochs", type=positive, default=1, help="at least this many, even if the plan says fewer")
    add("--mode", default="auto", choices=("auto", "stacked", "sequential"), help="step 3 (auto: the faster)")
    add("--precision", default="auto", choices=("auto", "fp32", "bf16"), help="step 3 (auto: the faster; bf16: CUDA)")
    add("--compile", action="store_true", help="torch.compile the sequential runs of step 3 (CUDA)")
    add("--no-compile-probe", action="store_true", help="skip measuring torch.compile in step 1")
    add("--throughput-seconds", type=real, default=None, help="all probes together (20; dry run 2)")
    add("--parity-steps", type=positive, default=5)
    add("--parity-rtol", type=real, default=2e-2)
    add("--safety", type=real, default=0.85, help="plan step 3 to fill this fraction of the time left, in (0, 1]")
    add("-v", "--verbose", action="store_true")
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    dry = args.dry_run
    args.budget_s = 60.0 * (args.budget_min or (2.0 if dry else 8.0))
    args.device = args.device or ("cpu" if dry else "cuda")
    args.throughput_seconds = args.throughput_seconds or (2.0 if dry else 20.0)
    if args.device == "cuda" and not torch.cuda.is_available():
        if not args.allow_cpu:
            parser.error("--device cuda: no CUDA device here; use --dry-run (or --device cpu --allow-cpu)")
        args.device = "cpu"
    if args.device == "cpu" and not (dry or args.allow_cpu):
        parser.error("--device cpu: the full-size protocol is a GPU job; add --allow-cpu or use --dry-run")
    try:
        args.parameters = experiment_parameters(args)
        args.max_epochs = args.max_epochs or (2 if dry else args.parameters["epochs"])
        if args.safety > 1:
            raise ConfigError(f"--safety: must be in (0, 1], got {args.safety}")
        if args.min_epochs > args.max_epochs:
            raise ConfigError(f"--min-epochs ({args.min_epochs}) exceeds --max-epochs ({args.max_epochs})")
        SweepSpec.from_dict(experiment_spec(args, bf16=False, compile_=False))
    except (ConfigError, ValueError) as exc:
        parser.error(str(exc).splitlines()[0])
    return args


def experiment_parameters(args: argparse.Namespace) -> dict[str, Any]:
    """01's parameters at preset gpu (the smoke preset's sizes with --dry-run) with the command line's changes."""
    p = presets.notebook_parameters(gpu_results.GPU_PRESET, gpu_results.EXPERIMENT)
    if args.dry_run:
        smoke = presets.notebook_parameters("smoke", gpu_results.EXPERIMENT)
        p.update({name: smoke[name] for name in DRY_RUN_FROM_SMOKE})
    p["data"] = args.data or p["data"]
    for name, text in args.p:
        if name not in p:
            raise ValueError(f"-p: unknown parameter {name!r}; 01's parameters are {', '.join(p)}")
        try:
            p[name] = json.loads(text)
        except ValueError:
            p[name] = text
    if not isinstance(p["sigma_ws"], list) or len(set(p["sigma_ws"])) < 2:
        raise ValueError(f"-p sigma_ws: need a list of at least two values to measure a spread, got {p['sigma_ws']}")
    names = [n.strip() for n in args.optimizers.split(",") if n.strip()] if args.optimizers else p["optimizers"]
    unknown = [n for n in names if n not in p["optimizers"]]
    if unknown or len(set(names)) != len(names):
        raise ValueError(f"--optimizers: distinct names of {', '.join(p['optimizers'])}; got {args.optimizers!r}")
    order = [p["optimizers"].index(name) for name in names]
    return {**p, **{key: [p[key][i] for i in order] for key in PER_OPTIMIZER}}


def experiment_spec(args: argparse.Namespace, bf16: bool, compile_: bool, **base: Any) -> dict[str, Any]:
    """The registry's sweep of 01 for ``args.parameters`` on ``args.device``, with ``base`` changes."""
    spec = registry.experiment_spec(gpu_results.EXPERIMENT, args.parameters)
    spec["base"].update(device=args.device, bf16=bf16, compile=compile_, epochs=args.max_epochs, **base)
    return spec


def probe_spec(args: argparse.Namespace, sigmas: Sequence[float], steps: int, eval_size: int, **base: Any) -> dict:
    """What steps 1 and 2 train: 01's SGD (its first optimizer if it has none) at ``sigmas`` for ``steps`` steps,
    each split evaluated on ``eval_size`` images."""
    spec = experiment_spec(args, **{"bf16": False, "compile_": False, **base})
    zipped = spec.pop("zip")
    row = zipped["optimizer"].index("sgd") if "sgd" in zipped["optimizer"] else 0
    batch = spec["base"]["batch_size"]
    sizes = dict(train_size=steps * batch, val_size=eval_size, test_size=eval_size, train_eval_size=eval_size)
    spec["base"].update({k: v[row] for k, v in zipped.items()}, epochs=1, warmup_epochs=0.0, eval_every=1, **sizes)
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


def throughput(args: argparse.Namespace, deadline: Deadline, scratch: Path, cuda: bool) -> list[dict[str, Any]]:
    """Step 1: 01's SGD sequentially and stacked (every sigma_w), fp32 and bf16, and compiled (CUDA only)."""
    k = len(args.parameters["sigma_ws"])
    kinds = [(1, False, False), (k, False, False)] + ([(1, True, False), (k, True, False)] if cuda else [])
    kinds += [(1, False, True), (1, True, True)] if cuda and not args.no_compile_probe else []
    return [probe(args, deadline, scratch, *kind, share=args.throughput_seconds / len(kinds)) for kind in kinds]


def probe(args, deadline: Deadline, scratch: Path, stack: int, bf16: bool, compile_: bool, share: float) -> dict:
    """One throughput figure: a 3-step sweep (warm-up, compilation: ``first_call_s``), then one sized to take about
    ``share`` seconds; images/s per model from the runs' own training time (``wall_time_s``; a stack's shared)."""
    name = f"{f'stacked x{stack}' if stack > 1 else 'sequential'} {'bf16' if bf16 else 'fp32'}"
    name += " compile" if compile_ else ""
    result = {"name": name, "stacked": stack, "bf16": bf16, "compile": compile_, "note": ""}
    result.update(images_per_s=math.nan, seconds=math.nan, first_call_s=math.nan)
    batch, sigmas = args.parameters["batch_size"], args.parameters["sigma_ws"][:stack]
    most = (args.parameters["train_size"] or 50_000 - args.parameters["val_size"]) // batch
    try:
        with deadline.guard(COMPILE_PROBE_LIMIT_S if compile_ else max(4 * share, 30.0), what=f"probe {name}"):
            for key, steps in (("first_call_s", 3), ("seconds", None)):
                steps = steps or int(min(most, max(5, share * 3 / result["first_call_s"])))
                spec = probe_spec(args, sigmas, steps, batch, bf16=bf16, compile_=compile_)
                result[key] = float(scratch_sweep(spec, scratch, stack > 1)["wall_time_s"].sum())
            result["images_per_s"] = stack * steps * batch / result["seconds"]
    except DeadlineExceeded as exc:
        result["note"] = f"abandoned ({exc})"
    except Exception as exc:  # noqa: BLE001 - a failing variant is reported, the others go on
        result["note"] = f"failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    log.info("throughput %-24s %10.0f img/s %s", name, result["images_per_s"], result["note"])
    return result


def parity(args: argparse.Namespace, deadline: Deadline, scratch: Path) -> dict[str, Any]:
    """Step 2: the smallest and largest sigma_w, stacked and one by one (NCHW, as the stacked model is), in fp32."""
    sigmas = [min(args.parameters["sigma_ws"]), max(args.parameters["sigma_ws"])]
    result: dict[str, Any] = {"steps": args.parity_steps, "sigma_w": sigmas, "rtol": args.parity_rtol}
    spec = probe_spec(args, sigmas, args.parity_steps, max(args.parameters["batch_size"], 500), channels_last=False)
    try:
        with deadline.guard(max(60.0, 10 * args.throughput_seconds), what="parity check"):
            stacked, alone = (scratch_sweep(spec, scratch, stacked=s) for s in (True, False))
    except (Exception, DeadlineExceeded) as exc:  # noqa: BLE001 - reported; step 3 then trains sequentially
        return {**result, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
    worst = {}
    for name in PARITY_VARIABLES:
        x, y = np.asarray(stacked[name].values, float), np.asarray(alone[name].values, float)
        rel = np.abs(x - y) / np.maximum(np.abs(y), 1e-12)
        worst[name] = float(np.nanmax(rel)) if np.isfinite(rel).any() else math.inf
    return {**result, "max_rel_diff": worst, "ok": all(v <= args.parity_rtol for v in worst.values())}


def choose_trainer(args: argparse.Namespace, probes: list[dict], parity_ok: bool, cuda: bool) -> dict[str, Any]:
    """Mode (stacked/sequential) and precision of step 3, with the rates (images/s per model) it plans with."""
    rate = {(p["stacked"] > 1, p["bf16"]): p["images_per_s"] for p in probes if not p["compile"]}
    ok = {key: value for key, value in rate.items() if math.isfinite(value) and value > 0}
    precisions = {"fp32": [False], "bf16": [True], "auto": [False, True]}[args.precision] if cuda else [False]
    modes = {"stacked": [True], "sequential": [False], "auto": [False, True] if parity_ok else [False]}[args.mode]
    options = [(ok[(m, b)], m, b) for m in modes for b in precisions if (m, b) in ok]
    if not options:
        raise RuntimeError("no throughput figure to plan with: every probe failed (see the log)")
    best, stacked, bf16 = max(options)
    trainer = {"mode": "stacked" if stacked else "sequential", "bf16": bf16, "compile": args.compile and cuda}
    return {**trainer, "stacked_rate": best if stacked else math.nan, "sequential_rate": ok.get((False, bf16), best)}


def main(argv: Sequence[str] | None = None, clock: Callable[[], float] = time.monotonic, train=train_group) -> int:
    """Run steps 1-4; 0 when step 3 completed, 3 when it stopped early (what finished is saved), 1 when it failed.

    ``clock``: the budget's clock (seconds; a fake one disables the hard timer); ``train``: trains one group of
    step 3 (initmem.sweeps.budget.train_group; tests wrap it)."""
    args = parse_args(argv)
    deadline = Deadline(args.budget_s, clock)
    level = logging.DEBUG if args.verbose else logging.INFO
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    device, cuda = torch.device(args.device), args.device == "cuda"
    folder = results.results_paths(args.results_dir, gpu_results.GPU_PRESET, gpu_results.EXPERIMENT)[1].parent
    folder.mkdir(parents=True, exist_ok=True)
    created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    m: dict[str, Any] = {"status": "running", "command": [sys.argv[0], *(sys.argv[1:] if argv is None else argv)]}
    m.update(created=created, budget_s=args.budget_s, dry_run=args.dry_run, parameters=args.parameters)
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
            m["throughput"] = throughput(args, deadline, Path(scratch), cuda)
            m["parity"] = parity(args, deadline, Path(scratch))
        save()
        trainer = m["trainer"] = choose_trainer(args, m["throughput"], m["parity"]["ok"], cuda)
        stacked = trainer["mode"] == "stacked"
        spec = experiment_spec(args, trainer["bf16"], trainer["compile"] and not stacked)

        def seconds(group: list) -> float:
            rate = trainer["stacked_rate"] if len(group) > 1 else trainer["sequential_rate"]
            return costs.group_seconds(group, rate, PER_RUN_OVERHEAD_S)

        epochs = {"max_epochs": args.max_epochs, "min_epochs": args.min_epochs, "safety": args.safety}
        swept = timed.run_timed_experiment(
            gpu_results.EXPERIMENT,
            spec,
            preset=gpu_results.GPU_PRESET,
            results_dir=args.results_dir,
            deadline=deadline,
            group_seconds=seconds,
            stacked=stacked,
            on_group=save,
            train=train,
            **epochs,
        )
        m["status"], code = swept.status, 0 if swept.status == "complete" else 3
    except (KeyboardInterrupt, DeadlineExceeded) as exc:
        m["status"], code = f"killed ({type(exc).__name__})", 3
    except Exception as exc:  # noqa: BLE001 - recorded; what finished is saved and summarised
        log.exception("the one-shot run failed")
        m["status"] = f"failed ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    save()
    text = gpu_results.summary_text(args.results_dir)
    (folder / gpu_results.SUMMARY).write_text(text + "\n")
    print("\n" + text, flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
