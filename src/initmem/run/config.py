"""Run configuration: one dataclass, validated field by field, with a stable hash.

A :class:`RunConfig` describes one training run completely. It round-trips through JSON
(:meth:`RunConfig.to_json` / :meth:`RunConfig.from_json`), and :meth:`RunConfig.hash` is a
stable digest of the fields that change the numbers a run produces (not of the fields that only
change how it is executed, such as the progress bar or the number of CPU threads).

Every invalid value raises :class:`ConfigError` with one line naming the field and the allowed values; the value is
shown cut to a few dozen characters (:func:`shown`), however large it is. Config and spec files are read by
:func:`initmem.run.mapping_files.read_mapping_file`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, fields

from ..base.messages import shown
from . import optimizers

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start (a tenth of a quick CLI call)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ConfigError",
    "RunConfig",
    "MODELS",
    "SCHEDULES",
    "DECAY_MODES",
    "EXECUTION_FIELDS",
    "ADDED_LATER",
    "CACHE_FORMAT_VERSION",
    "MAX_EPOCHS",
    "field_value",
]

#: Bumped whenever the content of a cached run file changes meaning; part of every run hash.
#: 2: the floating-point path (memory layout, threads, compilation) and the data seed's default enter the hash;
#: runs record their clocks at the selected checkpoint; sgd_momentum's clocks use its effective step.
CACHE_FORMAT_VERSION = 2

#: The most epochs a run may have: a run records every epoch it evaluates, so its size grows with them, and a larger
#: value is refused before anything is allocated (the paper's longest runs have a few hundred).
MAX_EPOCHS = 100_000

MODELS = ("resnet9", "resnet20", "resnet32", "resnet44", "resnet56", "resnet110")
SCHEDULES = ("constant", "step", "cosine", "linear")
DECAY_MODES = ("auto", "l2", "decoupled")
DEVICES = ("auto", "cpu", "cuda")
MUON_LR_ADJUST = ("original", "match_rms_adamw")

#: Fields that change how a run executes but not what it computes; excluded from the hash. Training is chaotic:
#: whatever changes the floating-point path (memory layout, thread count, compilation, precision) moves results by
#: points, so those fields are hashed. The device is not a field of the hash ("auto" resolves at run time): each
#: run file records the device it ran on, and combining runs from different device types (or stacked with
#: sequential runs) is refused (:func:`initmem.sweeps.combine.combine_runs`).
EXECUTION_FIELDS = frozenset({"device", "progress", "checkpoint_every"})
#: The ``metadata`` of a field added to :class:`RunConfig` after cache format 2
#: (``dataclasses.field(default=..., metadata=ADDED_LATER)``): it enters a run's hash only when it differs from its
#: default, and that default must keep the old behaviour. Adding such a field therefore leaves every cached run's hash
#: as it was; format 2 hashes every other field whatever its value (:meth:`RunConfig.hash_payload`).
ADDED_LATER = {"hashed": "when set"}


class ConfigError(ValueError):
    """An invalid configuration value. The message names the field and the allowed values."""


def _with_optimizer_settings(cls: type) -> type:
    """Add each registered optimizer's own settings (:func:`initmem.run.optimizers.settings`) to ``cls`` as fields
    after those written in its body, each marked :data:`ADDED_LATER` (hashed only when set)."""
    for setting in optimizers.settings():
        if setting.name in cls.__annotations__:
            raise TypeError(f"optimizer setting {setting.name!r} is already a RunConfig field")
        cls.__annotations__[setting.name] = setting.annotation
        setattr(cls, setting.name, dataclasses.field(default=setting.default, metadata=ADDED_LATER))
    return cls


@dataclass(frozen=True)
@_with_optimizer_settings
class RunConfig:
    """Everything that defines one training run.

    Units: learning rates are per step; ``epochs`` counts passes over the ``train_size`` training
    images; ``warmup_epochs`` and ``schedule_milestones`` are fractions of training (0..1) except
    where stated; accuracies produced by a run are in percent.

    After the fields written here come the registered optimizers' own settings (``lion_beta1``, ...), declared by
    their records in :mod:`initmem.run.optimizers` with their defaults and meanings.
    """

    # --- model and initialisation -------------------------------------------------------------
    model: str = "resnet9"
    """Architecture: ``resnet9`` (BatchNorm ResNet-9) or ``resnet{20,32,44,56,110}`` (He et al. 2016)."""
    width: int | None = None
    """Base channel count; None means the architecture's default (64 for ResNet-9, 16 for CIFAR ResNets)."""
    sigma_w: float = math.sqrt(2.0)
    """Init scale: every conv/linear kernel ~ N(0, sigma_w^2 / fan_in). sqrt(2) is He initialisation."""
    init_head: bool = True
    """Whether sigma_w also sets the classifier head (False: the head keeps sigma_w = 1)."""
    logit_scale: float | None = None
    """Fixed (untrained) factor on the logits; None means the architecture's own: 0.125 for ResNet-9 (Page's
    DAWNBench net), 1 for the CIFAR ResNets. It multiplies every gradient too, so under plain SGD a smaller
    factor trains more slowly at the same ``lr``; adaptive optimizers are nearly insensitive to it."""
    seed: int = 0
    """Seed of the initialisation (model weights)."""

    # --- data ---------------------------------------------------------------------------------
    data: str | None = None
    """CIFAR-10 location (torchvision batches folder, image folder or .tar.gz), ``synthetic``, or None (search)."""
    data_seed: int | None = None
    """Seed of the train/val split, the batch order and the augmentation; None means ``seed``, so that a seed
    varies the data order as well as the weights (runs of one seed at different sigma_w still share their data)."""
    train_size: int | None = 5000
    """Training images (class-balanced, from the 50,000); None means all that the validation split leaves."""
    val_size: int = 5000
    """Validation images held out of the 50,000 training images (class-balanced)."""
    test_size: int | None = None
    """Test images (class-balanced, from the 10,000); None means all."""
    train_eval_size: int = 5000
    """Training images on which train_loss/train_acc are measured each epoch (a fixed sample)."""
    image_size: int = 32
    """Side of the input images in pixels; 32 is CIFAR-10's own; smaller sizes are area-downsampled."""
    augment: bool = False
    """Random crop (4-px padding) and horizontal flip, applied in batches on the device."""

    # --- optimisation -------------------------------------------------------------------------
    optimizer: str = "sgd"
    """The optimizer: plain SGD, SGD with heavy-ball momentum, Adam, AdamW, Muon (hybrid with AdamW), or another one
    registered in initmem.run.optimizers."""
    lr: float = 0.01
    """Peak learning rate (for Muon: of the orthogonalised hidden kernels)."""
    batch_size: int = 128
    """Images per optimisation step (the last partial batch of an epoch is dropped)."""
    epochs: int = 30
    """Passes over the ``train_size`` training images."""
    momentum: float = 0.9
    """Heavy-ball momentum of ``sgd_momentum`` (PyTorch convention)."""
    nesterov: bool = False
    """Nesterov momentum for ``sgd_momentum``."""
    betas: tuple[float, float] = (0.9, 0.999)
    """Adam/AdamW (and Muon's auxiliary Adam) moment decay rates."""
    eps: float = 1e-8
    """Adam/AdamW denominator epsilon."""
    weight_decay: float = 0.0
    """lambda: strength of the L2 penalty (coupled) or of the decoupled decay."""
    decay_mode: str = "auto"
    """``l2`` (lambda*w added to the gradient), ``decoupled`` (w <- (1 - lr*lambda) w), or ``auto``
    (the optimizer's own: decoupled for adamw and muon, l2 for sgd, sgd_momentum and adam)."""
    muon_momentum: float = 0.95
    """Muon's momentum on the hidden kernels."""
    muon_nesterov: bool = True
    """Nesterov momentum in Muon."""
    muon_ns_steps: int = 5
    """Newton-Schulz iterations of Muon's orthogonalisation."""
    muon_lr_adjust: str = "original"
    """Muon's per-matrix scale: ``original`` sqrt(max(1, rows/cols)) or ``match_rms_adamw`` 0.2 sqrt(max(rows, cols))."""
    aux_lr: float = 1e-3
    """Learning rate of the AdamW group (BatchNorm, biases, head) under Muon."""
    schedule: str = "constant"
    """Learning-rate schedule after the warm-up: constant, step (milestones), cosine or linear decay."""
    warmup_epochs: float = 0.0
    """Linear warm-up length in epochs (may be fractional)."""
    schedule_milestones: tuple[float, ...] = (0.5, 0.75)
    """``step`` schedule: fractions of training at which lr is multiplied by ``schedule_gamma``."""
    schedule_gamma: float = 0.1
    """``step`` schedule: the factor applied at each milestone."""
    final_lr_fraction: float = 0.0
    """``cosine``/``linear``: the lr at the end as a fraction of the peak."""

    # --- evaluation ---------------------------------------------------------------------------
    eval_every: int = 1
    """Record metrics every this many epochs (epoch 0 and the last epoch are always recorded)."""

    # --- execution (not part of the hash) -----------------------------------------------------
    device: str = "auto"
    """Where to train: ``auto`` (CUDA when available, else the CPU), ``cpu`` or ``cuda``."""
    num_threads: int | None = None
    """torch CPU threads of the run (None: torch's default). Part of the hash: the thread count changes the order
    of floating-point reductions, hence the numbers."""
    progress: bool = True
    """Show a progress bar."""
    checkpoint_every: int = 0
    """Save a resumable checkpoint every this many epochs (0: never). Needs a checkpoint path in train()."""
    compile: bool = False
    """torch.compile the model (CUDA only: a run on another device that sets it is refused, since it would change the
    hash and not the run, :func:`initmem.run.loop.run_device`). Part of the hash (fused kernels round differently)."""
    channels_last: bool = True
    """channels-last (NHWC) memory format for the model and the training batches. On the 2-core development CPU
    it trained ResNet-9 (width 8, 32 px) 1.4x faster and evaluated it 1.6x faster (benchmarks/throughput.py
    reports both layouts); it is the fast layout for cuDNN too. Part of the hash: the same seed's curves differed by
    up to 6 pp between the two layouts (training is chaotic)."""
    bf16: bool = False
    """bfloat16 autocast of the forward passes, training and evaluation, on the CPU as on CUDA (recorded as the
    run's autocast_dtype). Changes the numbers, so it is part of the hash."""

    # ------------------------------------------------------------------------------------------
    def __post_init__(self) -> None:
        for f in fields(self):
            object.__setattr__(self, f.name, field_value(f.name, getattr(self, f.name)))
        # Normalise list-like fields so that JSON/YAML input (lists) and Python input (tuples) agree.
        object.__setattr__(self, "betas", _as_floats("betas", self.betas))
        object.__setattr__(self, "schedule_milestones", _as_floats("schedule_milestones", self.schedule_milestones))
        self.validate()

    # --- validation ---------------------------------------------------------------------------
    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the first invalid field."""
        for f in fields(self):
            _check_type(f.name, getattr(self, f.name), f.type)
        _choice("model", self.model, MODELS)
        if optimizers.lookup(self.optimizer) is None:  # the listing only to say what is allowed
            _choice("optimizer", self.optimizer, optimizers.names())
        _choice("schedule", self.schedule, SCHEDULES)
        _choice("decay_mode", self.decay_mode, DECAY_MODES)
        _choice("device", self.device, DEVICES)
        _choice("muon_lr_adjust", self.muon_lr_adjust, MUON_LR_ADJUST)
        if self.width is not None:
            _positive_int("width", self.width)
        _positive("sigma_w", self.sigma_w)
        if self.logit_scale is not None:
            _positive("logit_scale", self.logit_scale)
        _positive("lr", self.lr)
        _positive("aux_lr", self.aux_lr)
        _positive_int("batch_size", self.batch_size)
        if not 1 <= self.epochs <= MAX_EPOCHS:
            raise ConfigError(f"epochs: must be an integer in [1, {MAX_EPOCHS}], got {shown(self.epochs)}")
        _positive_int("eval_every", self.eval_every)
        _positive_int("val_size", self.val_size, allow_zero=False)
        _positive_int("train_eval_size", self.train_eval_size)
        if self.train_size is not None:
            _positive_int("train_size", self.train_size)
            if self.train_size < self.batch_size:
                raise ConfigError(f"batch_size: must be at most train_size ({self.train_size}), got {self.batch_size}")
        if self.test_size is not None:
            _positive_int("test_size", self.test_size)
        if self.image_size not in (8, 16, 24, 32):
            raise ConfigError(f"image_size: allowed values are 8, 16, 24, 32; got {shown(self.image_size)}")
        if self.weight_decay < 0:
            raise ConfigError(f"weight_decay: must be >= 0, got {shown(self.weight_decay)}")
        allowed = optimizers.record(self.optimizer).decay_modes
        if self.decay_mode != "auto" and self.decay_mode not in allowed:
            raise ConfigError(  # only one mode is allowed: a record allows one or both
                f"decay_mode: {self.optimizer} means {allowed[0]} decay; use '{allowed[0]}' or 'auto' (optimizer 'adam' "
                "allows both)"
            )
        for name in ("momentum", "muon_momentum", "schedule_gamma", "final_lr_fraction"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"{name}: must be in [0, 1], got {shown(value)}")
        if len(self.betas) != 2 or not all(0.0 <= b < 1.0 for b in self.betas):
            raise ConfigError(f"betas: must be two numbers in [0, 1), got {shown(list(self.betas))}")
        if self.eps <= 0:
            raise ConfigError(f"eps: must be > 0, got {shown(self.eps)}")
        if self.warmup_epochs < 0 or self.warmup_epochs > self.epochs:
            raise ConfigError(f"warmup_epochs: must be in [0, epochs={self.epochs}], got {shown(self.warmup_epochs)}")
        if any(not 0.0 < m < 1.0 for m in self.schedule_milestones) or list(self.schedule_milestones) != sorted(
            self.schedule_milestones
        ):
            raise ConfigError(
                f"schedule_milestones: must be increasing fractions of training in (0, 1), got {shown(list(self.schedule_milestones))}"
            )
        _positive_int("muon_ns_steps", self.muon_ns_steps)
        for setting in optimizers.settings():
            value = getattr(self, setting.name)
            if not setting.minimum <= value < setting.below:
                raise ConfigError(
                    f"{setting.name}: must be in [{setting.minimum:g}, {setting.below:g}), got {shown(value)}"
                )
        if self.num_threads is not None:
            _positive_int("num_threads", self.num_threads)
        if self.checkpoint_every < 0:
            raise ConfigError(f"checkpoint_every: must be >= 0 (0 = never), got {shown(self.checkpoint_every)}")
        if self.seed < 0 or self.effective_data_seed < 0:
            name = "seed" if self.seed < 0 else "data_seed"
            raise ConfigError(f"{name}: must be >= 0, got {shown(getattr(self, name))}")

    # --- derived ------------------------------------------------------------------------------
    @property
    def effective_width(self) -> int:
        """The base channel count actually used."""
        if self.width is not None:
            return self.width
        return 64 if self.model == "resnet9" else 16

    @property
    def effective_data_seed(self) -> int:
        """The data seed actually used: ``data_seed``, or ``seed`` when it is None."""
        return self.seed if self.data_seed is None else self.data_seed

    @property
    def default_logit_scale(self) -> float:
        """The architecture's own logit factor: 0.125 for ResNet-9, 1 for the CIFAR ResNets."""
        return 0.125 if self.model == "resnet9" else 1.0

    @property
    def effective_logit_scale(self) -> float:
        """The logit factor actually used."""
        return self.default_logit_scale if self.logit_scale is None else self.logit_scale

    @property
    def effective_decay_mode(self) -> str:
        """``l2`` or ``decoupled`` after resolving ``auto``."""
        if self.decay_mode != "auto":
            return self.decay_mode
        return optimizers.record(self.optimizer).decay_modes[0]

    # --- serialisation ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples become lists)."""
        out = dataclasses.asdict(self)
        for key, value in out.items():
            if isinstance(value, tuple):
                out[key] = list(value)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> RunConfig:
        """Build from a mapping; unknown keys raise :class:`ConfigError` listing the known fields."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known, key=str)  # YAML keys may be numbers too
        if unknown:
            raise ConfigError(f"{unknown[0]}: unknown field; known fields are {', '.join(sorted(known))}")
        return cls(**dict(values))

    @classmethod
    def from_json(cls, text: str) -> RunConfig:
        return cls.from_dict(json.loads(text))

    def replace(self, **changes: Any) -> RunConfig:
        """A copy with some fields changed (validated)."""
        return self.from_dict({**self.to_dict(), **changes})

    def hash_payload(self) -> dict[str, Any]:
        """The normalised fields that determine the numbers a run produces; a field marked :data:`ADDED_LATER` only
        where it differs from its default."""
        at_default = {f.name for f in fields(self) if f.metadata == ADDED_LATER and getattr(self, f.name) == f.default}
        payload = {k: v for k, v in self.to_dict().items() if k not in EXECUTION_FIELDS | at_default}
        payload["width"] = self.effective_width
        payload["decay_mode"] = self.effective_decay_mode
        payload["data_seed"] = self.effective_data_seed
        payload["logit_scale"] = self.effective_logit_scale
        payload["cache_format_version"] = CACHE_FORMAT_VERSION
        return payload

    def hash(self) -> str:
        """A stable 16-hex-digit digest of :meth:`hash_payload` (independent of field order and Python)."""
        import hashlib  # here: the command line's --help and --version import this module, and never hash

        canonical = json.dumps(self.hash_payload(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


#: The fields that hold a float (an integer given for one becomes a float: :func:`field_value`).
_FLOAT_FIELDS = frozenset(f.name for f in fields(RunConfig) if str(f.type).startswith("float"))


# --- validation helpers -----------------------------------------------------------------------
#: What :func:`shown` writes of a value: three levels of nesting, six items of a list or mapping, 40 characters of a
#: string or number.
_TYPE_NAMES = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


def field_value(name: str, value: Any) -> Any:
    """``value`` as RunConfig field ``name`` holds it: an integer given for a float field becomes a float (so
    ``sigma_w: 1`` and ``sigma_w: 1.0`` are one run, one hash); anything else is left to :meth:`RunConfig.validate`.

    Raises:
        ConfigError: an integer too large for a float (above about 1.8e308).
    """
    if name in _FLOAT_FIELDS and isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise ConfigError(f"{name}: must be a finite number, got {shown(value)}") from None
    return value


def _as_floats(name: str, value: Any) -> tuple[float, ...]:
    """A list-like field (``betas``, ``schedule_milestones``) as a tuple of floats, or :class:`ConfigError`."""
    if isinstance(value, (list, tuple)) and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value):
        with contextlib.suppress(OverflowError):
            return tuple(float(v) for v in value)
    raise ConfigError(f"{name}: must be a list of numbers, got {shown(value)}")


def _check_type(name: str, value: Any, annotation: Any) -> None:
    """Check scalars against the field's annotation string (``int``, ``float | None``, ...)."""
    text = str(annotation)
    optional = "None" in text
    if value is None:
        if optional:
            return
        raise ConfigError(f"{name}: must not be null")
    base = text.replace(" | None", "").strip()
    if base == "bool":
        ok = isinstance(value, bool)
    elif base == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif base == "float":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    elif base == "str":
        ok = isinstance(value, str)
    else:  # tuples are normalised in __post_init__
        return
    if not ok:
        expected = _TYPE_NAMES.get({"bool": bool, "int": int, "float": float, "str": str}[base])
        raise ConfigError(f"{name}: must be {expected}{' or null' if optional else ''}, got {shown(value)}")


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(f"{name}: allowed values are {', '.join(allowed)}; got {shown(value)}")


def _positive(name: str, value: float) -> None:
    if not value > 0:
        raise ConfigError(f"{name}: must be > 0, got {shown(value)}")


def _positive_int(name: str, value: int, allow_zero: bool = False) -> None:
    if value < 0 or (value == 0 and not allow_zero):
        raise ConfigError(f"{name}: must be a positive integer, got {shown(value)}")
