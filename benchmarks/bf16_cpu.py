"""bf16 autocast against float32 on the CPU: training steps of the cpu preset's network, side by side.

``RunConfig.bf16`` runs every forward pass under ``torch.autocast(<device type>, dtype=torch.bfloat16)``, on the CPU
as on CUDA. This times training steps of ResNet-9 at width 8, batch 64, on 32-px synthetic images with one thread
(the ``cpu`` preset's network) in both precisions, in one process: after an uncounted round, ``--rounds`` rounds of
``--steps`` float32 steps then ``--steps`` bf16 steps, each built as :func:`initmem.train` builds them (the
autocast context of :func:`initmem.run.loop.setup_run`, the seeded channels-last model, the optimizer, the
device-resident batches of :meth:`initmem.run.loop.Schedule.batches`). The clock is the process's CPU time (one thread: less disturbed by other processes than
wall time). Prints the median images per CPU-second of each and the median of the rounds' bf16 / fp32 time ratios,
with the CPU's capability (bf16 is fast only on CPUs with native bf16 arithmetic, AVX512-BF16 or AMX).

    python benchmarks/bf16_cpu.py --steps 12 --rounds 4
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from initmem import RunConfig
from initmem.run.loop import RunSetup, Schedule, setup_run
from initmem.run.optim.build import build_optimizer
from initmem.run.sigma_w import seeded_model


def step_seconds(config: RunConfig, setup: RunSetup, steps: int, epoch: int) -> float:
    """CPU seconds of ``steps`` training steps of a fresh seeded model on the batches of ``epoch``."""
    model = seeded_model(config).to(setup.device, memory_format=torch.channels_last).train()
    optimizer = build_optimizer(model, config)
    batches = Schedule.of(config, setup.data).batches(setup.data, epoch)
    start = time.process_time()
    for _, (x, y) in zip(range(steps), batches):
        with setup.autocast():
            loss = F.cross_entropy(model(x.contiguous(memory_format=torch.channels_last)), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=12, help="steps per precision and round (default 12)")
    parser.add_argument("--rounds", type=int, default=4, help="timed rounds (default 4)")
    args = parser.parse_args()
    for name in ("steps", "rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name}: must be at least 1, got {getattr(args, name)}")

    fp32 = RunConfig(
        model="resnet9", width=8, batch_size=64, image_size=32, data="synthetic", num_threads=1, device="cpu",
        train_size=64 * args.steps, val_size=64, test_size=64, train_eval_size=64, progress=False,
    )  # fmt: skip
    bf16 = fp32.replace(bf16=True)
    setups = {"fp32": setup_run(fp32)}
    setups["bf16"] = setup_run(bf16, data=setups["fp32"].data)
    seconds: dict[str, list[float]] = {"fp32": [], "bf16": []}
    for round_ in range(args.rounds + 1):
        for name, config in (("fp32", fp32), ("bf16", bf16)):
            spent = step_seconds(config, setups[name], args.steps, epoch=round_ + 1)
            if round_:  # round 0 warms up
                seconds[name].append(spent)

    images = args.steps * fp32.batch_size
    print(
        f"ResNet-9 width 8, batch 64, 32 px, {torch.get_num_threads()} thread, torch {torch.__version__}, CPU "
        f"capability {torch.backends.cpu.get_cpu_capability()}; {args.rounds} rounds of {args.steps} steps each"
    )
    for name, values in seconds.items():
        print(f"  {name}: {images / statistics.median(values):7.0f} img per CPU-s (median)")
    ratios = [b / a for a, b in zip(seconds["fp32"], seconds["bf16"])]
    print(f"  time bf16 / fp32: {statistics.median(ratios):.2f} (rounds: {', '.join(f'{r:.2f}' for r in ratios)})")


if __name__ == "__main__":
    main()
