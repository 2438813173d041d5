"""Mode "w" is a transaction: only a close that completes publishes; an
exception, Ctrl-C, a failed close (a full disk) or a process that ends
without close leave the old dataset byte for byte. "w" never replaces what
is not a dataset of its format; formats that publish a whole file at close
take one writer at a time."""

import hashlib
import os
import pathlib
import pickle
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import stowage

from conftest import needs

SHAPE = (256, 64)  # written in 32 slabs of 8 rows


def _write(path, fmt, value, slabs=32, after_slab=None):
    """Creates the format's dataset at `path` holding `value` everywhere."""
    rows = SHAPE[0] // slabs
    with stowage.open(path, "w", fmt) as store:
        if fmt == "datadings":
            store.write_records("", [{"key": f"k{i}", "v": value} for i in range(slabs)])
            return
        if fmt == "bpcells":
            import scipy.sparse

            store.write_sparse("", scipy.sparse.csc_matrix(np.full(SHAPE, value, np.float64)))
            return
        node = "a" if fmt in ("n5", "zarr") else ""
        a = store.create_array(node, SHAPE, "float64", chunks=(rows, SHAPE[1]))
        for i in range(slabs):
            a[i * rows:(i + 1) * rows] = value
            if after_slab:
                after_slab(i)


def _name(fmt):
    return {"npy": "d.npy", "datg": "d.datg", "datadings": "d.msgpack", "bpcells": "d.bpcells", "n5": "d.n5",
            "zarr": "d.zarr"}[fmt]


def _snapshot(directory):
    """Every file under `directory` (hidden ones included) -> its sha256."""
    out = {}
    for p in sorted(pathlib.Path(directory).rglob("*")):
        if p.is_file():
            out[str(p.relative_to(directory))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


FORMATS = [pytest.param("npy"), pytest.param("datg", marks=needs("datg", "lz4")),
           pytest.param("datadings", marks=needs("datadings")), pytest.param("bpcells"), pytest.param("n5"),
           pytest.param("zarr", marks=needs("zarr"))]


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_exception_in_the_block_publishes_nothing(tmp_path, fmt):
    path = tmp_path / _name(fmt)
    _write(path, fmt, 1.0)
    before = _snapshot(tmp_path)

    def boom(i):
        if i == 4:
            raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        _write(path, fmt, 2.0, after_slab=boom) if fmt not in ("datadings", "bpcells") else _raise_inside(path, fmt)
    assert _snapshot(tmp_path) == before  # the old dataset byte for byte, and nothing left beside it
    _write(path, fmt, 3.0)  # a block that completes publishes
    assert _snapshot(tmp_path) != before
    assert not [p for p in os.listdir(tmp_path) if "stowage" in p]


def _raise_inside(path, fmt):
    with stowage.open(path, "w", fmt) as store:
        if fmt == "datadings":
            store.write_records("", [{"key": "x", "v": 2.0}])
        else:
            import scipy.sparse

            store.write_sparse("", scipy.sparse.csc_matrix(np.full(SHAPE, 2.0)))
        raise RuntimeError("stop")


CHILD = textwrap.dedent("""
    import sys, time
    import numpy as np
    import stowage
    path, fmt, how = sys.argv[1:4]
    rows = 8

    def write(store):
        node = "a" if fmt in ("n5", "zarr") else ""
        a = store.create_array(node, (256, 64), "float64", chunks=(rows, 64))
        for i in range(32):
            a[i * rows:(i + 1) * rows] = 2.0
            print("slab", i, flush=True)
            if how == "exit" and i == 5:
                import os
                os._exit(0)  # no close, no destructor
            if how == "return" and i == 5:
                sys.exit(0)  # no close; the store is collected at exit
            time.sleep(0.2 if how == "sigint" else 0)

    if how == "sigint":  # Ctrl-C in a with block
        with stowage.open(path, "w", fmt) as store:
            write(store)
    else:
        store = stowage.open(path, "w", fmt)
        write(store)
        store.close()
""")

HOW = ["sigint", "exit", "return"]


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("fmt", [f for f in FORMATS if f.values[0] not in ("datadings", "bpcells")])
def test_ctrl_c_or_an_exit_without_close_publishes_nothing(tmp_path, fmt, how):
    path = tmp_path / _name(fmt)
    _write(path, fmt, 1.0)
    before = _snapshot(tmp_path)
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), fmt, how], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    for line in child.stdout:
        if line.strip() == "slab 5":
            if how == "sigint":
                child.send_signal(signal.SIGINT)
            break
    child.stdout.read()
    err = child.stderr.read()
    code = child.wait(60)
    if how == "sigint":
        assert code != 0 and "KeyboardInterrupt" in err, err
    else:
        assert code == 0, err
    after = _snapshot(tmp_path)
    if how == "exit":  # no destructor ran: the hidden staging stays, the dataset is the old one
        after = {k: v for k, v in after.items() if ".stowage-" not in k}  # and the writer lock's file
    assert after == before
    assert np.all(_read(path, fmt) == 1.0)


def _read(path, fmt):
    store = stowage.open(path)
    return store["a" if fmt in ("n5", "zarr") else ""][...]


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs (the test runs as root in CI; skipped otherwise)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    d = tmp_path / "disk"
    d.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(d)], capture_output=True)
    if r.returncode != 0:
        pytest.skip("cannot mount a tmpfs here: " + r.stderr.decode())
    yield d
    if subprocess.run(["umount", str(d)]).returncode != 0:  # a file still open: detach it anyway
        subprocess.run(["umount", "-l", str(d)], check=True)


def test_a_full_disk_while_writing_publishes_nothing(small_disk):
    path = small_disk / "big.npy"
    old = np.arange(64 * 1024, dtype=np.float64).reshape(256, 256)  # 512 KiB
    np.save(path, old)
    before = path.read_bytes()
    with pytest.raises(stowage.StorageIOError) as e:
        with stowage.open(path, "w") as store:
            a = store.create_array("", (1024, 1024), "float64", chunks=(64, 1024))  # 8 MiB: does not fit
            for i in range(16):
                a[i * 64:(i + 1) * 64] = 7.0
    assert str(path) in str(e.value) and ".stowage-tmp." not in str(e.value)
    assert path.read_bytes() == before
    assert os.listdir(small_disk) == ["big.npy"]


@needs("datg", "lz4")
def test_a_close_that_fails_publishes_nothing(small_disk):
    # datg keeps blocks written out of order until close, which then writes
    # them all: here close() is what meets the full disk.
    path = small_disk / "m.datg"
    with stowage.open(path, "w") as store:
        store.create_array("", (8, 4), "float64")[...] = 1.0
    before = _snapshot(small_disk)
    store = stowage.open(path, "w")
    a = store.create_array("", (2048, 512), "float64", chunks=(64, 512))
    rng = np.random.default_rng(1)
    for i in reversed(range(1, 32)):  # never the first block: every block waits for close
        a[i * 64:(i + 1) * 64] = rng.random((64, 512))
    with pytest.raises(stowage.Error) as e:
        store.close()
    assert ".stowage-tmp." not in str(e.value)
    assert _snapshot(small_disk) == before
    assert np.all(stowage.open(path)[""][...] == 1.0)


# ---- "w" replaces only a dataset of its format ----------------------------------------


@pytest.mark.parametrize("fmt,name", [("npy", "results.txt"), ("datadings", "results.msgpack"),
                                      ("datg", "results.datg"), ("bpcells", "results"), ("n5", "notes.dir")])
def test_w_never_replaces_what_is_not_a_dataset_of_its_format(tmp_path, fmt, name):
    path = tmp_path / name
    if fmt in ("bpcells", "n5"):
        path.mkdir()
        (path / "notes.txt").write_text("my notes\n")
    else:
        path.write_text("my results\n")
    before = _snapshot(tmp_path)
    with pytest.raises(stowage.InvalidArgumentError, match="is not a dataset of format " + fmt):
        with stowage.open(path, "w", fmt):
            pass
    assert _snapshot(tmp_path) == before


def test_w_replaces_an_empty_file_and_a_dataset_of_another_format_is_refused(tmp_path):
    empty = tmp_path / "e.npy"
    empty.write_bytes(b"")
    with stowage.open(empty, "w") as store:
        store.create_array("", (3,), "uint8")[...] = [1, 2, 3]
    assert np.load(empty).tolist() == [1, 2, 3]
    with stowage.open(tmp_path / "x.n5", "w") as store:
        store.create_group("g")
    with pytest.raises(stowage.InvalidArgumentError, match="not a dataset of format zarr"):
        stowage.open(tmp_path / "x.n5", "w", "zarr")
    assert "g" in stowage.open(tmp_path / "x.n5")


def test_w_plus_creates_a_new_path_staged_and_opens_an_existing_one_in_place(tmp_path):
    path = tmp_path / "c.npy"
    store = stowage.open(path, "w+")
    store.create_array("", (2,), "int16")[...] = [5, 6]
    assert not path.exists()  # nothing at the path until close
    store.close()
    assert np.load(path).tolist() == [5, 6]
    with stowage.open(path, "w+") as store:
        assert store[""][...].tolist() == [5, 6]


# ---- messages name the user's path ---------------------------------------------------


def test_errors_of_a_store_being_created_name_the_users_path(tmp_path):
    path = tmp_path / "named.npy"
    with stowage.open(path, "w") as store:
        with pytest.raises(stowage.UnsupportedError) as e:
            store.create_array("", (2,), "uint8", attrs={"unit": "um"})
        assert str(path) in str(e.value) and "stowage-tmp" not in str(e.value), str(e.value)
        with pytest.raises(stowage.Error) as e:
            store.create_array("", (2,), np.longdouble)  # float128: no .npy of stowage's
        assert "stowage-tmp" not in str(e.value), str(e.value)


# ---- one writer at a time for formats that publish a whole file at close -----------------


def test_a_second_writer_of_a_single_file_format_is_refused(tmp_path):
    path = tmp_path / "one.npy"
    np.save(path, np.zeros(4, np.int32))
    first = stowage.open(path, "r+")
    with pytest.raises(stowage.InvalidArgumentError, match="another writer") as e:
        stowage.open(path, "r+")
    assert str(path) in str(e.value)
    other = subprocess.run([sys.executable, "-c", f"import stowage; stowage.open({str(path)!r}, 'r+')"],
                           capture_output=True, text=True)
    assert other.returncode != 0 and "another writer" in other.stderr
    assert stowage.open(path)[""][...].tolist() == [0, 0, 0, 0]  # readers are welcome
    first[""][1] = 9
    first.close()
    with stowage.open(path, "r+") as second:  # free again
        assert second[""][...].tolist() == [0, 9, 0, 0]


def test_a_writable_single_file_store_does_not_pickle(tmp_path):
    store = stowage.open(tmp_path / "p.npy", "w")
    a = store.create_array("", (4,), "uint8")
    with pytest.raises(stowage.InvalidArgumentError, match="cannot be sent to another process"):
        pickle.dumps(a)
    a[...] = [1, 2, 3, 4]
    store.close()
    back = pickle.loads(pickle.dumps(a))  # closed: workers read it
    assert back.store.mode == "r" and back[...].tolist() == [1, 2, 3, 4]


def test_a_pickled_n5_store_being_created_writes_into_its_staging(tmp_path):
    store = stowage.open(tmp_path / "s.n5", "w")
    a = store.create_array("a", (4,), "uint8", chunks=(2,))
    again = pickle.loads(pickle.dumps(a))
    again[2:] = [7, 8]  # through the other handle, into the staging directory
    assert not (tmp_path / "s.n5").exists()
    store.close()
    assert stowage.open(tmp_path / "s.n5")["a"][...].tolist() == [0, 0, 7, 8]


def test_discard_of_an_update_drops_what_npy_holds_until_close(tmp_path):
    path = tmp_path / "u.npy"
    np.save(path, np.arange(4, dtype=np.int64))
    before = path.read_bytes()
    with pytest.raises(KeyError):
        with stowage.open(path, "r+") as store:
            store[""][0] = 100
            raise KeyError("stop")
    assert path.read_bytes() == before


def test_reading_a_dataset_being_built_in_this_process_says_why_it_is_absent(tmp_path):
    import xarray

    path = tmp_path / "new.zarr"
    store = stowage.open(path, "w")
    store.create_array("a", data=np.arange(4))
    why = r"new.zarr: not published yet: a store opened in mode 'w' in this process is building it; close it"
    with pytest.raises(stowage.NotFoundError, match=why):
        stowage.open(path)
    with pytest.raises(stowage.NotFoundError, match=why):
        xarray.open_dataset(path, engine="stowage")
    store.close()
    assert stowage.open(path)["a"][...].tolist() == [0, 1, 2, 3]
    stowage.open(path, "w").discard()  # a discarded one: the plain answer again
    with pytest.raises(stowage.NotFoundError) as e:
        stowage.open(tmp_path / "other.zarr")
    assert "not published" not in str(e.value)
