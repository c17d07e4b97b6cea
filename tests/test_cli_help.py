"""`initmem --help` and friends: field docstrings and allowed values on every train flag, examples, --version,
and the spread summary at the end of `initmem sweep`."""

from __future__ import annotations

import ast
import math
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from initmem import __version__
from initmem.cli import build_parser, main, spread_summary
from initmem.cli.flags import FIELD_CHOICES, field_docs
from initmem.run import config, optimizers
from initmem.run.config import RunConfig


def _help(capsys, *argv) -> str:
    with pytest.raises(SystemExit) as info:
        main([*argv, "--help"] if argv else ["--help"])
    assert info.value.code == 0
    return capsys.readouterr().out


def test_every_field_has_a_docstring_read_from_config_py():
    docs = field_docs()
    assert sorted(docs) == sorted(f.name for f in fields(RunConfig))
    assert docs["sigma_w"].startswith("Init scale: every conv/linear kernel")
    assert "``" not in "".join(docs.values())


def test_field_docs_read_by_pattern_equal_the_docstrings_ast_finds():
    """field_docs reads config.py with a regular expression (for a quick --help); ast is the oracle."""
    tree = ast.parse(Path(config.__file__).read_text(encoding="utf-8"))
    body = next(n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "RunConfig")
    expected = {
        node.target.id: " ".join(after.value.value.replace("``", "").split())
        for node, after in zip(body, body[1:])
        if isinstance(node, ast.AnnAssign)
        and isinstance(after, ast.Expr)
        and isinstance(after.value, ast.Constant)
        and isinstance(after.value.value, str)
    }
    docs = field_docs()
    assert len(expected) > 20
    assert {name: docs[name] for name in expected} == expected
    assert set(docs) - set(expected) == {setting.name for setting in optimizers.settings()}


def test_train_help_shows_each_fields_doc_allowed_values_and_default(capsys):
    parser = build_parser()
    train = parser._subparsers._group_actions[0].choices["train"]
    actions = {a.dest: a for a in train._actions}
    for f in fields(RunConfig):
        text = actions[f.name].help
        assert " ".join(field_docs()[f.name].split()[:3]) in text, f.name
        assert "Default:" in text, f.name
    for name, allowed in {
        "model": config.MODELS,
        "optimizer": optimizers.names(),
        "schedule": config.SCHEDULES,
        "decay_mode": config.DECAY_MODES,
        "device": config.DEVICES,
        "muon_lr_adjust": config.MUON_LR_ADJUST,
    }.items():
        assert FIELD_CHOICES[name] == allowed
        assert f"Allowed: {', '.join(allowed)}." in actions[name].help
    out = _help(capsys, "train")
    assert f"--optimizer {{{','.join(optimizers.names())}}}" in out and "{sgd,sgd_momentum,adam,adamw,muon" in out
    assert "example:" in out and "initmem train --config run.nc" in out


@pytest.mark.parametrize("command", ["train", "sweep", "experiments", "book", "download-data"])
def test_every_subcommand_shows_an_example(capsys, command):
    out = _help(capsys, command)
    assert "example" in out and f"initmem {command} " in out.split("example", 1)[1]


def test_top_level_help_and_version(capsys):
    out = _help(capsys)
    assert "``" not in out and "arXiv:2605.29152" in out and "initmem experiments" in out
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out.strip() == f"initmem {__version__}"


def _sweep_dataset(sigmas=(0.5, 1.0, 2.0)) -> xr.Dataset:
    acc = np.array([[[60.0, 62.0], [55.0, 56.0], [40.0, 44.0]], [[50.0, 50.0], [49.0, 51.0], [48.0, 52.0]]])
    acc = acc[:, : len(sigmas)]
    dims = ("optimizer", "sigma_w", "seed")
    coords = {"optimizer": ["sgd", "adam"], "sigma_w": list(sigmas), "seed": [0, 1]}
    return xr.Dataset(
        {
            "selected_test_acc": (dims, acc),
            "final_test_acc": (dims, acc + 1.0),
            "diverged": (dims, np.zeros(acc.shape)),
        },
        coords=coords,
    )


def test_sweep_summary_is_the_spread_over_sigma_w():
    text = spread_summary(_sweep_dataset())
    lines = text.splitlines()
    assert lines[0].startswith("spread over sigma_w")
    assert "raw spread (pp)" in text and "noise p" in text and "cross-fitted (pp)" in text
    sgd = next(line for line in lines if line.startswith("sgd")).split()
    # raw: the seed-mean curve 61, 55.5, 42 -> 19.0; cross-fitted: seed 0 at seed 1's best and worst sigma_w,
    # 60 - 40 = 20, seed 1 at seed 0's, 62 - 44 = 18 -> 19.0
    assert sgd[1] == "19.0" and sgd[3] == "19.0"
    # adam: a flat seed-mean curve (raw 0.0); each seed is read where the other is best and worst: -2 and -2
    adam = next(line for line in lines if line.startswith("adam")).split()
    assert math.isclose(float(adam[1]), 0.0) and math.isclose(float(adam[3]), -2.0)


def test_sweep_summary_without_sigma_w():
    assert spread_summary(_sweep_dataset(sigmas=(1.0,))).startswith("no spread")


def test_initmem_sweep_ends_with_the_spread(tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "base: {data: synthetic, width: 4, image_size: 16, train_size: 200, val_size: 100, test_size: 100,\n"
        "       train_eval_size: 100, batch_size: 50, epochs: 1, num_threads: 1, progress: false}\n"
        "grid: {sigma_w: [0.5, 2.0]}\n"
    )
    assert main(["sweep", str(spec), "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "s.nc")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("spec.yaml: 2 runs: 0 in its own cache, 2 to train (under 1 core-s")  # the plan, first
    assert out[1].endswith("2 runs, dims {'sigma_w': 2}")
    assert out[2].startswith("spread over sigma_w") and "raw spread (pp)" in out[3]
