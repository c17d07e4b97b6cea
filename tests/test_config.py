"""RunConfig: validation messages, JSON round trip, a stable hash."""

from __future__ import annotations

import json
import math

import pytest

from initmem.run.config import CACHE_FORMAT_VERSION, ConfigError, RunConfig


def test_defaults_are_valid_and_he_initialisation():
    config = RunConfig()
    assert config.sigma_w == pytest.approx(math.sqrt(2.0))
    assert config.effective_width == 64
    assert RunConfig(model="resnet56").effective_width == 16


def test_logit_scale_defaults_to_the_architectures():
    assert RunConfig().effective_logit_scale == 0.125 and RunConfig(model="resnet56").effective_logit_scale == 1.0
    # the architecture's own factor, implicit or explicit, hashes the same
    assert RunConfig(logit_scale=0.125).hash() == RunConfig().hash()
    assert RunConfig(model="resnet56", logit_scale=1).hash() == RunConfig(model="resnet56").hash()
    assert RunConfig(logit_scale=1.0).hash() != RunConfig().hash()
    assert RunConfig(model="resnet56", logit_scale=0.125).hash() != RunConfig(model="resnet56").hash()
    for bad in (0.0, -1.0):
        with pytest.raises(ConfigError, match="logit_scale: must be > 0"):
            RunConfig(logit_scale=bad)


def test_json_round_trip_preserves_every_field():
    config = RunConfig(optimizer="adamw", betas=(0.8, 0.95), schedule="step", schedule_milestones=(0.3, 0.6), width=8)
    again = RunConfig.from_json(config.to_json())
    assert again == config
    assert json.loads(config.to_json())["betas"] == [0.8, 0.95]


def test_hash_is_stable_and_ignores_execution_fields():
    config = RunConfig(sigma_w=0.5)
    assert config.hash() == RunConfig(sigma_w=0.5).hash()
    assert config.hash() == config.replace(progress=False, device="cpu", checkpoint_every=5).hash()
    assert config.hash() != config.replace(sigma_w=0.25).hash()
    assert config.hash() != config.replace(bf16=True).hash()
    # explicit defaults and resolved 'auto' values hash the same as the implicit ones
    assert config.hash() == config.replace(width=64, decay_mode="l2").hash()
    assert config.hash_payload()["cache_format_version"] == CACHE_FORMAT_VERSION
    assert len(config.hash()) == 16


def test_hash_is_pinned():
    # A change of this digest silently orphans every cached result (results/ holds committed ones):
    # when the meaning of a run changes on purpose, bump CACHE_FORMAT_VERSION and update this value.
    assert RunConfig().hash() == "12467e1475ff134a"


@pytest.mark.parametrize(
    ("changes", "field", "hint"),
    [
        ({"optimizer": "no_such_optimizer"}, "optimizer", "sgd, sgd_momentum, adam, adamw, muon"),
        ({"model": "resnet18"}, "model", "resnet9"),
        ({"sigma_w": 0.0}, "sigma_w", "> 0"),
        ({"sigma_w": "big"}, "sigma_w", "a number"),
        ({"epochs": 1.5}, "epochs", "an integer"),
        ({"augment": "yes"}, "augment", "true or false"),
        ({"batch_size": 256, "train_size": 100}, "batch_size", "train_size"),
        ({"image_size": 20}, "image_size", "8, 16, 24, 32"),
        ({"optimizer": "adamw", "decay_mode": "l2"}, "decay_mode", "decoupled"),
        ({"betas": [0.9]}, "betas", "two numbers"),
        ({"schedule_milestones": [0.8, 0.2]}, "schedule_milestones", "increasing"),
        ({"weight_decay": -1.0}, "weight_decay", ">= 0"),
        ({"colour": "red"}, "colour", "known fields"),
    ],
)
def test_invalid_values_name_the_field_and_the_allowed_values(changes, field, hint):
    with pytest.raises(ConfigError) as info:
        RunConfig.from_dict({**RunConfig().to_dict(), **changes})
    message = str(info.value)
    assert message.startswith(f"{field}:")
    assert hint in message
    assert "\n" not in message


def test_effective_decay_mode():
    assert RunConfig(optimizer="sgd").effective_decay_mode == "l2"
    assert RunConfig(optimizer="adamw").effective_decay_mode == "decoupled"
    assert RunConfig(optimizer="muon").effective_decay_mode == "decoupled"
    assert RunConfig(optimizer="adam", decay_mode="decoupled").effective_decay_mode == "decoupled"


def test_integer_for_a_float_field_is_the_same_run():
    assert RunConfig(sigma_w=1).hash() == RunConfig(sigma_w=1.0).hash()
    assert isinstance(RunConfig(lr=1).lr, float)


def test_read_mapping_file_names_the_option_and_the_problem(tmp_path):
    from initmem.run.mapping_files import read_mapping_file

    good = tmp_path / "run.yaml"
    good.write_text("lr: 0.05\nsigma_w: 2\n")
    assert read_mapping_file(good, "--config") == {"lr": 0.05, "sigma_w": 2}
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert read_mapping_file(empty, "sweep spec") == {}
    with pytest.raises(ConfigError, match=r"^--config: no such file .*missing\.yaml"):
        read_mapping_file(tmp_path / "missing.yaml", "--config")
    broken = tmp_path / "broken.yaml"
    broken.write_text("lr: [0.05\n")
    with pytest.raises(ConfigError, match=r"^sweep spec: .*broken\.yaml is not valid JSON/YAML"):
        read_mapping_file(broken, "sweep spec")
    listed = tmp_path / "list.yaml"
    listed.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match=r"^--config: .*list\.yaml must hold a mapping, not a list"):
        read_mapping_file(listed, "--config")


@pytest.mark.parametrize(
    "change",
    [{"channels_last": False}, {"num_threads": 1}, {"num_threads": 2}, {"compile": True}, {"bf16": True}],
)
def test_fields_that_change_the_floating_point_path_change_the_hash(change):
    """Memory layout, thread count, compilation and precision move results by points: never one cache file."""
    config = RunConfig(sigma_w=0.5, num_threads=4)
    assert config.hash() != config.replace(**change).hash()


def test_data_seed_defaults_to_the_seed():
    """A seed varies the data order as well as the weights; an explicit data seed equal to it hashes the same."""
    assert RunConfig(seed=3).effective_data_seed == 3
    assert RunConfig(seed=3, data_seed=0).effective_data_seed == 0
    assert RunConfig(seed=3).hash() == RunConfig(seed=3, data_seed=3).hash()
    assert RunConfig(seed=3).hash() != RunConfig(seed=3, data_seed=0).hash()
    with pytest.raises(ConfigError, match="data_seed: must be >= 0"):
        RunConfig(data_seed=-1)


def test_a_field_added_later_with_a_default_keeps_every_committed_hash():
    """A RunConfig field added after cache format 2 with metadata ADDED_LATER enters the hash only when set, so the
    committed run files keep their names; the same field added without the marker would rename every one of them."""
    import dataclasses
    import json
    from pathlib import Path

    import xarray as xr

    from initmem.run.config import ADDED_LATER, EXECUTION_FIELDS

    @dataclasses.dataclass(frozen=True)
    class Later(RunConfig):
        lion_beta: float = dataclasses.field(default=0.99, metadata=ADDED_LATER)

    @dataclasses.dataclass(frozen=True)
    class Unmarked(RunConfig):
        lion_beta: float = 0.99

    files = sorted((Path(__file__).resolve().parents[1] / "results").glob("*/*/runs/*.nc"))[::25]
    if not files:
        pytest.skip("no committed run files")
    for path in files:
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            recorded = {k: v for k, v in json.loads(ds.attrs["config"]).items() if k not in EXECUTION_FIELDS}
        assert Later.from_dict(recorded).hash() == path.stem, path
        assert Unmarked.from_dict(recorded).hash() != path.stem, path
        assert Later.from_dict({**recorded, "lion_beta": 0.9}).hash() != path.stem  # set, it is part of the hash
