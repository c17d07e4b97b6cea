"""The line under every figure that says where its numbers come from, and the title on top.

Every figure carries a caption line at its bottom (:func:`caption`) naming the preset, model, width, data size and
seeds it came from, read from the Dataset's attributes (``preset`` and the sweep ``spec``) and coordinates, so a figure
copied out of context still says what it shows. :func:`finish` puts the title and the caption on a figure, which
grows by their height so that its panels keep theirs. (Under each figure a notebook also prints
:func:`initmem.book.page.source_note`: the result files it was drawn from and the command that reproduces it.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import xarray as xr

from ...statistics.analysis import field_values
from .labels import label, wrap_words
from .style import MUTED, STYLE

__all__ = ["caption", "caption_many", "finish"]

#: Heights (inches) of the title and of one line of the caption, with their spacing.
_TITLE_HEIGHT = 0.29
_CAPTION_LINE = 0.18


def _join(values: Sequence[Any], fmt=str) -> str:
    return "/".join(fmt(v) for v in dict.fromkeys(values))


def _caption_parts(ds: xr.Dataset | xr.DataArray) -> dict[str, list[Any]]:
    """The raw values behind a caption: preset, models, widths, train sizes, image sizes, data, augment,
    batch sizes, epochs, seeds (each a list, possibly empty)."""
    return {
        "preset": [ds.attrs.get("preset", "?")],
        "model": field_values(ds, "model", "resnet9"),
        "width": field_values(ds, "width"),
        "train_size": field_values(ds, "train_size"),
        "image_size": field_values(ds, "image_size"),
        "data": field_values(ds, "data"),
        "augment": field_values(ds, "augment"),
        "batch_size": [] if "batch_size" in ds.dims else field_values(ds, "batch_size"),
        "epochs": [] if "epochs" in ds.dims else field_values(ds, "epochs"),
        "seed": field_values(ds, "seed", 0),
    }


def _caption_text(parts: Mapping[str, list[Any]], extra: str | None = None) -> str:
    out = [f"preset {_join(parts['preset'])}"]
    model_text = _join(parts["model"], label)
    if parts["width"]:
        model_text += f", width {_join(parts['width'])}"
    out.append(model_text)
    details = []
    if parts["image_size"] and list(dict.fromkeys(parts["image_size"])) != [32]:
        details.append(f"{_join(parts['image_size'])} px")
    if "synthetic" in parts["data"]:
        details.append("synthetic data")
    if True in parts["augment"]:
        details.append("augmented" if False not in parts["augment"] else "augmented in part")
    if parts["train_size"]:
        text = f"{_join(parts['train_size'], lambda v: 'all' if v is None else f'{int(v):,}')} train images"
        out.append(text + (f" ({', '.join(details)})" if details else ""))
    elif details:
        out.append(", ".join(details))
    if parts["batch_size"]:
        out.append(f"b = {_join(parts['batch_size'])}")
    if parts["epochs"]:
        out.append(f"{_join(parts['epochs'])} epochs")
    seeds = list(dict.fromkeys(parts["seed"]))
    out.append(f"seed{'s' if len(seeds) > 1 else ''} {_join(seeds)}")
    if extra:
        out.append(extra)
    return " | ".join(out)


def caption(ds: xr.Dataset | xr.DataArray, extra: str | None = None) -> str:
    """One line saying where a figure's numbers come from, from ``ds``'s attributes and coordinates:
    preset, model and width, training images (image size, augmentation), batch size, epochs, seeds.

    >>> import xarray as xr, json
    >>> ds = xr.Dataset(coords={"seed": [0, 1]}, attrs={"preset": "cpu",
    ...     "spec": json.dumps({"base": {"model": "resnet9", "width": 8, "train_size": 5000}})})
    >>> caption(ds)
    'preset cpu | ResNet-9, width 8 | 5,000 train images | seeds 0/1'
    """
    return _caption_text(_caption_parts(ds), extra)


def caption_many(datasets: Mapping[str, xr.Dataset] | Sequence[xr.Dataset], extra: str | None = None) -> str:
    """:func:`caption` of several sweeps at once (values joined with '/'), prefixed by the experiments."""
    items = list(datasets.values()) if isinstance(datasets, Mapping) else list(datasets)
    if not items:
        return extra or ""
    merged: dict[str, list[Any]] = {}
    for ds in items:
        for key, values in _caption_parts(ds).items():
            merged.setdefault(key, []).extend(values)
    names = list(datasets) if isinstance(datasets, Mapping) else []
    text = _caption_text(merged, extra)
    return (f"experiments {', '.join(n[:2] for n in names)} | " if names else "") + text


def finish(fig, ds: xr.Dataset | xr.DataArray | str | None, title: str | None, extra: str | None = None):
    """Title on top; at the bottom the caption of ``ds`` (or ``ds`` itself if it is a string); the figure grows by
    their height, so that the panels keep theirs."""
    if title:
        fig.suptitle(title)
        fig.set_figheight(fig.get_figheight() + _TITLE_HEIGHT)
    text = ds if isinstance(ds, str) else caption(ds, extra) if ds is not None else extra
    if text:
        text = _wrap(text, fig.get_figwidth())
        fig.supxlabel(text, color=MUTED)
        fig.set_figheight(fig.get_figheight() + _CAPTION_LINE * (text.count("\n") + 1))
    return fig


def _wrap(text: str, width_in: float) -> str:
    """``text`` in lines that fit ``width_in`` inches at the caption's size, never broken inside ``$math$``."""
    return wrap_words(text, int(width_in * 72 / (0.5 * STYLE["figure.labelsize"])))
