"""Training throughput of initmem's loop against a conventional PyTorch loop, side by side.

Both loops train the same model (same width, batch size, optimizer and device) for the same number of
steps. initmem keeps the whole split as normalised tensors on the device and augments whole batches
there; the conventional loop is what most CIFAR-10 code does: a torchvision-style dataset that turns
each uint8 image into a PIL image, per-image torchvision transforms, and a ``DataLoader``.

    python benchmarks/throughput.py --width 16 --steps 40 --augment
    python benchmarks/throughput.py --device cuda --width 64 --steps 200 --workers 8

Prints images/s of each loop and their ratios; "initmem NCHW" is initmem's loop without the channels-last memory
format, which isolates that format's share of the speed-up. Timings exclude one warm-up pass of 5 steps each.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

from initmem import RunConfig
from initmem.run.data.batches import CIFAR10_MEAN, CIFAR10_STD, train_batches
from initmem.run.data.decode import load_cifar10
from initmem.run.data.prepare import prepare_data
from initmem.run.data.synthetic import synthetic_cifar
from initmem.run.loop import resolve_device
from initmem.run.optim.build import build_optimizer
from initmem.run.sigma_w import seeded_model


class ConventionalCIFAR(Dataset):
    """torchvision.datasets.CIFAR10's __getitem__: uint8 array -> PIL image -> transforms."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, augment: bool):
        from PIL import Image

        self._to_pil = Image.fromarray
        self.images, self.labels = images, labels
        steps = [transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip()] if augment else []
        self.transform = transforms.Compose(
            [*steps, transforms.ToTensor(), transforms.Normalize(CIFAR10_MEAN, CIFAR10_STD)]
        )

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int):
        return self.transform(self._to_pil(self.images[i])), int(self.labels[i])


def _train_steps(model, optimizer, batches, steps: int, device, channels_last: bool) -> float:
    """Seconds for ``steps`` optimisation steps drawn from ``batches`` (after 5 warm-up steps)."""
    memory_format = torch.channels_last if channels_last else torch.contiguous_format
    model.to(memory_format=memory_format).train()
    iterator = iter(batches)
    for i in range(steps + 5):
        if i == 5:
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
        x, y = next(iterator)
        x, y = x.to(device, non_blocking=True).contiguous(memory_format=memory_format), y.to(device, non_blocking=True)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def _endless(make_epoch):
    epoch = 0
    while True:
        epoch += 1
        yield from make_epoch(epoch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--train-size", type=int, default=5000)
    parser.add_argument("--augment", action="store_true")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--workers", type=int, default=0, help="DataLoader workers of the conventional loop")
    parser.add_argument("--data", default=None, help="CIFAR-10 location (default: search; 'synthetic' for none)")
    args = parser.parse_args()

    device = resolve_device(args.device)
    config = RunConfig(
        width=args.width,
        batch_size=args.batch_size,
        train_size=args.train_size,
        val_size=1000,
        test_size=1000,
        train_eval_size=1000,
        augment=args.augment,
        data=args.data,
        device=str(device),
        progress=False,
    )
    prepared = prepare_data(config, device)
    arrays = synthetic_cifar(args.train_size, 10) if args.data == "synthetic" else load_cifar10(args.data)
    images, labels = arrays.train_images[prepared.split.train], arrays.train_labels[prepared.split.train]

    results = {}
    for name in ("initmem", "initmem NCHW", "conventional"):
        torch.manual_seed(0)
        model = seeded_model(config).to(device)
        optimizer = build_optimizer(model, config)
        if name.startswith("initmem"):
            batches = _endless(lambda e: train_batches(prepared.train, args.batch_size, e, 0, args.augment))
        else:
            loader = DataLoader(
                ConventionalCIFAR(images, labels, args.augment),
                batch_size=args.batch_size,
                shuffle=True,
                drop_last=True,
                num_workers=args.workers,
                pin_memory=device.type == "cuda",
                persistent_workers=args.workers > 0,
            )
            batches = _endless(lambda e, loader=loader: loader)
        # initmem trains channels-last (RunConfig.channels_last); "initmem NCHW" isolates the memory format.
        channels_last = name == "initmem"
        seconds = _train_steps(model, optimizer, batches, args.steps, device, channels_last)
        results[name] = args.steps * args.batch_size / seconds

    print(
        f"device {device} ({torch.get_num_threads()} threads), ResNet-9 width {args.width}, batch {args.batch_size}, "
        f"augment {args.augment}, {args.steps} timed steps, conventional DataLoader workers {args.workers}"
    )
    for name, rate in results.items():
        print(f"  {name:>12}: {rate:8.0f} img/s")
    print(f"  ratio initmem / conventional: {results['initmem'] / results['conventional']:.2f}x")
    print(f"  ratio channels-last / NCHW (same loop): {results['initmem'] / results['initmem NCHW']:.2f}x")


if __name__ == "__main__":
    main()
