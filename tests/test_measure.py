"""measure_init_memory: a built-in ResNet gives the numbers of sweep(); own models, data and errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch import nn

from initmem import measure_init_memory, spread, summary_table
from initmem.run.config import ConfigError
from initmem.run.data.prepare import prepare_data
from initmem.run.data.sources import DataError
from initmem.run.models import build_model
from initmem.sweeps.driver import sweep
from initmem.sweeps.spec import SweepSpec

SIGMAS, SEEDS = [0.5, 2.0], [0, 1]


def gaussian_mixture(n: int, dim: int = 8, classes: int = 3, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """n points (n, dim) around `classes` fixed centres, labels (n,)."""
    centres = torch.randn(classes, dim, generator=torch.Generator().manual_seed(99)) * 2
    y = torch.arange(n) % classes
    return centres[y] + torch.randn(n, dim, generator=torch.Generator().manual_seed(seed)), y


def bn_mlp(dim: int = 8, classes: int = 3) -> nn.Module:
    return nn.Sequential(nn.Linear(dim, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, classes))


SPLITS = (gaussian_mixture(96, seed=1), gaussian_mixture(48, seed=2), gaussian_mixture(48, seed=3))
FAST = dict(epochs=2, batch_size=32, lr=0.05, device="cpu", progress=False, num_threads=1)


def small(model_fn=bn_mlp, splits=SPLITS, **kwargs):
    return measure_init_memory(model_fn, *splits, **{"sigma_ws": SIGMAS, "seeds": [0], **FAST, **kwargs})


# --- the built-in ResNet: the same numbers as sweep() ------------------------------------------
def test_builtin_resnet_equals_sweep(tiny_config, tmp_path):
    config = tiny_config.replace(data_seed=0, train_eval_size=200, epochs=2)
    reference = sweep(SweepSpec(base=config, grid={"sigma_w": SIGMAS, "seed": SEEDS}), tmp_path, progress=False)
    data = prepare_data(config, "cpu")
    splits = [(d.images, d.labels) for d in (data.train, data.val, data.test)]
    ds = measure_init_memory(
        lambda: build_model(config),
        *splits,
        sigma_ws=SIGMAS,
        seeds=SEEDS,
        optimizer=config.optimizer,
        lr=config.lr,
        epochs=config.epochs,
        batch_size=config.batch_size,
        device="cpu",
        progress=False,
        data_seed=0,
        train_eval_size=config.train_eval_size,
        num_threads=1,
        channels_last=True,
    )
    for name in (
        "selected_test_acc",
        "final_test_acc",
        "test_acc",
        "train_loss",
        "val_loss",
        "weight_norm",
        "dist_from_init",
        "layer_norm",
        "T_SGD",
        "tau_interp",
        "best_epoch",
    ):
        np.testing.assert_array_equal(ds[name].values, reference[name].values, err_msg=name)
    assert set(reference.data_vars) == set(ds.data_vars)
    assert ds["selected_test_acc"].dims == ("sigma_w", "seed")


# --- own models and data -----------------------------------------------------------------------
def test_mlp_result_works_with_spread_summary_and_plots():
    from initmem.study.presentation.plots import captions, figures

    ds = small(seeds=[0, 1])
    assert dict(ds.sizes) == {"sigma_w": 2, "seed": 2, "epoch": 3, "layer": 2}
    assert list(ds["layer"].values) == ["0", "3"]
    assert spread(ds).dims == ("seed",) and np.isfinite(spread(ds).values).all()
    assert summary_table(ds)["selected_n_seeds"].item() == 2
    assert np.all(ds["T_SGD"].isel(epoch=-1).values == pytest.approx(2 * 3 * 0.05**2 / 32))
    figures.acc_vs_sigma(ds, hue=None)
    figures.training_curves(ds, col=None)
    assert ds.attrs["model_class"] == "Sequential" and "BatchNorm1d" in ds.attrs["model"]
    assert ds.attrs["n_parameters"] == sum(p.numel() for p in bn_mlp().parameters())
    assert ds.attrs["kernels"] == "0.weight, 3.weight"
    assert json.loads(ds.attrs["data_sizes"]) == {"train": 96, "val": 48, "test": 48, "train_eval": 96}
    assert json.loads(ds.attrs["training"])["optimizer"] == "sgd" and "model" not in json.loads(ds.attrs["training"])
    assert "Sequential" in captions.caption(ds)


def test_kernels_are_exact_multiples_across_sigma_w():
    """At one seed, the initial kernel norms scale with sigma_w: same directions, different radii."""
    ds = small()
    norm0 = ds["weight_norm"].sel(epoch=0, seed=0).values
    assert norm0[1] / norm0[0] == pytest.approx(SIGMAS[1] / SIGMAS[0], rel=1e-12)


class SequenceClassifier(nn.Module):
    """Token ids (N, T) -> embedding -> LayerNorm -> mean over T -> BatchNorm MLP -> logits (N, 3)."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(10, 8)
        self.norm = nn.LayerNorm(8)
        self.mlp = bn_mlp(8, 3)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.mlp(self.norm(self.embed(tokens)).mean(1))


def token_split(n: int, seed: int):
    y = torch.arange(n) % 3
    tokens = torch.randint(0, 10, (n, 5), generator=torch.Generator().manual_seed(seed))
    tokens[:, 0] = y  # the first token gives the class away
    return tokens, y


def test_sequences_with_embedding_and_layernorm():
    splits = (token_split(96, 1), token_split(48, 2), token_split(48, 3))
    ds = small(SequenceClassifier, splits)
    assert ds.attrs["kernels"] == "mlp.0.weight, mlp.3.weight" and json.loads(ds.attrs["input_shape"]) == [5]
    assert np.isfinite(ds["selected_test_acc"].values).all()
    included = small(SequenceClassifier, splits, include=["embed.weight"], exclude=["mlp.3.weight"])
    assert included.attrs["kernels"] == "embed.weight, mlp.0.weight"
    # The recorded norms count exactly the kernels sigma_w set: the embedding in, the excluded head out.
    assert list(included["layer"].values) == ["mlp.0", "embed.weight"]
    assert list(ds["layer"].values) == ["mlp.0", "mlp.3"]
    layer_norms = included["layer_norm"].isel(epoch=0)
    np.testing.assert_allclose(included["weight_norm"].isel(epoch=0), np.sqrt((layer_norms**2).sum("layer")), rtol=1e-6)
    ratio = included["layer_norm"].sel(layer="embed.weight").isel(epoch=0, seed=0)
    assert float(ratio.sel(sigma_w=2.0) / ratio.sel(sigma_w=0.5)) == pytest.approx(4.0, rel=1e-6)  # sigma_w scaled it


def test_torch_dataset_and_mse_loss_and_cache(tmp_path):
    from torch.utils.data import TensorDataset

    splits = [TensorDataset(*split) for split in SPLITS]
    first = small(splits=splits, loss="mse", cache_dir=tmp_path)
    assert len(list(tmp_path.glob("*.nc"))) == 2
    assert first["val_loss"].attrs["units"] == "mse per example"
    again = small(splits=splits, loss="mse", cache_dir=tmp_path)
    np.testing.assert_array_equal(first["wall_time_s"].values, again["wall_time_s"].values)  # read, not retrained
    other = small(splits=splits, cache_dir=tmp_path)  # another loss: another key
    assert len(list(tmp_path.glob("*.nc"))) == 4 and not np.array_equal(other["val_loss"], first["val_loss"])


# --- the package's executors ----------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("executor", ["processes", "dask"])
def test_parallel_executors_give_the_serial_numbers(executor, tmp_path):
    """bn_mlp is defined at module level, so it is picklable: the workers rebuild it and train on the data file."""
    serial = small(sigma_ws=SIGMAS, seeds=[0, 1])
    parallel = small(sigma_ws=SIGMAS, seeds=[0, 1], executor=executor, workers=2, cache_dir=tmp_path)
    for name in ("selected_test_acc", "final_test_acc", "val_loss", "weight_norm", "dist_from_init", "T_SGD"):
        np.testing.assert_array_equal(parallel[name].values, serial[name].values, err_msg=name)
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".nc"] * 4, "the data file is removed afterwards"


def test_the_parallel_executors_refuse_a_lambda_before_training(tmp_path):
    with pytest.raises(ConfigError, match=r"^model_fn: the processes executor .* picklable") as info:
        small(model_fn=lambda: bn_mlp(), executor="processes", cache_dir=tmp_path)
    assert "\n" not in str(info.value) and not any(tmp_path.iterdir())


# --- errors: one line naming what is wrong -------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"sigma_ws": []}, ConfigError, "sigma_ws: empty"),
        ({"sigma_ws": [1.0, -2.0]}, ConfigError, "sigma_ws: must be numbers > 0"),
        ({"seeds": [0, 0]}, ConfigError, "seeds: values must differ"),
        ({"model_fn": lambda: "net"}, TypeError, "model_fn: must return a torch.nn.Module, got str"),
        (
            {"model_fn": lambda: bn_mlp(dim=5)},
            ValueError,
            r"model_fn: the model fails on training inputs of shape \(N, 8\)",
        ),
        ({"model_fn": lambda: bn_mlp(classes=2)}, ValueError, r"logits \(N, C\) with C >= 3"),
        (
            {"splits": (SPLITS[0], (SPLITS[1][0][:, :4], SPLITS[1][1]), SPLITS[2])},
            DataError,
            r"val: inputs are .*\(N, 4\)",
        ),
        (
            {"splits": (SPLITS[0], (SPLITS[1][0], SPLITS[1][1][:5]), SPLITS[2])},
            DataError,
            "val: inputs have 48 rows and targets 5",
        ),
        ({"splits": ((SPLITS[0][0], SPLITS[0][1].float()), SPLITS[1], SPLITS[2])}, DataError, "train: targets must be"),
        ({"batch_size": 500}, ConfigError, r"batch_size: must be at most train_size \(96\)"),
        ({"loss": "hinge"}, ConfigError, "loss: allowed values are cross_entropy, mse"),
        ({"augment": True}, ConfigError, "augment: needs image inputs"),
        ({"image_size": 16}, ConfigError, "image_size: not a setting of measure_init_memory"),
        ({"executor": "stacked"}, ConfigError, "executor: allowed values are serial, processes, dask"),
        ({"model_fn": bn_mlp()}, TypeError, r"^model_fn: got a model \(Sequential\), not a function that builds one"),
        (
            {"model_fn": lambda: nn.Sequential(nn.BatchNorm1d(8), nn.ReLU())},
            ValueError,
            r"^model_fn: the model \(Sequential\) has no weight layer that sigma_w scales",
        ),
        (
            {"splits": ((SPLITS[0][0], torch.full((96,), 2)), SPLITS[1], SPLITS[2])},
            DataError,
            r"^train: the targets hold 1 class \(2\); measuring needs at least 2",
        ),
        (
            {"splits": (SPLITS[0], SPLITS[1], (SPLITS[2][0][:, :5], SPLITS[2][1]))},
            DataError,
            r"^test: inputs are .*\(N, 5\)",
        ),
        (
            {"splits": ((SPLITS[0][0].double(), SPLITS[0][1]), SPLITS[1], SPLITS[2])},
            DataError,
            r"^val: inputs are torch.float32 \(N, 8\) but train's are torch.float64",
        ),
    ],
)
def test_clear_one_line_errors(kwargs, error, message, tmp_path):
    """Each mistake is one line naming the argument, raised before anything trains or is written."""
    with pytest.raises(error, match=message) as info:
        small(**kwargs, cache_dir=tmp_path / "cache")
    assert "\n" not in str(info.value)
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


# --- the book page "Measure it on your own model" executes -------------------------------------
@pytest.mark.slow
def test_book_page_executes_in_20_lines(tmp_path):
    """notebooks/U1_own_model.py runs as the book runs it; its example is under 20 lines of user code, its figure is
    the book's SVG, and it shows the paper's ordering (SGD remembers sigma_w more than Adam)."""
    pytest.importorskip("papermill")
    nbformat = pytest.importorskip("nbformat")
    from initmem.book import runner as experiments

    [result] = experiments.run_notebooks(
        preset="smoke",
        only="U1",
        results_dir=tmp_path / "results",
        out_dir=tmp_path / "executed",
        force=True,
        progress=False,
    )
    assert result.ok, str(result)
    nb = nbformat.read(result.output, as_version=4)
    example = next(c for c in nb.cells if c.cell_type == "code" and "measure_init_memory(" in c.source)
    assert len([line for line in example.source.splitlines() if line.strip()]) < 20
    glued = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                glued[name] = output["data"]
    drawn = next(c for c in nb.cells if c.cell_type == "code" and "acc_vs_sigma(" in c.source)
    assert any("image/svg+xml" in output.get("data", {}) for output in drawn.outputs)  # the book's SVG figures
    value = lambda name: float(next(v for k, v in glued[name].items() if k.endswith("text/plain")))  # noqa: E731
    assert value("u1_spread_sgd") > value("u1_spread_adam")
    assert "IProgress" not in json.dumps(example.get("outputs", []))  # no stray warning on the page
