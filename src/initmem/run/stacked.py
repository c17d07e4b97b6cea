"""Stacked training: K runs that differ only in their initialisation, trained as ONE batched model.

Runs whose configs agree in everything but the init fields (:data:`INIT_FIELDS`: ``sigma_w``, ``seed``,
``init_head``) see bit-identical batches, learning rates and optimizer settings. :func:`train_stacked` stacks their
parameters and buffers along a leading dimension of size K (``torch.func.stack_module_state``) and runs the network
with ``torch.func.vmap(functional_call(...))``: one forward/backward pass trains all K models. Each member's result
is a Dataset identical in structure and meaning to :func:`initmem.run.training.train`'s, with the attribute
``stacked = K``. Runs of an optimizer whose record is not ``elementwise`` (:mod:`initmem.run.optimizers`; Muon)
fall back to sequential :func:`train` calls (logged); a diverged member stops recording and the others continue.

It equals K separate runs up to float rounding, which max-pooling can amplify into drift, so stacked runs are cached
apart from sequential ones (:func:`initmem.sweeps.store.run_path`); ``wall_time_s`` and ``cpu_time_s`` are equal
shares of the stack's, and ``channels_last`` and ``compile`` are not applied. It is meant for GPUs (on a CPU it is
slower than sequential runs). Why it is exact, and where it differs, is in the book's Reproduce chapter.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import logging
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
import xarray as xr
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from . import optimizers
from .config import RunConfig
from .data.batches import eval_batches
from .data.prepare import PreparedData
from .elapsed import Elapsed, load_average, now
from .kernels import kernel_parameters
from .loop import (
    BatchChecks,
    DivergenceWatch,
    TrainingStep,
    checkpoint_due,
    epoch_bar,
    guard_memory,
    initial_row,
    read_checkpoint,
    save_checkpoint,
    setup_run,
    state_mismatch,
)
from .optim.build import build_optimizer
from .records import RunHistory, eval_batch_size, kernel_norms, to_dataset
from .sigma_w import seeded_model
from .training import train
from .variables import recorded_epochs

__all__ = ["INIT_FIELDS", "stack_key", "stack_groups", "group_hash", "train_stacked"]

log = logging.getLogger(__name__)

#: Fields that only change a run's starting weights: runs differing only in these can be stacked.
INIT_FIELDS = ("sigma_w", "seed", "init_head")
#: 3: each member's divergence reason ("" while it trains) instead of an alive flag.
STACKED_CHECKPOINT_VERSION = 3


# --- grouping -----------------------------------------------------------------------------------
def stack_key(config: RunConfig) -> str:
    """A digest of everything except :data:`INIT_FIELDS`: equal keys can share a stack."""
    payload = {k: v for k, v in config.hash_payload().items() if k not in INIT_FIELDS}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def stack_groups(configs: Iterable[RunConfig], max_size: int | None = None) -> list[list[RunConfig]]:
    """Split ``configs`` into stackable groups (equal :func:`stack_key`, first-seen order), each of at most
    ``max_size`` runs. Runs of an optimizer whose update is not elementwise (Muon's per-matrix orthogonalisation,
    :attr:`~initmem.run.optimizers.Optimizer.elementwise`) form groups of one."""
    groups: dict[str, list[RunConfig]] = {}
    singles: list[list[RunConfig]] = []
    for config in configs:
        if not optimizers.record(config.optimizer).elementwise:
            singles.append([config])
        else:
            groups.setdefault(stack_key(config), []).append(config)
    if singles:
        names = sorted({group[0].optimizer for group in singles})
        log.info(
            "%d runs of %s are trained one at a time: their updates are per matrix, not elementwise",
            len(singles),
            ", ".join(names),
        )
    size = max_size or max((len(g) for g in groups.values()), default=1)
    chunks = [group[i : i + size] for group in groups.values() for i in range(0, len(group), size)]
    return chunks + singles


def group_hash(configs: Sequence[RunConfig]) -> str:
    """A digest of the members' hashes (in order): names a stack's checkpoint."""
    return hashlib.sha256(",".join(c.hash() for c in configs).encode()).hexdigest()[:16]


# --- the stacked model ----------------------------------------------------------------------------
class _Stack(nn.Module):
    """K models' parameters stacked along dim 0 (as real ``nn.Parameter``s, so ``build_optimizer`` and
    ``state_dict`` work) plus their stacked buffers, and a meta-device template for the forward pass."""

    def __init__(self, members: Sequence[nn.Module]) -> None:
        super().__init__()
        params, buffers = stack_module_state(list(members))
        self.names = list(params)
        self.k = len(members)
        for i, name in enumerate(self.names):
            self.register_parameter(f"p{i}", nn.Parameter(params[name].detach().clone()))
        self.buffer_names = list(buffers)
        for i, name in enumerate(self.buffer_names):
            self.register_buffer(f"b{i}", buffers[name].clone())
        # not a registered submodule: its (meta) parameters must stay out of parameters()/state_dict()
        object.__setattr__(self, "template", copy.deepcopy(members[0]).to("meta"))
        self.kernel_names = [f"{name}.weight" for name in kernel_parameters(members[0])]
        self.layer_names = list(kernel_parameters(members[0]))

    def stacked(self) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        """(parameters, buffers) keyed by the template's names; each tensor has a leading dim K."""
        params = {name: getattr(self, f"p{i}") for i, name in enumerate(self.names)}
        buffers = {name: getattr(self, f"b{i}") for i, name in enumerate(self.buffer_names)}
        return params, buffers

    def member_kernels(self, k: int) -> dict[str, torch.Tensor]:
        """Member ``k``'s kernels keyed by layer name, like :func:`initmem.run.kernels.kernel_parameters`."""
        params, _ = self.stacked()
        return {layer: params[name][k] for layer, name in zip(self.layer_names, self.kernel_names)}

    def logits(self, x: torch.Tensor, training: bool) -> torch.Tensor:
        """``(B, 3, H, W) -> (K, B, classes)``; training mode updates the stacked running statistics."""
        self.template.train(training)
        params, buffers = self.stacked()

        def one(p: dict, b: dict, images: torch.Tensor) -> torch.Tensor:
            return functional_call(self.template, (p, b), (images,))

        return vmap(one, in_dims=(0, 0, None))(params, buffers, x)


def _member_losses(logits: torch.Tensor, y: torch.Tensor, reduction: str) -> torch.Tensor:
    """Cross-entropy of each member: logits (K, B, C), labels (B,) -> (K,) float32."""
    return vmap(lambda member: F.cross_entropy(member.float(), y, reduction=reduction))(logits)


@torch.no_grad()
def _evaluate_stacked(stack: _Stack, data, batch_size: int, autocast) -> tuple[np.ndarray, np.ndarray]:
    """Per-member mean cross-entropy (nats) and accuracy (%) in eval mode: two arrays of shape (K,).

    The vmapped counterpart of ``initmem.run.records.evaluate`` (per-batch float32 sums, float64 totals)."""
    loss_sum = torch.zeros(stack.k, dtype=torch.float64)
    correct = torch.zeros(stack.k, dtype=torch.int64)
    count = 0
    for x, y in eval_batches(data, batch_size):
        with autocast():
            logits = stack.logits(x, training=False)
        loss_sum += _member_losses(logits, y, "sum").double().cpu()
        correct += (logits.argmax(-1) == y).sum(1).cpu()
        count += y.numel()
    return (loss_sum / count).numpy(), (100.0 * correct.double() / count).numpy()


def _measure_stacked(
    stack: _Stack, data: PreparedData, config: RunConfig, initial: list[dict], autocast
) -> list[tuple[dict, dict]]:
    """The ``measure`` rows of every member: [(row, layer_norms)] * K (see ``initmem.run.records.measure``)."""
    bs = eval_batch_size(config)
    rows: list[dict[str, float]] = [{} for _ in range(stack.k)]
    for split in ("train", "val", "test"):
        dataset = data.train_eval if split == "train" else getattr(data, split)
        losses, accs = _evaluate_stacked(stack, dataset, bs, autocast)
        for k in range(stack.k):
            rows[k][f"{split}_loss"], rows[k][f"{split}_acc"] = float(losses[k]), float(accs[k])
    out = []
    with torch.no_grad():
        for k in range(stack.k):
            norms, layer_norms = kernel_norms(stack.member_kernels(k), initial[k])
            rows[k].update(norms)
            out.append((rows[k], layer_norms))
    return out


def _check_group(configs: Sequence[RunConfig]) -> None:
    if not configs:
        raise ValueError("configs: need at least one run to stack")
    keys = {stack_key(c) for c in configs}
    if len(keys) > 1:
        raise ValueError(
            f"configs: stacked runs may differ only in {', '.join(INIT_FIELDS)}; got {len(keys)} different groups"
        )
    hashes = [c.hash() for c in configs]
    if len(set(hashes)) != len(hashes):
        raise ValueError("configs: the same run appears twice in the stack")


# --- training -------------------------------------------------------------------------------------
@guard_memory
def train_stacked(
    configs: Sequence[RunConfig],
    *,
    data: PreparedData | None = None,
    progress: bool | None = None,
    checkpoint_path: str | Path | None = None,
    keep_checkpoint: bool = False,
) -> list[xr.Dataset]:
    """Train ``configs`` (equal except for :data:`INIT_FIELDS`) as one stacked model.

    Args:
        configs: the K runs; K = 1 and an optimizer that is not elementwise simply call :func:`train` in turn.
        data: prepared data of these configs (they share it).
        progress: one tqdm bar for the stack; None follows ``configs[0].progress``.
        checkpoint_path: resumable checkpoint of the whole stack, saved every ``checkpoint_every`` epochs
            (as in :func:`train`) and deleted at the end, unless ``keep_checkpoint`` (then the caller deletes it
            once the results are safely written).

    Returns:
        One Dataset per config, in order, each like :func:`train`'s plus ``attrs["stacked"] = K``.
    """
    configs = list(configs)
    _check_group(configs)
    ref = configs[0]
    if len(configs) == 1 or not optimizers.record(ref.optimizer).elementwise:
        if len(configs) > 1:
            log.info("%s updates are not elementwise: training %d runs sequentially", ref.optimizer, len(configs))
        return [train(c, data=data, progress=progress) for c in configs]

    setup = setup_run(ref, data)
    data = setup.data
    checkpoint_path = Path(checkpoint_path) if checkpoint_path is not None else None

    members = [seeded_model(c).to(setup.device) for c in configs]
    initial = [{n: w.detach().clone() for n, w in kernel_parameters(m).items()} for m in members]
    stack = _Stack(members)
    step = TrainingStep.of(ref, data, build_optimizer(stack, ref))
    recorded = recorded_epochs(ref)
    k_total = len(configs)
    histories = [RunHistory() for _ in configs]
    divergences = [""] * k_total  # why each member diverged; "" while it trains
    spent, load_start = [Elapsed()] * k_total, load_average()
    start_epoch = 1

    state = _load_stack_checkpoint(checkpoint_path, configs, stack, step.optimizer)
    if state is not None:
        stack.load_state_dict(state["stack"])
        step.resume(state)
        histories, divergences = state["histories"], state["divergences"]
        cpus = state.get("cpus", [math.nan] * k_total)  # a checkpoint from before CPU time was recorded: unknown
        spent = [Elapsed(wall, cpu) for wall, cpu in zip(state["walls"], cpus)]
        start_epoch = state["epoch"] + 1
        log.info("resumed stack %s at epoch %d", group_hash(configs), state["epoch"])
    else:
        for k, (member, config) in enumerate(zip(members, configs)):
            start = now()
            histories[k].add(0, *initial_row(member, setup, config, initial[k], step))
            spent[k] += now() - start
    del members
    checks = BatchChecks.of([DivergenceWatch.of(history.rows[0]) for history in histories])
    alive = torch.tensor([not reason for reason in divergences], device=setup.device)  # (K,), on the device

    def stop(k: int, reason: str) -> None:
        """Mark member ``k`` diverged for ``reason`` (unless it already is): it trains and is recorded no further."""
        if reason and not divergences[k]:
            divergences[k] = reason
            alive[k] = False
            log.warning("run %s diverged: %s", configs[k].hash(), reason)

    show = ref.progress if progress is None else progress
    bar = epoch_bar(ref.epochs, start_epoch, show, f"stacked x{k_total} {ref.optimizer}")
    for epoch in range(start_epoch, ref.epochs + 1):
        start = now()
        running = [k for k in range(k_total) if not divergences[k]]
        for x, y in step.schedule.batches(data, epoch):
            with setup.autocast():
                losses = _member_losses(stack.logits(x, training=True), y, "mean")
            if checks.add(torch.where(alive, losses, 0.0)):  # a diverged member's losses are 0 here: checked once
                for k, reason in enumerate(checks.check(epoch)):
                    stop(k, reason)
                if all(divergences):
                    break
            step.take(torch.where(alive, losses, 0.0).sum())
        for k, reason in enumerate(checks.check(epoch)):  # the epoch's batches since the last check
            stop(k, reason)
        if epoch in recorded and not all(divergences):
            measured = _measure_stacked(stack, data, ref, initial, setup.autocast)
            for k in range(k_total):
                if divergences[k]:
                    continue
                row, layer_norms = measured[k]
                stop(k, checks.watches[k].record(row, epoch))
                if not divergences[k]:
                    row.update(step.record())
                    histories[k].add(epoch, row, layer_norms)
        if all(divergences):
            break
        share = (now() - start) / max(1, len(running))
        for k in running:
            spent[k] += share
        bar.update(1)
        if checkpoint_due(checkpoint_path, ref, epoch):
            save_checkpoint(
                checkpoint_path,
                {
                    "version": STACKED_CHECKPOINT_VERSION,
                    "hashes": [c.hash() for c in configs],
                    "epoch": epoch,
                    "stack": stack.state_dict(),
                    **step.state(),
                    "histories": [dataclasses.asdict(h) for h in histories],
                    "divergences": divergences,
                    "walls": [s.wall for s in spent],
                    "cpus": [s.cpu for s in spent],
                },
            )
    bar.close()

    datasets = []
    for k, config in enumerate(configs):
        ds = to_dataset(config, histories[k], recorded, divergences[k], spent[k], data, setup.device, load_start)
        ds.attrs.update(stacked=k_total, channels_last=0, compiled=0)
        datasets.append(ds)
    if checkpoint_path is not None and not keep_checkpoint:
        checkpoint_path.unlink(missing_ok=True)
    return datasets


def _load_stack_checkpoint(
    path: Path | None, configs: Sequence[RunConfig], stack: torch.nn.Module, optimizer: torch.optim.Optimizer
) -> dict[str, Any] | None:
    hashes = [c.hash() for c in configs]

    def mismatch(state: dict[str, Any]) -> str:
        if state.get("version") != STACKED_CHECKPOINT_VERSION or state.get("hashes") != hashes:
            return "it belongs to another stack or checkpoint format"
        return state_mismatch(state.get("stack"), stack, optimizer, state.get("optimizer"))

    state = read_checkpoint(path, f"stack {group_hash(configs)}", mismatch)
    if state is not None:
        state["histories"] = [RunHistory(**h) for h in state["histories"]]
    return state
