"""Round trips between the Python package and real peers: zarr-python's N5
store, numpy's .npy, scipy.sparse, msgpack/msgpack-numpy (what datadings
writes with); stowage.convert and stowage.plugins against the tools."""

import json
import multiprocessing
import os
import subprocess
import sys

import msgpack
import msgpack_numpy
import numcodecs
import numpy as np
import pytest
import scipy.sparse
import zarr
import zarr.n5

import stowage
import stowage._records
from conftest import fixture, needs, tool

@pytest.mark.parametrize("dtype", ["uint8", "int16", "uint32", "int64", "float32", "float64"])
@pytest.mark.parametrize("compression", [None, "gzip", pytest.param("zstd:level=5", marks=needs("zstd")),
                                         pytest.param("blosc", marks=needs("blosc")), "bzip2", "xz"])
def test_n5_written_by_stowage_reads_in_zarr(tmp_path, dtype, compression):
    rng = np.random.default_rng(1)
    values = (rng.random((13, 21, 9)) * 100).astype(dtype)
    with stowage.open(tmp_path / "out.n5", "w") as store:
        store.create_group("g", attrs={"unit": "nm"})
        a = store.create_array("g/v", values.shape, dtype, chunks=(4, 8, 5), compression=compression, attrs={"k": [1, 2]})
        a[...] = values
    z = zarr.open(zarr.n5.N5Store(str(tmp_path / "out.n5")), mode="r")
    assert z["g/v"].shape == values.shape and z["g/v"].chunks == (4, 8, 5)
    assert np.array_equal(z["g/v"][...], values)
    assert z["g/v"].attrs["k"] == [1, 2] and z["g"].attrs["unit"] == "nm"


@needs("zstd", "blosc")
def test_n5_written_by_zarr_reads_in_stowage(tmp_path):
    rng = np.random.default_rng(2)
    values = rng.integers(0, 60000, (37, 50), dtype=np.uint16)
    root = zarr.group(zarr.n5.N5Store(str(tmp_path / "z.n5")))
    root.create_dataset("a", data=values, chunks=(10, 16), compressor=numcodecs.Zstd(3))
    root.create_dataset("b", data=values.astype(np.float64) / 7, chunks=(8, 8), compressor=numcodecs.GZip(5))
    store = stowage.open(tmp_path / "z.n5")
    assert np.array_equal(store["a"][...], values)
    assert np.array_equal(store["b"][3:30, 1:49], (values.astype(np.float64) / 7)[3:30, 1:49])
    assert store["a"].codec["type"] == "zstd"


def test_partial_chunk_writes_read_modify_write(tmp_path):
    model = np.zeros((30, 41), np.int32)
    store = stowage.open(tmp_path / "w.n5", "w")
    a = store.create_array("a", model.shape, np.int32, chunks=(7, 9), compression="gzip")
    rng = np.random.default_rng(3)
    for _ in range(40):
        r0, r1 = sorted(rng.integers(0, 31, 2))
        c0, c1 = sorted(rng.integers(0, 42, 2))
        block = rng.integers(-1000, 1000, (r1 - r0, c1 - c0), dtype=np.int32)
        a[r0:r1, c0:c1] = block
        model[r0:r1, c0:c1] = block
    a[5] = 99  # a scalar broadcast into a row (an integer index)
    model[5] = 99
    a[::3, 7] = np.arange(10)  # a step
    model[::3, 7] = np.arange(10)
    store.close()
    assert np.array_equal(stowage.open(tmp_path / "w.n5")["a"][...], model)
    out = np.empty((10, 10), np.int32)
    assert stowage.open(tmp_path / "w.n5")["a"].read(out=out, offset=(3, 4)) is out
    assert np.array_equal(out, model[3:13, 4:14])


def test_npy_both_ways(tmp_path):
    values = np.arange(60, dtype=np.float32).reshape(3, 4, 5) / 3
    np.save(tmp_path / "in.npy", values)
    assert np.array_equal(stowage.open(tmp_path / "in.npy")[""][...], values)
    assert np.array_equal(np.asarray(stowage.open(tmp_path / "in.npy")[""]), values)
    with stowage.open(tmp_path / "out.npy", "w") as store:
        store.create_array("", values.shape, values.dtype)[...] = values
    assert np.array_equal(np.load(tmp_path / "out.npy"), values)


@pytest.mark.parametrize("layout", ["csc", "csr"])
def test_scipy_through_bpcells(tmp_path, layout):
    m = scipy.sparse.random(50, 70, density=0.1, format=layout, dtype=np.float64, random_state=4)
    with stowage.open(tmp_path / "m", "w", format="bpcells") as store:
        store.write_sparse("", m, dims=[("genes", [f"g{i}" for i in range(50)]), ("cells", [f"c{i}" for i in range(70)])])
    s = stowage.open(tmp_path / "m")[""]
    assert s.format == layout and s.nnz == m.nnz and s.shape == m.shape
    back = s.to_scipy()
    assert back.format == layout and (back != m).nnz == 0
    assert s.dims[0][1][:2] == ["g0", "g1"] and s.dims[1][1][-1] == "c69"
    sub = s.to_scipy(major=slice(10, 20))
    want = m.tocsc()[:, 10:20] if layout == "csc" else m.tocsr()[10:20, :]
    assert (sub != want).nnz == 0
    assert np.array_equal(np.asarray(s), m.toarray())


def test_to_scipy_recycles_large_arrays_and_overwrites_them(tmp_path):
    # Arrays of 4 MiB and more come from a pool (python/src/buffer_pool.hpp):
    # a dropped matrix's memory serves the next read, which must overwrite
    # every byte; idle memory goes back to the system after ~2 s.
    import time

    def matrix(seed, nnz_per_col):
        rng = np.random.default_rng(seed)
        cols = 2000
        indptr = np.arange(cols + 1, dtype=np.int64) * nnz_per_col
        indices = np.concatenate([np.sort(rng.choice(5000, nnz_per_col, replace=False)) for _ in range(cols)])
        values = rng.integers(1, 1000, indptr[-1], dtype=np.uint32)
        return scipy.sparse.csc_matrix((values, indices.astype(np.int32), indptr), shape=(5000, cols))

    paths = []
    for seed, per_col in ((1, 700), (2, 600)):  # 1.4 M then 1.2 M values: 5.6 and 4.8 MB arrays
        paths.append(tmp_path / f"m{seed}")
        with stowage.open(paths[-1], "w", format="bpcells") as store:
            store.write_sparse("", matrix(seed, per_col))
    first = stowage.open(paths[0])[""].to_scipy()
    assert (first != matrix(1, 700)).nnz == 0
    address = first.indices.ctypes.data
    del first
    assert stowage._core._pool_idle_bytes() > 0
    second = stowage.open(paths[1])[""].to_scipy()
    assert second.indices.ctypes.data == address  # the first one's memory, reused
    assert (second != matrix(2, 600)).nnz == 0 and second.indices.flags.writeable
    del second
    deadline = time.monotonic() + 20
    while stowage._core._pool_idle_bytes() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert stowage._core._pool_idle_bytes() == 0


def test_dense_reads_recycle_large_arrays_and_overwrite_them(tmp_path):
    # a[...], a.read() and a[::2] results of 4 MiB and more come from the same
    # pool: a dropped result's memory serves the next read, which must write
    # every byte of it, the fill value where no chunk is stored included.
    full = np.arange(128 * 128 * 128, dtype=np.uint32).reshape(128, 128, 128)
    with stowage.open(tmp_path / "full.zarr", "w") as store:
        store.create_array("v", shape=full.shape, dtype="uint32", chunks=(64, 64, 64))[...] = full
    with stowage.open(tmp_path / "sparse.zarr", "w") as store:
        holes = store.create_array("v", shape=full.shape, dtype="uint32", chunks=(64, 64, 64), fill_value=7)
        holes[:64, :64, :64] = full[:64, :64, :64]  # one of eight chunks stored
    expected = np.full(full.shape, 7, np.uint32)
    expected[:64, :64, :64] = full[:64, :64, :64]
    a, b = stowage.open(tmp_path / "full.zarr")["v"], stowage.open(tmp_path / "sparse.zarr")["v"]
    for read in (lambda x: x[...], lambda x: x.read(), lambda x: x[:, ::1, :]):
        first = read(a)
        np.testing.assert_array_equal(first, full)
        address, idle = first.ctypes.data, stowage._core._pool_idle_bytes()
        del first
        assert stowage._core._pool_idle_bytes() >= idle + full.nbytes  # held by the pool
        second = read(b)
        assert second.ctypes.data == address  # the first one's memory, reused
        assert stowage._core._pool_idle_bytes() == idle
        np.testing.assert_array_equal(second, expected)
        assert second.flags.writeable and second.flags.c_contiguous and second.dtype == np.uint32
        del second


def test_records_match_msgpack_numpy(tmp_path):
    samples = [{"key": f"s{i:03}", "image": np.full((4, 5), i, np.uint8), "label": i, "w": np.float32(i / 2)}
               for i in range(300)]
    with stowage.open(tmp_path / "set.msgpack", "w") as store:
        store.write_records("", samples[:100])
        store.write_records("", [msgpack.packb(s, default=msgpack_numpy.encode, use_bin_type=True) for s in samples[100:]])
    r = stowage.open(tmp_path / "set.msgpack")[""]
    assert len(r) == 300
    for i, got in enumerate(r):
        want = msgpack.unpackb(r.raw(i), object_hook=msgpack_numpy.decode, raw=False)
        assert got.keys() == want.keys() == samples[i].keys()
        assert np.array_equal(got["image"], samples[i]["image"]) and got["image"].dtype == np.uint8
        assert got["label"] == i and type(got["w"]) is np.float32 and got["w"] == want["w"]
    assert r.find("s123") == 123 and "s299" in r and "s300" not in r


def test_core_knows_no_record_format(tmp_path):
    # _core hands each record's bytes to a decoder module's capsule
    # (stowage._records, msgpack); raw bytes never load that module.
    with stowage.open(tmp_path / "s.msgpack", "w") as store:
        store.write_records("", [{"key": "a", "v": 1}, {"key": "b", "v": [2.5]}])
    code = ("import sys, stowage; r = stowage.open(sys.argv[1])['']; raw = list(r.iter_raw()); "
            "print(len(raw), 'stowage._records' in sys.modules, r[1], 'stowage._records' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s.msgpack")], check=True, capture_output=True,
                         text=True)
    assert out.stdout == "2 False {'key': 'b', 'v': [2.5]} True\n"
    assert not hasattr(stowage._core, "decode_sample")
    core = stowage._core.Store.open(str(tmp_path / "s.msgpack"), "r", None, None, None).records("")
    raw = [msgpack.packb({"key": "a", "v": 1}), msgpack.packb({"key": "b", "v": [2.5]})]
    assert core.read_range(0, 2, None) == raw
    assert core.read_range(0, 2, stowage._records.decoder) == [{"key": "a", "v": 1}, {"key": "b", "v": [2.5]}]
    with pytest.raises(ValueError, match="PyCapsule"):  # anything but a decoder's capsule is refused
        core.read_range(0, 2, object())


def _same(got, want):
    """Equal values of the same types, arrays by dtype, shape, bytes and read-only flag."""
    assert type(got) is type(want), (got, want)
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()
        assert got.flags.writeable == want.flags.writeable
    elif isinstance(want, dict):
        assert list(got.keys()) == list(want.keys())
        for k in want:
            _same(got[k], want[k])
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    elif isinstance(want, np.generic):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    else:
        assert got == want


def test_decoder_matches_msgpack_numpy_on_odd_maps():
    # The decoder keeps a map's entries aside and builds a dict only for
    # maps that are not msgpack-numpy arrays: the cases where that could
    # differ from msgpack building every dict first.
    def nd(**fields):
        m = {b"nd": True, b"type": "<i2", b"kind": b"", b"shape": [2, 2], b"data": bytes(range(8))}
        m.update({k.encode(): v for k, v in fields.items()})
        return {k: v for k, v in m.items() if v is not None}

    cases = [
        {"key": "a", "x": nd()},
        {"key": "a", "x": nd(shape=[4], type="<u2")},
        {"key": "a", "x": nd(data=None)},
        {"key": "a", "x": {b"nd": False, b"type": "<f8", b"data": np.float64(2.5).tobytes()}},
        {"key": "a", "x": {b"complex": True, b"data": "(1+2j)"}},
        {"key": "a", "x": {b"complex": True}},
        {"key": "a", "x": [nd(), {"nd": True, "type": "<i2"}, [nd(type="|u1", shape=[8])]]},
        {"key": "a", "nested": {"deeper": {"deepest": nd()}, "n": None, "f": 1.5, "b": b"\x00"}},
        {"key": "a", "x": {}, "y": [], "z": [[]]},
    ]
    packed = [msgpack.packb(c, use_bin_type=True) for c in cases]
    # Duplicate keys (the last value wins, in the first key's place), also
    # in an nd map, written by hand.
    packed.append(b"\x83\xa3key\xa1a\xa1k\x01\xa1k\x02")
    packed.append(b"\x81\xa1x" + b"\x86" + msgpack.packb(nd(), use_bin_type=True)[1:] + b"\xc4\x04type\xa3<u2")
    for p in packed:
        want = msgpack.unpackb(p, raw=False, strict_map_key=False, object_hook=msgpack_numpy.decode)
        _same(stowage._records.decode_sample(p), want)
    # An array as a key becomes a tuple (msgpack refuses it: unhashable list).
    assert stowage._records.decode_sample(b"\x82\xa3key\xa1a\x92\x01\x02\xc3") == {"key": "a", (1, 2): True}
    # A map as a key: both refuse it (unhashable), also inside an nd map.
    for p in (b"\x81\x81\x01\x02\x03", b"\x82\xc4\x02nd\xc3\x81\x01\x02\x03"):
        with pytest.raises(TypeError):
            msgpack.unpackb(p, raw=False, strict_map_key=False, object_hook=msgpack_numpy.decode)
        with pytest.raises(TypeError):
            stowage._records.decode_sample(p)
    # After an error the decoder starts clean: a batch keeps decoding.
    _same(stowage._records.decode_sample(packed[0]), msgpack.unpackb(packed[0], raw=False, object_hook=msgpack_numpy.decode))


def test_xarray_has_dimension_names_and_labels():
    a = stowage.open(fixture("datg", "basic_4x5.datg"))[""]
    x = stowage.to_xarray(a)
    assert x.dims == ("Rows", "Cols")
    assert list(x.coords["Rows"].values) == ["row1", "row2", "row3", "row4"]
    assert list(x.coords["Cols"].values) == ["col1", "col2", "col3", "col4", "col5"]
    assert np.array_equal(x.values, a[...], equal_nan=True)
    assert x.attrs["dataset_name"] == "Title"


def test_dask_array_on_the_native_chunk_grid():
    a = stowage.open(fixture("n5", "zarr-written.n5"))["zlib/int32_3d"]
    d = stowage.to_dask(a)
    assert d.chunksize == a.chunks and d.shape == a.shape and d.dtype == a.dtype
    assert np.array_equal(d.compute(scheduler="threads"), a[...])
    assert int(d.sum().compute()) == int(a[...].astype(np.int64).sum())


def test_a_sparse_matrix_reads_dense():
    # to_dask of a Sparse matrix (scipy.sparse blocks): test_anndata.py
    m = stowage.open(fixture("bpcells", "uint_packed_col_multichunk"))[""]
    assert np.array_equal(np.asarray(m), m.to_scipy().toarray())
    assert np.array_equal(m.read_dense(7, 1, 20, 2), m.to_scipy().toarray()[7:27, 1:3])


@needs("zstd", "blosc")
def test_convert_returns_the_tools_summary(tmp_path):
    src = fixture("n5", "zarr-written.n5")
    calls = []
    summary = stowage.convert(src, tmp_path / "py.n5", compression="zstd:level=3", progress=calls.append)
    tool_out = subprocess.run([tool("stowage-convert"), str(src), str(tmp_path / "tool.n5"), "--compression",
                               "zstd:level=3", "--json", "--quiet"], check=True, capture_output=True, text=True)
    from_tool = json.loads(tool_out.stdout)
    assert summary.keys() == from_tool.keys()
    for key in ("from", "to", "nodes", "chunks", "bytes_in", "bytes_out", "notes"):
        assert summary[key] == from_tool[key], key
    assert calls and calls[-1]["bytes_done"] == calls[-1]["bytes_total"] == summary["bytes_in"]
    got = stowage.open(tmp_path / "py.n5")
    ref = stowage.open(src)
    for name in ("raw/int16_2d", "blosc/float64_3d", "sparse/uint16_2d"):
        assert got[name].codec["type"] == "zstd"
        assert np.array_equal(got[name][...], ref[name][...])


@needs("zstd", "blosc")
def test_convert_stops_when_progress_raises_and_writes_nothing(tmp_path):
    def stop(p):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        stowage.convert(fixture("n5", "zarr-written.n5"), tmp_path / "never.n5", progress=stop)
    assert not (tmp_path / "never.n5").exists()


@needs("zstd", "blosc")
def test_convert_writes_to_any_storage_that_renames_and_refuses_read_only_ones():
    src = fixture("n5", "zarr-written.n5")
    summary = stowage.convert(src, "memory://convert-test/out.n5")
    assert summary["nodes"] > 0
    got, ref = stowage.open("memory://convert-test/out.n5"), stowage.open(src)
    for name in ("raw/int16_2d", "blosc/float64_3d", "sparse/uint16_2d"):
        assert np.array_equal(got[name][...], ref[name][...])
    with pytest.raises(stowage.UnsupportedError, match="http storage is read only"):
        stowage.convert(src, "http://127.0.0.1:9/out.n5")


@needs("zstd", "blosc")
def test_convert_options_reach_the_library(tmp_path):
    src = str(fixture("datg", "basic_4x5.datg"))
    s = stowage.convert(src, tmp_path / "m.npy", drop_metadata=True, cast="float32")
    assert s["to"] == "npy"
    assert np.array_equal(np.load(tmp_path / "m.npy"), stowage.open(src)[""][...].astype(np.float32))
    with pytest.raises(stowage.InvalidArgumentError, match="level"):
        stowage.convert(src, tmp_path / "x.n5", compression="zstd:lvl=5")
    with pytest.raises(stowage.InvalidArgumentError, match="unknown option"):
        stowage.convert(src, tmp_path / "x.n5", colour="blue")


@needs("zstd", "blosc", "zarr")
def test_convert_zarr_version_and_shards_reach_the_library(tmp_path):
    src = fixture("n5", "zarr-written.n5")
    s = stowage.convert(src, tmp_path / "v2.zarr", zarr_version=2)
    assert s["open_options"] == {"zarr_version": 2} and s["shards"] == []
    ref = zarr.open_group(zarr.n5.N5FSStore(str(src)), mode="r")
    got = zarr.open_group(str(tmp_path / "v2.zarr"), mode="r")  # zarr-python 2.13 reads what version 2 wrote
    assert got["zstd/uint64_2d"].compressor == numcodecs.Zstd(level=3)  # the N5 codec, kept
    assert np.array_equal(got["zstd/uint64_2d"][...], ref["zstd/uint64_2d"][...])
    s = stowage.convert(src, tmp_path / "o.zarr", open_options={"zarr_version": 2})
    assert s["open_options"] == {"zarr_version": 2}
    with pytest.raises(stowage.InvalidArgumentError, match="open option 'zarr_version': format n5 has no such option"):
        stowage.convert(src, tmp_path / "x.n5", zarr_version=2)
    with pytest.raises(stowage.InvalidArgumentError, match="takes no shards: Zarr v2 has no shards"):
        stowage.convert(src, tmp_path / "y.zarr", zarr_version=2, shards=(32, 32))
    with pytest.raises(stowage.InvalidArgumentError, match="format zarr takes 2 or 3 for zarr_version"):
        stowage.convert(src, tmp_path / "z.zarr", zarr_version=5)


@needs("zstd", "blosc")
def test_plugins_are_the_tools_list():
    tool_out = subprocess.run([tool("stowage-plugin-list"), "--json"], check=True, capture_output=True, text=True)
    assert stowage.plugins() == json.loads(tool_out.stdout)["plugins"]
    ids = {p["id"] for p in stowage.plugins()}
    assert {"n5", "datg", "daf", "bpcells", "datadings", "npy", "gzip", "zstd", "blosc"} <= ids
    assert all(p["state"] == "loaded" for p in stowage.plugins())
    assert "params_schema" in stowage.plugin_detail("zstd")
    # Byte backends are of kind "storage" ("store" is an open dataset).
    kinds = {p["id"]: p["kind"] for p in stowage.plugins()}
    assert (kinds["file"], kinds["memory"], kinds["zstd"], kinds["n5"]) == ("storage", "storage", "codec", "format")


def _read_in_child(array, queue):
    queue.put(int(array[...].astype(np.int64).sum()))


@needs("zstd", "blosc")
def test_a_forked_child_reads_after_the_parent_did():
    # The parent's thread pool does not survive fork(); the child must not
    # wait for its threads (DataLoader and multiprocessing fork by default).
    a = stowage.open(fixture("n5", "zarr-written.n5"))["zstd/uint64_2d"]
    want = int(a[...].astype(np.int64).sum())
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_read_in_child, args=(a, queue), daemon=True)
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert queue.get(timeout=1) == want


@pytest.mark.parametrize("dtype, fill", [("float32", np.nan), ("float64", -np.inf), ("int16", -7), ("uint8", 200)])
def test_zarr_fill_value_is_a_scalar_of_the_dtype(tmp_path, dtype, fill):
    """zarr-python writes an array with one chunk of four stored; the rest
    reads as its fill value, which Array.fill_value gives as numpy would."""
    z = zarr.open(str(tmp_path / "f.zarr"), mode="w", shape=(4, 6), chunks=(2, 3), dtype=dtype, fill_value=fill)
    z[:2, :3] = 1
    a = stowage.open(tmp_path / "f.zarr")[""]
    assert type(a.fill_value) is np.dtype(dtype).type
    np.testing.assert_array_equal(a.fill_value, np.array(fill, dtype=dtype))
    np.testing.assert_array_equal(a[...], z[...])


# ---- float16 and complex ---------------------------------------------------------------------


def _specials(dtype):
    """Values of dtype with NaN, infinities, -0.0 and (for float16) a subnormal among them."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        v = np.array([1.5 - 2j, complex(np.inf, -0.0), complex(np.nan, 3), 1e-30j, -7 + 0.25j, 0j])
    else:
        v = np.array([1.5, -0.0, np.inf, np.nan, 6e-8, -65504])
    return v.astype(dtype).reshape(2, 3)


def _same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    part = "u%d" % (a.dtype.itemsize // (2 if a.dtype.kind == "c" else 1))
    assert (np.ascontiguousarray(a).view(part) == np.ascontiguousarray(b).view(part)).all(), (a, b)


@pytest.mark.parametrize("dtype", ["float16", "complex64", "complex128"])
@pytest.mark.parametrize("where", ["x.npy", "v2.zarr", "v3.zarr"])
def test_float16_and_complex_written_from_python_read_back_and_by_the_peer(tmp_path, dtype, where):
    """numpy arrays of the new dtypes written through stowage read back bit for bit,
    and numpy (.npy) or zarr-python 2.13 (Zarr v2) read what was written."""
    values = _specials(dtype)
    options = {"zarr_version": 2 if where == "v2.zarr" else 3} if where.endswith(".zarr") else None
    with stowage.open(tmp_path / where, "w", options=options) as store:
        a = store.create_array("" if where == "x.npy" else "a", values.shape, values.dtype)
        a[...] = values
    got = stowage.open(tmp_path / where)["" if where == "x.npy" else "a"]
    assert got.dtype == np.dtype(dtype)
    _same_bits(got[...], values)
    if where == "x.npy":
        _same_bits(np.load(tmp_path / where), values)
    elif where == "v2.zarr":
        _same_bits(zarr.open_array(str(tmp_path / where / "a"), mode="r")[...], values)


@pytest.mark.parametrize("dtype, fill", [("float16", np.nan), ("float16", -1.5), ("complex64", 1.5 - 2j),
                                         ("complex128", complex(-np.inf, 0.25)), (">c8", 3j), (">f2", np.inf)])
def test_zarr_fill_value_of_float16_and_complex(tmp_path, dtype, fill):
    """zarr-python 2.13 writes one chunk of four; the rest reads as its fill
    value, which Array.fill_value gives as a numpy scalar of the dtype."""
    z = zarr.open(str(tmp_path / "f.zarr"), mode="w", shape=(4, 6), chunks=(2, 3), dtype=dtype, fill_value=fill)
    z[:2, :3] = _specials(dtype)
    a = stowage.open(tmp_path / "f.zarr")[""]
    assert type(a.fill_value) is np.dtype(dtype).type
    np.testing.assert_array_equal(a.fill_value, np.array(fill, dtype=dtype))
    np.testing.assert_array_equal(a[...], z[...])


def test_python_writes_of_complex_and_float16_follow_numpys_casting(tmp_path):
    with stowage.open(tmp_path / "c.zarr", "w") as store:
        c = store.create_array("c", (3,), np.complex64)
        h = store.create_array("h", (2,), np.float16)
        c[...] = [1, 2.5, 3j]  # Python numbers are weak: they go in by value
        h[...] = [0.5, 1e4]
        with pytest.raises(stowage.InvalidArgumentError, match="cannot write complex128 values into a float16"):
            h[...] = np.array([1j, 2])
        with pytest.raises(stowage.InvalidArgumentError, match="overflows"):
            h[...] = [1e5, 1]  # beyond float16's 65504
        with pytest.raises(stowage.InvalidArgumentError, match="overflows"):
            c[...] = np.array([1e300, 0, 0], dtype=np.complex128)
    back = stowage.open(tmp_path / "c.zarr")
    np.testing.assert_array_equal(back["c"][...], np.array([1, 2.5, 3j], dtype=np.complex64))
    np.testing.assert_array_equal(back["h"][...], np.array([0.5, 1e4], dtype=np.float16))
