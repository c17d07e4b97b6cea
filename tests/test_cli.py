"""The ``initmem`` command: flags for every RunConfig field, config files, clear errors with exit code 2."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import fields

import pytest
import xarray as xr

from initmem.cli import build_parser, main
from initmem.cli.flags import config_from_args
from initmem.run.config import RunConfig
from tiny import TINY_FLAGS  # tests/ is on sys.path under pytest

TINY = [*TINY_FLAGS, "--epochs", "1"]


def test_every_field_is_a_flag():
    parser = build_parser()
    train = parser._subparsers._group_actions[0].choices["train"]
    flags = {option for action in train._actions for option in action.option_strings}
    for f in fields(RunConfig):
        assert "--" + f.name.replace("_", "-") in flags, f.name


def test_flags_override_the_config_file(tmp_path):
    config_file = tmp_path / "run.yaml"
    config_file.write_text("optimizer: adam\nlr: 0.001\nsigma_w: 2.0\nbetas: [0.9, 0.99]\n")
    args = build_parser().parse_args(
        ["train", "--config", str(config_file), "--sigma-w", "0.5", "--out", "x.nc", "--width", "none"]
    )
    config = config_from_args(args)
    assert (config.optimizer, config.lr, config.sigma_w, config.betas, config.width) == (
        "adam",
        0.001,
        0.5,
        (0.9, 0.99),
        None,
    )


@pytest.mark.parametrize(
    ("flags", "field"),
    [
        (["--optimizer", "no_such_optimizer"], "optimizer"),
        (["--sigma-w", "big"], "sigma_w"),
        (["--epochs", "0"], "epochs"),
        (["--betas", "[0.9]"], "betas"),
    ],
)
def test_invalid_value_prints_one_line_and_exits_2(flags, field, capsys, tmp_path):
    code = main(["train", *TINY, *flags, "--out", str(tmp_path / "run.nc")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1
    assert f"error: {field}:" in err
    assert not (tmp_path / "run.nc").exists()


def test_unknown_field_in_config_file_names_it(tmp_path, capsys):
    config_file = tmp_path / "run.json"
    config_file.write_text('{"sigma": 1.0}')
    assert main(["train", "--config", str(config_file), "--out", str(tmp_path / "x.nc")]) == 2
    assert "sigma: unknown field" in capsys.readouterr().err


@pytest.mark.slow
def test_python_m_initmem_trains_one_run(tmp_path):
    out = tmp_path / "run.nc"
    result = subprocess.run(
        [sys.executable, "-m", "initmem", "train", *TINY, "--sigma-w", "0.5", "--optimizer", "sgd", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "selected test acc" in result.stdout
    ds = xr.load_dataset(out, engine="h5netcdf")
    assert RunConfig.from_json(ds.attrs["config"]).sigma_w == 0.5
    assert list(ds.epoch.values) == [0, 1]


@pytest.mark.parametrize("preset", ["gpu", "paper"])
def test_a_gpu_preset_on_a_machine_without_a_gpu_is_one_line_unless_asked_for(preset, capsys, monkeypatch, tmp_path):
    """``initmem experiments --preset paper`` on a CPU-only machine is refused in one line, exit 2, before anything
    is planned or trained; ``--allow-cpu`` lets it through to the runner (stopped here by an unknown notebook)."""
    import torch

    from initmem.cli import main

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["experiments", "--preset", preset, "--only", "01", "--out-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"--preset {preset}: sized for a GPU" in err and "--allow-cpu" in err
    # priced: core-hours with the record's p10-p90 band, and A100 time (gpu: about 83 A100-min)
    assert re.search(r"01_optimizers: about [\d,]+ core-h \(p10-p90 [\d,]+-[\d,]+\), about [\d.]+ A100-(h|min)", err)
    assert not any(tmp_path.iterdir())  # nothing executed
    allowed = [
        "experiments",
        "--preset",
        preset,
        "--allow-cpu",
        "--only",
        "no-such-notebook",
        "--out-dir",
        str(tmp_path),
    ]
    assert main(allowed) == 2 and "sized for a GPU" not in capsys.readouterr().err


def test_the_modules_of_each_optional_dependency_group_are_those_the_command_line_names():
    """Every distribution of the [book] and [dask] extras of pyproject.toml brings a top-level module that
    :data:`initmem.cli.EXTRA_MODULES` lists under that extra (the one initmem imports), and every module listed is
    one that is installed: a missing one is named with its extra."""
    import importlib.metadata
    from pathlib import Path

    from initmem.cli import EXTRA_MODULES

    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    modules_of: dict[str, set[str]] = {}
    for module, distributions in importlib.metadata.packages_distributions().items():
        for distribution in distributions:
            modules_of.setdefault(re.sub(r"[-_.]+", "-", distribution).lower(), set()).add(module)
    assert set(EXTRA_MODULES) <= set(project["optional-dependencies"])
    for extra, listed in EXTRA_MODULES.items():
        for requirement in project["optional-dependencies"][extra]:
            name = re.sub(r"[-_.]+", "-", re.split(r"[<>=!~ \[;]", requirement, maxsplit=1)[0]).lower()
            assert modules_of.get(name, set()) & set(listed), f"no module of {name} is listed under [{extra}]"
        assert set(listed) <= set().union(*modules_of.values()), f"[{extra}] lists modules that nothing installs"
