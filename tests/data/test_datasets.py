"""ember.data.datasets on small files written here in the real formats, and downloads
from a local HTTP server (mirrors, SHA-256, resuming, offline errors)."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import os
import socket
import struct
import tarfile
import threading
from typing import ClassVar

import ember.aten as ea
import numpy as np
import pytest
from ember.data import DataLoader
from ember.data.datasets import CIFAR10, CIFAR100, KMNIST, MNIST, FashionMNIST, NpyFolder
from ember.data.datasets import utils as dutils
from ember.data.datasets.mnist import read_idx

# ---- writing the formats --------------------------------------------------------------------


def idx_bytes(arr: np.ndarray) -> bytes:
    codes = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C, np.float32: 0x0D, np.float64: 0x0E}
    code = codes[arr.dtype.type]
    header = bytes([0, 0, code, arr.ndim]) + b"".join(struct.pack(">i", d) for d in arr.shape)
    return header + arr.astype(arr.dtype.newbyteorder(">")).tobytes()


def mnist_arrays(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 28, 28), dtype=np.uint8), rng.integers(0, 10, n, dtype=np.uint8)


def write_mnist(raw: str, gz: bool, n_train: int = 6, n_test: int = 4) -> dict[str, tuple]:
    os.makedirs(raw, exist_ok=True)
    out = {}
    for prefix, n, seed in (("train", n_train, 0), ("t10k", n_test, 1)):
        images, labels = mnist_arrays(n, seed)
        for kind, arr in (("images-idx3", images), ("labels-idx1", labels)):
            name = f"{prefix}-{kind}-ubyte"
            data = idx_bytes(arr)
            if gz:
                with gzip.open(os.path.join(raw, name + ".gz"), "wb") as f:
                    f.write(data)
            else:
                with open(os.path.join(raw, name), "wb") as f:
                    f.write(data)
        out[prefix] = (images, labels)
    return out


def cifar_records(n: int, label_bytes: int, seed: int) -> tuple[bytes, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, 3, 32, 32), dtype=np.uint8)
    labels = rng.integers(0, 100 if label_bytes == 2 else 10, (n, label_bytes), dtype=np.uint8)
    data = b"".join(labels[i].tobytes() + images[i].tobytes() for i in range(n))
    return data, images, labels


# ---- IDX / MNIST family -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64])
def test_read_idx_all_types(tmp_path, dtype) -> None:
    arr = (np.arange(24).reshape(2, 3, 4) - 5).astype(dtype)
    path = tmp_path / "x-idx3"
    path.write_bytes(idx_bytes(arr))
    got = read_idx(str(path))
    assert got.dtype == np.dtype(dtype) and got.dtype.isnative
    np.testing.assert_array_equal(got, arr)


def test_read_idx_rejects_bad_files(tmp_path) -> None:
    bad = tmp_path / "bad"
    bad.write_bytes(b"\x01\x02\x08\x01\x00\x00\x00\x01\x00")
    with pytest.raises(ValueError, match="not an IDX file"):
        read_idx(str(bad))
    short = tmp_path / "short"
    short.write_bytes(idx_bytes(np.zeros(4, np.uint8))[:-1])
    with pytest.raises(ValueError, match=r"IDX header says \(4,\)"):
        read_idx(str(short))


@pytest.mark.parametrize("cls", [MNIST, FashionMNIST, KMNIST])
@pytest.mark.parametrize("gz", [True, False])
def test_mnist_family_reads_idx_files(tmp_path, cls, gz) -> None:
    truth = write_mnist(str(tmp_path / cls.__name__ / "raw"), gz)
    for train, key in ((True, "train"), (False, "t10k")):
        ds = cls(str(tmp_path), train=train)
        images, labels = truth[key]
        assert len(ds) == len(labels)
        img, target = ds[1]
        assert img.shape == (1, 28, 28) and img.dtype == ea.uint8
        np.testing.assert_array_equal(img.numpy()[0], images[1])
        assert target == int(labels[1]) and isinstance(target, int)
        assert ds.data.shape == (len(labels), 28, 28) and ds.targets.dtype == ea.int64
    assert len(ds.classes) == 10 and ds.class_to_idx[ds.classes[3]] == 3
    assert "Split: Test" in repr(ds) and f"Dataset {cls.__name__}" in repr(ds)


def test_mnist_transforms_and_loader(tmp_path) -> None:
    truth = write_mnist(str(tmp_path / "MNIST" / "raw"), gz=True, n_train=10)
    ds = MNIST(str(tmp_path), transform=lambda x: x.float() / 255.0, target_transform=lambda y: y + 100)
    img, target = ds[0]
    assert img.dtype == ea.float32 and abs(img.numpy()[0, 0, 0] - truth["train"][0][0, 0, 0] / 255.0) < 1e-6
    assert target == int(truth["train"][1][0]) + 100
    xs, ys = next(iter(DataLoader(ds, batch_size=4, num_workers=2)))
    assert xs.shape == (4, 1, 28, 28) and ys.tolist() == [int(v) + 100 for v in truth["train"][1][:4]]


def test_mnist_missing_files_say_how_to_get_them(tmp_path) -> None:
    with pytest.raises(RuntimeError, match=r"not found in .*MNIST/raw\. You can use download=True to download it"):
        MNIST(str(tmp_path))


# ---- CIFAR ---------------------------------------------------------------------------------------


def write_cifar10(root: str, n: int = 3) -> dict[str, tuple]:
    folder = os.path.join(root, "cifar-10-batches-bin")
    os.makedirs(folder)
    truth = {}
    for k, name in enumerate([f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]):
        data, images, labels = cifar_records(n, 1, seed=k)
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
        truth[name] = (images, labels)
    with open(os.path.join(folder, "batches.meta.txt"), "w") as f:
        f.write("\n".join(CIFAR10.default_classes) + "\n\n")
    return truth


def test_cifar10_binary(tmp_path) -> None:
    truth = write_cifar10(str(tmp_path))
    train = CIFAR10(str(tmp_path), train=True)
    assert len(train) == 15 and train.classes == CIFAR10.default_classes
    images, labels = truth["data_batch_2.bin"]
    img, target = train[4]  # the second record of the second file
    assert img.shape == (3, 32, 32) and img.dtype == ea.uint8
    np.testing.assert_array_equal(img.numpy(), images[1])
    assert target == int(labels[1, 0])
    assert train.data.shape == (15, 32, 32, 3)  # torchvision's HWC layout
    np.testing.assert_array_equal(train.data[4], images[1].transpose(1, 2, 0))
    test = CIFAR10(str(tmp_path), train=False, target_transform=str)
    assert len(test) == 3 and test[2][1] == str(int(truth["test_batch.bin"][1][2, 0]))


def test_cifar100_binary_has_fine_and_coarse_labels(tmp_path) -> None:
    folder = tmp_path / "cifar-100-binary"
    folder.mkdir()
    truth = {}
    for name, seed in (("train.bin", 0), ("test.bin", 1)):
        data, images, labels = cifar_records(4, 2, seed)
        (folder / name).write_bytes(data)
        truth[name] = (images, labels)
    (folder / "fine_label_names.txt").write_text("\n".join(f"fine{i}" for i in range(100)))
    (folder / "coarse_label_names.txt").write_text("\n".join(f"coarse{i}" for i in range(20)))
    ds = CIFAR100(str(tmp_path), train=True)
    images, labels = truth["train.bin"]
    assert ds.targets == labels[:, 1].tolist() and ds.coarse_targets == labels[:, 0].tolist()
    np.testing.assert_array_equal(ds[3][0].numpy(), images[3])
    assert ds.classes[7] == "fine7" and ds.coarse_classes[2] == "coarse2"


def test_cifar_corrupt_and_missing(tmp_path) -> None:
    with pytest.raises(RuntimeError, match=r"Dataset not found or corrupted\. You can use download=True"):
        CIFAR10(str(tmp_path))
    write_cifar10(str(tmp_path))
    with open(tmp_path / "cifar-10-batches-bin" / "test_batch.bin", "ab") as f:
        f.write(b"\x00")
    with pytest.raises(ValueError, match="not a whole number of 3073-byte CIFAR records"):
        CIFAR10(str(tmp_path), train=False)


# ---- folders of .npy ------------------------------------------------------------------------------


def test_npy_folder(tmp_path) -> None:
    arrays = {}
    for cls, names in (("dog", ["b.npy", "a.npy", "sub/c.npy"]), ("cat", ["z.npy"])):
        for name in names:
            path = tmp_path / cls / name
            path.parent.mkdir(parents=True, exist_ok=True)
            arr = np.full((2, 2), len(arrays), dtype=np.float32)
            np.save(path, arr)
            arrays[str(path)] = arr
    (tmp_path / "dog" / "notes.txt").write_text("not a sample")
    ds = NpyFolder(str(tmp_path), target_transform=lambda y: -y)
    assert ds.classes == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1}
    assert [os.path.relpath(p, tmp_path) for p, _ in ds.samples] == [
        "cat/z.npy",
        "dog/a.npy",
        "dog/b.npy",
        "dog/sub/c.npy",
    ]
    assert ds.targets == [0, 1, 1, 1]
    x, y = ds[2]
    np.testing.assert_array_equal(x.numpy(), arrays[str(tmp_path / "dog" / "b.npy")])
    assert y == -1 and len(ds) == 4
    batch = next(iter(DataLoader(ds, batch_size=4)))
    assert batch[0].shape == (4, 2, 2) and batch[1].tolist() == [0, -1, -1, -1]


def test_npy_folder_errors(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="Couldn't find any class folder in"):
        NpyFolder(str(tmp_path))
    (tmp_path / "empty").mkdir()
    with pytest.raises(
        FileNotFoundError, match=r"Found no valid file for the classes empty\. Supported extensions are: \.npy"
    ):
        NpyFolder(str(tmp_path))
    assert len(NpyFolder(str(tmp_path), allow_empty=True)) == 0
    np.save(tmp_path / "empty" / "obj.npy", np.array([{"a": 1}], dtype=object))
    ds = NpyFolder(str(tmp_path))
    with pytest.raises(ValueError, match="allow_pickle"):
        ds[0]  # object arrays would need unpickling: refused


# ---- downloads -----------------------------------------------------------------------------------


class _Server:
    """A local HTTP server of in-memory files that honours Range requests and counts them."""

    def __init__(self, files: dict[str, bytes], ranges: bool = True) -> None:
        self.files, self.ranges, self.requests = files, ranges, []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                name = self.path.lstrip("/")
                server.requests.append((name, self.headers.get("Range")))
                if name not in server.files:
                    self.send_error(404)
                    return
                body = server.files[name]
                rng = self.headers.get("Range")
                if rng and server.ranges:
                    start = int(rng.split("=")[1].split("-")[0])
                    if start >= len(body):
                        self.send_error(416)
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                    body = body[start:]
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    servers = []

    def make(files, ranges=True):
        s = _Server(files, ranges)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/"  # nothing listens there: connection refused


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def test_download_tries_mirrors_in_turn_and_verifies(tmp_path, server) -> None:
    payload = os.urandom(5000)
    srv = server({"f.bin": payload})
    path = dutils.download_url([_closed_port_url() + "f.bin", srv.url + "f.bin"], str(tmp_path), sha256=sha(payload))
    assert open(path, "rb").read() == payload and not os.path.exists(path + ".part")
    srv.requests.clear()
    dutils.download_url([srv.url + "f.bin"], str(tmp_path), sha256=sha(payload))
    assert srv.requests == []  # already there and verified: nothing fetched


def test_download_rejects_a_wrong_checksum(tmp_path, server) -> None:
    srv = server({"f.bin": b"tampered"})
    with pytest.raises(RuntimeError, match="SHA-256 mismatch") as e:
        dutils.download_url(srv.url + "f.bin", str(tmp_path), sha256=sha(b"original"))
    assert f"its SHA-256 must be {sha(b'original')}" in str(e.value)
    assert os.listdir(tmp_path) == []  # neither the file nor a part of it stays


def test_download_resumes_from_a_partial_file(tmp_path, server) -> None:
    payload = os.urandom(10000)
    srv = server({"f.bin": payload})
    (tmp_path / "f.bin.part").write_bytes(payload[:6000])
    dutils.download_url(srv.url + "f.bin", str(tmp_path), sha256=sha(payload))
    assert srv.requests == [("f.bin", "bytes=6000-")]
    assert (tmp_path / "f.bin").read_bytes() == payload


def test_download_restarts_when_the_server_ignores_ranges(tmp_path, server) -> None:
    payload = os.urandom(3000)
    srv = server({"f.bin": payload}, ranges=False)
    (tmp_path / "f.bin.part").write_bytes(b"garbage")
    dutils.download_url(srv.url + "f.bin", str(tmp_path), sha256=sha(payload))
    assert (tmp_path / "f.bin").read_bytes() == payload


def test_download_offline_error_names_urls_and_the_manual_fix(tmp_path) -> None:
    urls = [_closed_port_url() + "x.gz", _closed_port_url() + "x.gz"]
    with pytest.raises(RuntimeError) as e:
        dutils.download_url(urls, str(tmp_path), sha256="ab" * 32)
    text = str(e.value)
    assert text.startswith("Could not download x.gz. Tried:")
    assert all(u in text for u in urls) and "refused" in text.lower()
    assert "Check your internet connection" in text and str(tmp_path / "x.gz") in text


def test_mnist_download(tmp_path, server) -> None:
    files = {}
    for prefix, n, seed in (("train", 5, 0), ("t10k", 3, 1)):
        images, labels = mnist_arrays(n, seed)
        files[f"{prefix}-images-idx3-ubyte.gz"] = gzip.compress(idx_bytes(images))
        files[f"{prefix}-labels-idx1-ubyte.gz"] = gzip.compress(idx_bytes(labels))
    srv = server(files)

    class LocalMNIST(MNIST):
        mirrors: ClassVar[list[str]] = [_closed_port_url(), srv.url]
        resources: ClassVar[list[tuple[str, str]]] = [(name, sha(data)) for name, data in files.items()]

    ds = LocalMNIST(str(tmp_path), train=False, download=True)
    assert len(ds) == 3 and sorted(os.listdir(tmp_path / "LocalMNIST" / "raw")) == sorted(files)
    assert ds[2][1] == int(mnist_arrays(3, 1)[1][2])
    n_requests = len(srv.requests)
    LocalMNIST(str(tmp_path), train=True, download=True)  # all present: no new request
    assert len(srv.requests) == n_requests


def test_real_mnist_resources_are_sha256_pinned() -> None:
    for cls in (MNIST, FashionMNIST, KMNIST):
        assert [name for name, _ in cls.resources] == [
            "train-images-idx3-ubyte.gz",
            "train-labels-idx1-ubyte.gz",
            "t10k-images-idx3-ubyte.gz",
            "t10k-labels-idx1-ubyte.gz",
        ]
        assert all(len(h) == 64 and int(h, 16) >= 0 for _, h in cls.resources)
    assert len({h for cls in (MNIST, FashionMNIST, KMNIST) for _, h in cls.resources}) == 12


def test_cifar10_download_extracts_the_binary_archive(tmp_path, server) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
            data = cifar_records(2, 1, seed=len(name))[0]
            info = tarfile.TarInfo(f"cifar-10-batches-bin/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    archive = buf.getvalue()
    srv = server({"cifar-10-binary.tar.gz": archive})

    class LocalCIFAR10(CIFAR10):
        urls: ClassVar[list[str]] = [srv.url + "cifar-10-binary.tar.gz"]
        tgz_sha256 = sha(archive)

    ds = LocalCIFAR10(str(tmp_path), train=True, download=True)
    assert len(ds) == 10 and ds[0][0].shape == (3, 32, 32)


def test_extract_refuses_paths_outside_the_target(tmp_path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("../evil.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    (tmp_path / "a.tar.gz").write_bytes(buf.getvalue())
    (tmp_path / "out").mkdir()
    with pytest.raises(RuntimeError, match=r"refusing to extract '\.\./evil\.txt'"):
        dutils.extract_archive(str(tmp_path / "a.tar.gz"), str(tmp_path / "out"))
    assert not (tmp_path / "evil.txt").exists()
