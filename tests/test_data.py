"""Tests of initmem.run.data: split, batches, augmentation, normalisation, the three file formats,
the decoded cache, error messages, and (marked ``data``) the real JPEG archive."""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import struct
import tarfile
import zlib
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from initmem.run import data
from initmem.run.config import RunConfig
from initmem.run.data.batches import (
    CIFAR10_MEAN,
    CIFAR10_STD,
    DeviceDataset,
    augment_batch,
    eval_batches,
    steps_per_epoch,
    train_batches,
)
from initmem.run.data.decode import load_cifar10
from initmem.run.data.prepare import cifar10_tensors, make_split, prepare_data
from initmem.run.data.sources import CIFAR10_CLASSES, DataError, find_cifar10
from initmem.run.data.synthetic import synthetic_cifar

REAL_ARCHIVE = Path(__file__).resolve().parents[2] / "shared" / "data" / "cifar10-jpeg.tar.gz"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty, private decoded-data cache."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("INITMEM_CACHE", str(directory))
    return directory


def _random_images(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=(n, 32, 32, 3), dtype=np.uint8)


def _tiny_dataset(n: int = 64, seed: int = 0) -> DeviceDataset:
    return DeviceDataset.from_uint8(_random_images(n, seed), np.arange(n) % 10)


# --- split -------------------------------------------------------------------------------------
LABELS_TRAIN = np.arange(1000) % 10
LABELS_TEST = np.arange(200) % 10


def test_split_is_balanced_disjoint_and_deterministic():
    split = make_split(LABELS_TRAIN, LABELS_TEST, train_size=300, val_size=100, test_size=50, data_seed=3)
    assert split.sizes == {"train": 300, "val": 100, "test": 50}
    assert np.bincount(LABELS_TRAIN[split.train]).tolist() == [30] * 10
    assert np.bincount(LABELS_TRAIN[split.val]).tolist() == [10] * 10
    assert np.bincount(LABELS_TEST[split.test]).tolist() == [5] * 10
    assert not set(split.train) & set(split.val)
    assert all(index.dtype == np.int64 for index in (split.train, split.val, split.test))
    again = make_split(LABELS_TRAIN, LABELS_TEST, 300, 100, 50, data_seed=3)
    other = make_split(LABELS_TRAIN, LABELS_TEST, 300, 100, 50, data_seed=4)
    assert all(np.array_equal(a, b) for a, b in zip(vars(split).values(), vars(again).values()))
    assert not np.array_equal(split.val, other.val)


def test_split_val_is_independent_of_train_size_and_train_sets_nest():
    small = make_split(LABELS_TRAIN, LABELS_TEST, 100, 100, None, data_seed=0)
    large = make_split(LABELS_TRAIN, LABELS_TEST, 500, 100, None, data_seed=0)
    assert np.array_equal(small.val, large.val)
    assert set(small.train) <= set(large.train)


def test_split_none_sizes_mean_everything():
    split = make_split(LABELS_TRAIN, LABELS_TEST, train_size=None, val_size=100, test_size=None, data_seed=0)
    assert len(split.train) == 900
    assert sorted(np.concatenate([split.train, split.val]).tolist()) == list(range(1000))
    assert np.array_equal(split.test, np.arange(200))


def test_split_remainder_goes_to_lowest_classes():
    split = make_split(LABELS_TRAIN, LABELS_TEST, train_size=23, val_size=15, test_size=None, data_seed=0)
    assert np.bincount(LABELS_TRAIN[split.val]).tolist() == [2] * 5 + [1] * 5
    assert np.bincount(LABELS_TRAIN[split.train]).tolist() == [3] * 3 + [2] * 7


@pytest.mark.parametrize(
    ("sizes", "name", "maximum"),
    [
        ((None, 1001, None), "val_size", "1000"),
        ((901, 100, None), "train_size", "900"),
        ((None, 100, 201), "test_size", "200"),
    ],
)
def test_split_sizes_too_large_name_the_parameter_and_maximum(sizes, name, maximum):
    train_size, val_size, test_size = sizes
    with pytest.raises(DataError, match=rf"{name}: must be between 0 and {maximum}"):
        make_split(LABELS_TRAIN, LABELS_TEST, train_size, val_size, test_size, data_seed=0)


# --- batches -----------------------------------------------------------------------------------
def test_steps_per_epoch_drops_the_last_incomplete_batch():
    assert steps_per_epoch(100, 32) == 3
    with pytest.raises(ValueError, match="batch_size"):
        steps_per_epoch(10, 32)


@pytest.mark.parametrize("augment", [False, True])
def test_train_batches_depend_only_on_data_seed_and_epoch(augment):
    dataset = _tiny_dataset(70)

    def epoch_batches(global_seed: int, epoch: int = 2, data_seed: int = 5):
        torch.manual_seed(global_seed)  # what a run with another sigma_w/seed would do
        torch.randn(1000)
        return list(train_batches(dataset, 16, epoch, data_seed, augment))

    first, second = epoch_batches(0), epoch_batches(123)
    assert len(first) == 4 and all(x.shape == (16, 3, 32, 32) and y.shape == (16,) for x, y in first)
    assert all(torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) for a, b in zip(first, second))
    assert not torch.equal(first[0][1], epoch_batches(0, epoch=3)[0][1])
    assert not torch.equal(first[0][1], epoch_batches(0, data_seed=6)[0][1])


def test_augmentation_changes_pixels_but_not_order_or_labels():
    dataset = _tiny_dataset(80)
    plain = list(train_batches(dataset, 20, epoch=0, data_seed=1, augment=False))
    augmented = list(train_batches(dataset, 20, epoch=0, data_seed=1, augment=True))
    labels = torch.cat([y for _, y in augmented])
    assert torch.equal(labels, torch.cat([y for _, y in plain]))
    assert sorted(labels.tolist()) == sorted(dataset.labels.tolist())
    changed = torch.stack([(xa != xp).flatten(1).any(1) for (xa, _), (xp, _) in zip(augmented, plain)])
    assert changed.float().mean() > 0.9  # identity crop without flip has probability 1/162


def test_augment_batch_crop_and_flip_are_exact():
    images = torch.arange(2 * 3 * 8 * 8, dtype=torch.float32).view(2, 3, 8, 8)
    identity = torch.tensor([[1, 1], [1, 1]])
    no_flip, flip = torch.tensor([False, False]), torch.tensor([True, False])
    assert torch.equal(augment_batch(images, identity, no_flip, padding=1), images)
    flipped = augment_batch(images, identity, flip, padding=1)
    assert torch.equal(flipped[0], images[0].flip(-1)) and torch.equal(flipped[1], images[1])
    shifted = augment_batch(images, torch.tensor([[0, 2], [2, 0]]), no_flip, padding=1)
    assert torch.equal(shifted[0, :, 1:, :-1], images[0, :, :-1, 1:])  # down one row, left one column
    assert torch.equal(shifted[0, :, 0, :-1], images[0, :, 1, 1:])  # reflect padding: row -1 is row 1
    assert torch.equal(shifted[1, :, :-1, 1:], images[1, :, 1:, :-1])


def test_eval_batches_cover_everything_in_order():
    dataset = _tiny_dataset(25)
    batches = list(eval_batches(dataset, 10))
    assert [len(y) for _, y in batches] == [10, 10, 5]
    assert torch.equal(torch.cat([x for x, _ in batches]), dataset.images)


# --- device tensors ----------------------------------------------------------------------------
def test_normalisation_uses_the_cifar_constants():
    images = _random_images(6)
    dataset = DeviceDataset.from_uint8(images, np.arange(6))
    assert dataset.images.dtype == torch.float32 and dataset.images.shape == (6, 3, 32, 32)
    assert dataset.labels.dtype == torch.int64
    mean = torch.tensor(CIFAR10_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(CIFAR10_STD).view(1, 3, 1, 1)
    restored = dataset.images * std + mean
    assert torch.allclose(restored, torch.from_numpy(images).permute(0, 3, 1, 2) / 255.0, atol=1e-6)
    mean_colour = np.broadcast_to(np.round(np.array(CIFAR10_MEAN) * 255), (1, 32, 32, 3)).astype(np.uint8)
    assert DeviceDataset.from_uint8(mean_colour, np.zeros(1)).images.abs().max() < 0.01


def test_area_downsampling_averages_pixel_blocks():
    images = _random_images(2)
    full = DeviceDataset.from_uint8(images, np.arange(2)).images
    half = DeviceDataset.from_uint8(images, np.arange(2), image_size=16).images
    assert half.shape == (2, 3, 16, 16)
    assert torch.allclose(half, torch.nn.functional.avg_pool2d(full, 2), atol=1e-5)
    assert DeviceDataset.from_uint8(images, np.arange(2), image_size=24).images.shape == (2, 3, 24, 24)


# --- synthetic data and prepare_data ------------------------------------------------------------
def test_synthetic_is_deterministic_balanced_and_learnable_but_not_trivial():
    arrays = synthetic_cifar(n_train=500, n_test=200, seed=0)
    assert arrays.train_images.shape == (500, 32, 32, 3) and arrays.train_images.dtype == np.uint8
    assert arrays.test_images.shape == (200, 32, 32, 3)
    assert np.bincount(arrays.train_labels).tolist() == [50] * 10
    assert arrays.source["format"] == "synthetic" and arrays.classes == list(CIFAR10_CLASSES)
    assert np.array_equal(arrays.train_images, synthetic_cifar(500, 200, seed=0).train_images)
    assert not np.array_equal(arrays.train_images, synthetic_cifar(500, 200, seed=1).train_images)
    assert np.array_equal(synthetic_cifar(100, 200, seed=0).train_images, arrays.train_images[:100])
    # Nearest class mean: well above chance (10 %), well below 100 %.
    x = arrays.train_images.reshape(500, -1).astype(np.float32)
    centroids = np.stack([x[arrays.train_labels == c].mean(0) for c in range(10)])
    xt = arrays.test_images.reshape(200, -1).astype(np.float32)
    accuracy = (((xt[:, None] - centroids[None]) ** 2).sum(-1).argmin(1) == arrays.test_labels).mean()
    assert 0.5 < accuracy < 0.95


def test_prepare_data_synthetic():
    config = RunConfig(
        data="synthetic", train_size=200, val_size=100, test_size=100, train_eval_size=50, image_size=16, batch_size=32
    )
    prepared = prepare_data(config, torch.device("cpu"))
    assert prepared.sizes == {"train": 200, "val": 100, "test": 100, "train_eval": 50}
    assert prepared.train.images.shape == (200, 3, 16, 16)
    assert prepared.source["format"] == "synthetic"
    assert torch.bincount(prepared.train_eval.labels).tolist() == [5] * 10
    assert torch.bincount(prepared.val.labels).tolist() == [10] * 10
    whole = prepare_data(config.replace(train_eval_size=5000), "cpu")
    assert torch.equal(whole.train_eval.images, whole.train.images)


# --- file formats ------------------------------------------------------------------------------
def _write_batches(folder: Path, per_batch: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """A fake cifar-10-batches-py folder as torchvision writes it; returns the train images/labels."""
    folder.mkdir(parents=True)
    all_images, all_labels = [], []
    for index, name in enumerate(data.sources.BATCH_FILES):
        images = _random_images(per_batch, seed=index)
        labels = [(index + i) % 10 for i in range(per_batch)]
        flat = images.transpose(0, 3, 1, 2).reshape(per_batch, 3072)
        with open(folder / name, "wb") as handle:
            pickle.dump({b"batch_label": name.encode(), b"labels": labels, b"data": flat}, handle)
        if name != "test_batch":
            all_images.append(images)
            all_labels += labels
    with open(folder / "batches.meta", "wb") as handle:
        pickle.dump({b"label_names": [c.encode() for c in CIFAR10_CLASSES]}, handle)
    return np.concatenate(all_images), np.array(all_labels)


def test_torchvision_batches_folder_or_its_parent(tmp_path, cache, caplog):
    images, labels = _write_batches(tmp_path / "root" / "cifar-10-batches-py")
    for path in (tmp_path / "root", tmp_path / "root" / "cifar-10-batches-py"):
        arrays = load_cifar10(path)
        assert np.array_equal(arrays.train_images, images) and np.array_equal(arrays.train_labels, labels)
        assert arrays.test_images.shape == (4, 32, 32, 3) and arrays.train_labels.dtype == np.int64
        assert arrays.source["format"] == "torchvision-batches" and arrays.classes == list(CIFAR10_CLASSES)
    assert "20 train images (CIFAR-10 has 50000)" in caplog.text  # tiny sources only warn


def test_labels_out_of_range_are_a_data_error(tmp_path, cache):
    folder = tmp_path / "cifar-10-batches-py"
    _write_batches(folder)
    with open(folder / "test_batch", "wb") as handle:
        pickle.dump({b"labels": [0, 1, 2, 12], b"data": np.zeros((4, 3072), np.uint8)}, handle)
    with pytest.raises(DataError, match=r"test labels must lie in \[0, 10\), got \[0, 12\]"):
        load_cifar10(folder)


def _write_image_folder(root: Path, per_class: dict[str, int]) -> None:
    """PNG images (lossless, so values can be checked); the first is greyscale."""
    for split, count in per_class.items():
        for label, name in enumerate(CIFAR10_CLASSES):
            (root / split / name).mkdir(parents=True)
            for i in range(count):
                pixels = np.full((32, 32, 3), 20 * label + i, dtype=np.uint8)
                mode_image = Image.fromarray(pixels[:, :, 0], "L") if (label, i) == (0, 0) else Image.fromarray(pixels)
                mode_image.save(root / split / name / f"{i:04d}.png")


def test_image_folder_and_its_tar_gz_give_the_same_arrays(tmp_path, cache):
    folder = tmp_path / "cifar"
    _write_image_folder(folder, {"train": 2, "test": 1})
    archive = tmp_path / "cifar.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname="cifar10")  # a leading folder inside the archive is fine
    from_folder, from_tar = load_cifar10(folder), load_cifar10(archive)
    assert from_folder.source["format"] == "image-folder" and from_tar.source["format"] == "image-folder-tar.gz"
    assert from_tar.source["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    # the source is named by its file name and checksum, never by this machine's directories
    assert from_tar.source["name"] == "cifar.tar.gz" and str(tmp_path) not in json.dumps(from_tar.source)
    for a, b in ((from_folder.train_images, from_tar.train_images), (from_folder.test_labels, from_tar.test_labels)):
        assert np.array_equal(a, b)
    assert from_tar.train_images.shape == (20, 32, 32, 3)
    assert from_tar.train_labels.tolist() == [c for c in range(10) for _ in range(2)]
    assert from_tar.train_images[3, 0, 0].tolist() == [21, 21, 21]  # class 1, image 1
    assert from_tar.train_images[0].max() == 0  # the greyscale image became RGB


def test_second_load_reads_the_cache_without_decoding(tmp_path, cache, monkeypatch):
    folder = tmp_path / "cifar"
    _write_image_folder(folder, {"train": 1, "test": 1})
    archive = tmp_path / "cifar.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder / "train", arcname="train")
        tar.add(folder / "test", arcname="test")
    first = load_cifar10(archive)
    (cache_file,) = cache.glob("*.npz")
    cache_file.write_bytes(cache_file.read_bytes()[:1000])  # a damaged cache is decoded again
    assert np.array_equal(load_cifar10(archive).train_images, first.train_images)

    def no_decoding(*args):
        raise AssertionError("decoded again instead of reading the cache")

    monkeypatch.setattr(data.decode, "_decode", no_decoding)
    second = load_cifar10(archive)
    assert np.array_equal(first.train_images, second.train_images) and first.source == second.source


def test_wrong_image_size_is_a_data_error(tmp_path, cache):
    folder = tmp_path / "cifar"
    _write_image_folder(folder, {"train": 1, "test": 1})
    Image.new("RGB", (16, 16)).save(folder / "train" / "cat" / "0000.png")
    with pytest.raises(DataError, match=r"train/cat/0000.png: expected a 32x32 RGB image"):
        load_cifar10(folder)


def test_corrupt_archive_is_a_data_error(tmp_path, cache):
    garbage = tmp_path / "garbage.tar.gz"
    garbage.write_bytes(b"not a tar file at all" * 100)
    with pytest.raises(DataError, match="not a readable .tar.gz"):
        load_cifar10(garbage)
    folder = tmp_path / "cifar"
    _write_image_folder(folder, {"train": 1, "test": 1})
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(folder, arcname=".")
    truncated = tmp_path / "truncated.tar.gz"
    truncated.write_bytes(buffer.getvalue()[: len(buffer.getvalue()) // 2])
    with pytest.raises(DataError, match="not a readable .tar.gz"):
        load_cifar10(truncated)


def _png_header(width: int, height: int) -> bytes:
    """A PNG with a valid header claiming ``width`` x ``height`` RGB pixels and no pixel data."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IEND", b"")


@pytest.mark.parametrize("side", [40_000, 64])
def test_an_image_claiming_too_many_pixels_is_a_one_line_data_error(tmp_path, cache, capsys, side):
    # 40000 x 40000 is above Pillow's decompression-bomb limit (refused when opened); 64 x 64 is only the wrong size
    folder = tmp_path / "cifar"
    _write_image_folder(folder, {"train": 1, "test": 1})
    (folder / "train" / "dog" / "0000.png").write_bytes(_png_header(side, side))
    archive = tmp_path / "bomb.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=".")
    with pytest.raises(DataError) as error:
        load_cifar10(archive)
    message = str(error.value)
    assert "train/dog/0000.png" in message and "32x32" in message and "\n" not in message
    if side > 10_000:
        assert "1600000000 pixels" in message  # Pillow's own words: refused before any pixel was decoded
    from initmem.cli import main

    flags = ["--data", str(archive), "--width", "4", "--epochs", "1", "--no-progress", "--num-threads", "1"]
    assert main(["train", *flags, "--out", str(tmp_path / "run.nc")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error: data:" in err and "train/dog/0000.png" in err
    assert not (tmp_path / "run.nc").exists()


def _cifar10_tensor_source(tmp_path: Path) -> Path:
    """An image folder sorted by class as the JPEG archive is: 6 training and 2 test images per class, pixel value
    ``20 * label + i`` for image ``i`` of a class (so every image is identified by its value)."""
    folder = tmp_path / "cifar"
    _write_image_folder(folder, {"train": 6, "test": 2})
    return folder


def _identities(x: torch.Tensor) -> np.ndarray:
    """The pixel value of each normalised image (N, 3, 32, 32) of :func:`_cifar10_tensor_source`, from channel 0."""
    return np.rint((x[:, 0, 0, 0].numpy() * CIFAR10_STD[0] + CIFAR10_MEAN[0]) * 255).astype(int)


def test_cifar10_tensors_are_balanced_shuffled_and_ready_for_measure_init_memory(tmp_path, cache):
    source = _cifar10_tensor_source(tmp_path)
    (x, y), (x_val, y_val), (x_test, y_test) = cifar10_tensors(20, 10, 10, seed=1, path=source)
    assert x.shape == (20, 3, 32, 32) and x.dtype == torch.float32 and y.dtype == torch.int64
    assert x_val.shape == (10, 3, 32, 32) and x_test.shape == (10, 3, 32, 32)
    assert np.bincount(y.numpy()).tolist() == [2] * 10 and np.bincount(y_val.numpy()).tolist() == [1] * 10
    assert np.bincount(y_test.numpy()).tolist() == [1] * 10
    assert np.any(np.diff(y.numpy()) < 0)  # not sorted by class, as the source is
    # each image still carries its own label, and train and val are disjoint images of the training set
    for images, labels in ((x, y), (x_val, y_val), (x_test, y_test)):
        offset = _identities(images) - 20 * labels.numpy()
        assert offset.min() >= 0 and offset.max() < 6
    assert not set(_identities(x)) & set(_identities(x_val))
    # normalised exactly as a run's data is
    train_images = load_cifar10(source).train_images
    first = int(np.flatnonzero(train_images[:, 0, 0, 0] == _identities(x[:1])[0])[0])
    assert torch.equal(x[0], DeviceDataset.from_uint8(train_images[first : first + 1], [0]).images[0])
    # a function of the sizes and the seed; validation and test do not depend on train_size
    again = cifar10_tensors(20, 10, 10, seed=1, path=source)
    assert torch.equal(again[0][0], x) and torch.equal(again[2][1], y_test)
    bigger = cifar10_tensors(30, 10, 10, seed=1, path=source)
    assert torch.equal(bigger[1][0], x_val) and torch.equal(bigger[2][0], x_test)
    assert not torch.equal(cifar10_tensors(20, 10, 10, seed=2, path=source)[0][1], y)
    with pytest.raises(DataError, match="train_size: must be between 0 and 50"):
        cifar10_tensors(55, 10, 10, path=source)


def test_missing_data_lists_every_place_looked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("INITMEM_DATA", str(tmp_path / "nowhere"))
    monkeypatch.delenv("INITMEM_CACHE", raising=False)
    monkeypatch.setattr(data.sources, "_REPO_ROOT", tmp_path / "a" / "repo")
    with pytest.raises(DataError) as error:
        find_cifar10(None)
    message = str(error.value)
    for place in (
        tmp_path / "nowhere",
        tmp_path.parent / "shared" / "data" / "cifar10-jpeg.tar.gz",
        tmp_path / "a" / "shared" / "data" / "cifar10-jpeg.tar.gz",
        tmp_path / "shared" / "data" / "cifar10-jpeg.tar.gz",
        tmp_path / "home" / ".cache" / "initmem" / "cifar-10-batches-py",
        tmp_path / "data" / "cifar-10-batches-py",
    ):
        assert str(place.resolve()) in message
    assert "initmem download-data" in message and "--data" in message
    with pytest.raises(DataError, match="does not exist"):
        load_cifar10(tmp_path / "missing")


# --- the real archive --------------------------------------------------------------------------
@pytest.mark.data
def test_real_archive():
    if not REAL_ARCHIVE.is_file():
        pytest.skip(f"the CIFAR-10 archive is not at {REAL_ARCHIVE}")
    arrays = load_cifar10(REAL_ARCHIVE)
    assert arrays.train_images.shape == (50_000, 32, 32, 3) and arrays.test_images.shape == (10_000, 32, 32, 3)
    assert np.bincount(arrays.train_labels).tolist() == [5000] * 10
    assert np.bincount(arrays.test_labels).tolist() == [1000] * 10
    assert arrays.classes == list(CIFAR10_CLASSES)
    assert arrays.source["sha256"] == "4c6d5fe35bc03ae0c129c8812f8052bf4a60a07fe3d70e994eb76fd42c010c57"
    # the archive's order, as load_cifar10 documents it: sorted by class, so a first slice is one class
    assert np.all(np.diff(arrays.train_labels) >= 0) and np.all(np.diff(arrays.test_labels) >= 0)
    (x, y), _, (x_test, y_test) = cifar10_tensors(1000, 100, 100, seed=0, path=REAL_ARCHIVE)
    assert np.bincount(y.numpy()).tolist() == [100] * 10 and np.bincount(y_test.numpy()).tolist() == [10] * 10
    assert len(np.unique(y[:50].numpy())) >= 8 and x.shape == (1000, 3, 32, 32)
    sums, squares = np.zeros(3), np.zeros(3)
    for chunk in np.array_split(arrays.train_images, 10):  # float copies of 1/10 of the images
        pixels = chunk.reshape(-1, 3).astype(np.float64) / 255.0
        sums += pixels.sum(0)
        squares += (pixels**2).sum(0)
    n = 50_000 * 32 * 32
    mean = sums / n
    assert np.allclose(mean, (0.4913, 0.4821, 0.4465), atol=0.01)
    assert np.allclose(np.sqrt(squares / n - mean**2), (0.2452, 0.2428, 0.2606), atol=0.01)
