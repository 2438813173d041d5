"""Array.resize and Array.append against their peers: zarr-python 2.13 doing
the same steps on a twin Zarr v2 store (each reads the other's), N5 read back
by zarr-python's N5Store, .npy read back by numpy.load, and UNSUPPORTED for
a format that cannot grow an array (datg)."""

import os
import shutil

import numpy as np
import pytest
import zarr

import stowage
from conftest import fixture, needs

SHAPE, CHUNKS = (10, 7), (4, 3)
DATA = np.arange(70, dtype="i4").reshape(SHAPE) + 1  # never the fill value


def chunk_keys(path):
    """The chunk files of a Zarr v2 array, its metadata aside."""
    return sorted(k for k in os.listdir(path) if not k.startswith("."))


def shard_files(array_dir):
    """The shard files of a Zarr v3 array ("c/0/1"); emptied directories stay, as zarr-python leaves them."""
    return sorted(os.path.relpath(os.path.join(d, f), array_dir)
                  for d, _, files in os.walk(array_dir) for f in files if f != "zarr.json")


def twin_zarr(tmp_path):
    """Two equal Zarr v2 arrays written by zarr-python: one for zarr, one for stowage."""
    paths = []
    for name in ("by_zarr.zarr", "by_stowage.zarr"):
        z = zarr.open(str(tmp_path / name), mode="w", shape=SHAPE, chunks=CHUNKS, dtype="i4", fill_value=-1)
        z[:] = DATA
        paths.append(str(tmp_path / name))
    return paths


STEPS = {
    # a shrink within edge chunks then a grow: the kept edge chunks show their old values
    "shrink then grow": [(6, 5), (12, 9)],
    "grow": [(13, 7)],
    "shrink to nothing and back": [(0, 7), (10, 7)],
    "None keeps a dimension": [(None, 2), (None, 8)],
}


@needs("zarr")
@pytest.mark.parametrize("steps", list(STEPS), ids=str)
def test_resize_as_zarr_python_does(tmp_path, steps):
    by_zarr, by_stowage = twin_zarr(tmp_path)
    z = zarr.open(by_zarr, "r+")
    with stowage.open(by_stowage, "r+") as s:
        a = s[""]
        for shape in STEPS[steps]:
            z.resize(*shape)
            assert a.resize(*shape) is None
            assert a.shape == z.shape
            np.testing.assert_array_equal(a[...], z[...])  # this Array, right after
        np.testing.assert_array_equal(s[""][...], z[...])  # a new one
    # The same chunk files, and each side reads the other's store as its own.
    assert chunk_keys(by_stowage) == chunk_keys(by_zarr)
    np.testing.assert_array_equal(zarr.open(by_stowage, "r")[...], z[...])
    with stowage.open(by_zarr) as s:
        np.testing.assert_array_equal(s[""][...], z[...])


@needs("zarr")
def test_shrink_then_grow_keeps_edge_chunks_as_zarr_python(tmp_path):
    """The values zarr-python shows after the same steps, written out: a
    chunk (4, 3) the small shape still reached keeps what it held."""
    _, path = twin_zarr(tmp_path)
    with stowage.open(path, "r+") as s:
        a = s[""]
        a.resize((6, 5))  # zarr's one-tuple form
        a.resize([12, 9])
        want = np.full((12, 9), -1, "i4")
        want[:8, :6] = DATA[:8, :6]  # rows 6, 7 and column 5 are old values
        np.testing.assert_array_equal(a[...], want)


@needs("zarr")
def test_a_write_between_shrink_and_grow_fills_the_edge_chunk_unlike_zarr_python(tmp_path):
    """The one difference, on purpose (Array.resize's docstring): a write into
    a kept edge chunk pads it with the fill value; zarr-python keeps the old values."""
    by_zarr, by_stowage = twin_zarr(tmp_path)
    z = zarr.open(by_zarr, "r+")
    z.resize(6, 7)
    z[4:6] = 50
    z.resize(10, 7)
    with stowage.open(by_stowage, "r+") as s:
        a = s[""]
        a.resize(6, 7)
        a[4:6] = 50
        a.resize(10, 7)
        np.testing.assert_array_equal(a[:6], z[:6])
        np.testing.assert_array_equal(a[6:8], np.full((2, 7), -1))  # chunk row 1 beyond row 6: fill
        np.testing.assert_array_equal(z[6:8], DATA[6:8])  # zarr-python: the values from before
        np.testing.assert_array_equal(a[8:], z[8:])


@needs("zarr")
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_append_as_zarr_python_does(tmp_path, axis):
    by_zarr, by_stowage = twin_zarr(tmp_path)
    extra = np.arange(7 * 10, dtype="i4").reshape(7, 10).T[: (3 if axis == 0 else 10), : (7 if axis == 0 else 2)]
    z = zarr.open(by_zarr, "r+")
    want_shape = z.append(extra, axis=axis % 2)  # zarr-python takes no negative axis
    with stowage.open(by_stowage, "r+") as s:
        got_shape = s[""].append(extra, axis=axis)
        assert got_shape == want_shape
    np.testing.assert_array_equal(zarr.open(by_stowage, "r")[...], z[...])
    np.testing.assert_array_equal(z[...], np.concatenate([DATA, extra], axis=axis))


@needs("zarr")
def test_append_refuses_a_mismatched_shape_as_zarr_python(tmp_path):
    by_zarr, by_stowage = twin_zarr(tmp_path)
    wrong = np.zeros((2, 6), "i4")
    with pytest.raises(ValueError):
        zarr.open(by_zarr, "r+").append(wrong)
    with stowage.open(by_stowage, "r+") as s:
        with pytest.raises(ValueError, match="every other dimension must match"):
            s[""].append(wrong)
        with pytest.raises(ValueError, match="2 dimensions"):
            s[""].resize(4)
        with pytest.raises(ValueError, match="float64 values into a int32"):  # checked before the resize
            s[""].append(np.full((1, 7), 0.5))
        assert s[""].shape == SHAPE


@needs("zarr")
def test_consolidated_metadata_has_the_new_shape_after_close(tmp_path):
    path = str(tmp_path / "g.zarr")
    g = zarr.open_group(path, mode="w")
    g.create_dataset("x", data=DATA, chunks=CHUNKS)
    zarr.consolidate_metadata(path)
    with stowage.open(path, "r+") as s:
        assert s["x"].append(DATA[:2]) == (12, 7)
    x = zarr.open_consolidated(path, mode="r")["x"]
    assert x.shape == (12, 7)
    np.testing.assert_array_equal(x[...], np.concatenate([DATA, DATA[:2]]))


@needs("n5")
def test_n5_resize_and_append_read_by_zarr_python(tmp_path):
    path = str(tmp_path / "a.n5")
    with stowage.open(path, "w") as s:
        s.create_array("x", SHAPE, "int32", chunks=CHUNKS)
        s["x"][...] = DATA
    with stowage.open(path, "r+") as s:
        a = s["x"]
        a.resize(6, 5)
        assert a.append(np.full((4, 5), 7, "i4")) == (10, 5)
    want = np.concatenate([DATA[:6, :5], np.full((4, 5), 7, "i4")])
    np.testing.assert_array_equal(zarr.open(zarr.N5Store(path), "r")["x"][...], want)
    with stowage.open(path) as s:
        np.testing.assert_array_equal(s["x"][...], want)
    # Blocks (4, 3): none is left beyond column 5 (N5 names a block x/<column>/<row>).
    assert not any(files for _, _, files in os.walk(os.path.join(path, "x", "2")))


@needs("zarr")
def test_zarr_v3_sharded_resize_drops_whole_shards(tmp_path):
    path = str(tmp_path / "a.zarr")
    with stowage.open(path, "w") as s:
        s.create_array("x", SHAPE, "int32", chunks=(2, 3), shards=(4, 6))
        s["x"][...] = DATA
    with stowage.open(path, "r+") as s:
        s["x"].resize(3, 7)
        assert shard_files(os.path.join(path, "x")) == ["c/0/0", "c/0/1"]  # of (3, 2)
        s["x"].resize(10, 7)
        want = np.zeros(SHAPE, "i4")
        want[:4] = DATA[:4]  # the shard row 0..3 stays whole
        np.testing.assert_array_equal(s["x"][...], want)


@needs("npy")
@pytest.mark.parametrize("axis", [0, 1])
def test_npy_append_read_by_numpy(tmp_path, axis):
    path = str(tmp_path / "a.npy")
    np.save(path, DATA)
    extra = np.full((3, 7) if axis == 0 else (10, 2), 9, "i4")
    with stowage.open(path, "r+") as s:
        a = s[""]
        assert a.append(extra, axis=axis) == np.concatenate([DATA, extra], axis=axis).shape
        np.testing.assert_array_equal(a[...], np.concatenate([DATA, extra], axis=axis))
        np.testing.assert_array_equal(np.load(path), DATA)  # published at close
    np.testing.assert_array_equal(np.load(path), np.concatenate([DATA, extra], axis=axis))


@needs("npy")
def test_npy_shrink_then_grow_reads_zeros(tmp_path):
    path = str(tmp_path / "a.npy")
    np.save(path, DATA)
    with stowage.open(path, "r+") as s:
        s[""].resize(4, 3)
        s[""].resize(5, 4)
    want = np.zeros((5, 4), "i4")
    want[:4, :3] = DATA[:4, :3]
    np.testing.assert_array_equal(np.load(path), want)


@needs("datg")
def test_datg_cannot_resize(tmp_path):
    for ext in ("datg", "rows.txt.gz", "cols.txt.gz"):
        shutil.copy(fixture("datg", "basic_4x5." + ext), tmp_path / ("m." + ext))
    path = str(tmp_path / "m.datg")
    with stowage.open(path) as s:
        a = s[""]
        with pytest.raises(stowage.UnsupportedError, match="format datg cannot resize") as e:
            a.resize(8, 5)
        assert path in str(e.value)
        assert a.shape == (4, 5)


@needs("zarr", "n5", "s3")
@pytest.mark.parametrize("name,options", [("a.zarr", {"zarr_version": 2}), ("a.n5", {})])
def test_resize_in_s3_deletes_the_objects_outside(server, s3, bucket, name, options):
    """On radosgw, boto3 as the peer: the chunk objects outside the new shape are gone."""
    opts = {"endpoint": server["endpoint"], "access_key_id": server["access_key"],
            "secret_access_key": server["secret_key"]}
    url = f"s3://{bucket}/{name}"
    with stowage.open(url, "w", options=options, storage_options=opts) as s:
        s.create_array("x", SHAPE, "int32", chunks=CHUNKS)
        s["x"][...] = DATA

    def chunk_objects():
        names = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=f"{name}/x/").get("Contents", [])]
        return [k for k in names if k.rsplit("/", 1)[-1] not in ("", ".zarray", ".zattrs", "attributes.json")]

    assert len(chunk_objects()) == 3 * 3
    with stowage.open(url, "r+", storage_options=opts) as s:
        s["x"].resize(5, 3)
    assert len(chunk_objects()) == 2 * 1
    with stowage.open(url, storage_options=opts) as s:
        np.testing.assert_array_equal(s["x"][...], DATA[:5, :3])
