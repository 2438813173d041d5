"""Every shared fixture of every format (tests/fixtures/<format>/) read
through the Python package equals its expected values, as the C++ suites
in tests/<format>/ check them through the C++ API."""

import hashlib
import math

import numpy as np
import pytest
import scipy.sparse

import stowage
from conftest import expected_json, fixture, needs

N5_CONTAINERS = sorted(p.name for p in fixture("n5").glob("*.n5"))
DATG = sorted(p.stem for p in fixture("datg").glob("*.datg"))
BPCELLS = sorted(p.name[: -len(".expected.json")] for p in fixture("bpcells").glob("*.expected.json"))
DAF = sorted(p.name[: -len(".expected.json")] for p in fixture("daf").glob("*.expected.json"))
DATADINGS = sorted(p.name[: -len(".msgpack.expected.json")] for p in fixture("datadings").glob("*.msgpack.expected.json"))
ZARR = sorted(p.name[: -len(".expected.json")] for p in fixture("zarr").glob("*.expected.json"))


def test_every_format_has_fixtures():
    assert len(N5_CONTAINERS) == 7 and len(DATG) >= 12 and len(BPCELLS) == 14
    assert len(DAF) >= 7 and len(DATADINGS) == 5 and len(ZARR) == 4


def little_endian_bytes(a):
    a = np.asarray(a)
    if a.dtype.kind in "SV" or a.dtype.itemsize == 1:
        return a.tobytes()
    return a.astype(a.dtype.newbyteorder("<")).tobytes()


# ---- N5 ---------------------------------------------------------------------------


# (Two containers hold zstd and blosc datasets.)
@pytest.mark.parametrize("container", [pytest.param(c, marks=needs("zstd", "blosc")) if c in ("java-style.n5", "zarr-written.n5") else c
                                       for c in N5_CONTAINERS])
def test_n5_fixture(container):
    expected = expected_json(fixture("n5", container + ".expected.json"))
    store = stowage.open(fixture("n5", container))
    assert store.format == "n5"
    assert expected["datasets"]
    for name, ds in expected["datasets"].items():
        a = store[name]
        assert isinstance(a, stowage.Array), name
        assert a.shape == tuple(ds["shape_c_order"])
        assert a.chunks == tuple(ds["chunk_shape_c_order"])
        assert a.dtype == np.dtype(ds["dataType"])
        assert a.ndim == len(a.shape) and a.size == math.prod(a.shape) and a.nbytes == a.size * a.dtype.itemsize
        want = fixture("n5", ds["expected_bin"]).read_bytes()
        got = a[...]
        assert got.flags.c_contiguous and got.shape == a.shape
        assert little_endian_bytes(got) == want, name
        assert little_endian_bytes(np.asarray(a)) == want
        for p in ds["chunks_present_n5_order"]:
            assert a.chunk_exists(p[::-1])
        for p in ds.get("chunks_missing_n5_order", []):
            assert not a.chunk_exists(p[::-1])
        if "user_attributes" in ds:
            assert a.attrs == ds["user_attributes"]
        compression = ds["compression"]
        if "compressionType (legacy)" in compression:
            compression = {"type": compression["compressionType (legacy)"]}
        assert a.codec == compression
    for key, group in expected["groups"].items():
        node = store[key.strip("/")]
        assert isinstance(node, stowage.Group)
        attrs = dict(group["attributes"] or {})
        if key == "/":
            attrs.pop("n5", None)
            assert store.attrs == attrs
        assert node.attrs == attrs
    for name, ds in expected.get("optional_datasets", {}).items():
        node = store[name]
        if "expected_values" in ds:
            assert isinstance(node, stowage.Strings)
            assert len(node) == len(ds["expected_values"])
            assert node.to_list() == ds["expected_values"]
            assert node[2:4] == ds["expected_values"][2:4]
            assert node[-1] == ds["expected_values"][-1]
        else:
            assert isinstance(node, stowage.Records)
            payloads = ds["expected_chunk_payloads_hex"]
            assert len(node) == len(payloads)
            for i, hexed in payloads.items():
                assert node.raw(int(i)).hex() == hexed


@needs("zstd", "blosc")
def test_n5_regions_equal_the_same_slices_of_numpy():
    expected = expected_json(fixture("n5", "zarr-written.n5.expected.json"))
    store = stowage.open(fixture("n5", "zarr-written.n5"))
    rng = np.random.default_rng(7)
    for name, ds in expected["datasets"].items():
        a = store[name]
        want = np.frombuffer(fixture("n5", ds["expected_bin"]).read_bytes(), a.dtype.newbyteorder("<")).reshape(a.shape)
        for _ in range(20):
            key = []
            for n in a.shape:
                kind = rng.integers(4)
                lo, hi = sorted(rng.integers(-n, n + 1, size=2))
                if kind == 0:
                    key.append(int(rng.integers(-n, n)))
                elif kind == 1:
                    key.append(slice(int(lo), int(hi)))
                elif kind == 2:
                    key.append(slice(int(hi), int(lo), -int(rng.integers(1, 4))))
                else:
                    key.append(slice(None, None, int(rng.integers(1, 5))))
            key = tuple(key)
            got = a[key]
            assert got.shape == want[key].shape, (name, key)
            assert np.array_equal(got, want[key]), (name, key)
            assert got.flags.c_contiguous
        assert np.array_equal(a[..., 0], want[..., 0])
        assert np.array_equal(a[0, ...], want[0, ...])


# ---- datg ---------------------------------------------------------------------------


def check_names(names, expected):
    if isinstance(expected, list):
        assert names == expected
        return
    assert len(names) == expected["count"]
    assert names[: len(expected["first"])] == expected["first"]
    assert names[len(names) - len(expected["last"]) :] == expected["last"]


@pytest.mark.parametrize("name", DATG)
def test_datg_fixture(name):
    expected = expected_json(fixture("datg", name + ".expected.json"))
    store = stowage.open(fixture("datg", name + ".datg"))
    assert store.format == "datg" and store.keys() == []
    a = store[""]
    rows, cols = expected["shape"]
    assert isinstance(a, stowage.Array)
    assert a.shape == (rows, cols) and a.dtype == np.float64
    assert a.chunks == (min(expected["layout"]["rows_per_block"], rows), cols)
    meta = expected["metadata"]
    assert a.attrs["dataset_name"] == meta["dataset_name"]
    assert a.attrs["created_epoch_seconds"] == meta["created_epoch_seconds"]
    assert a.codec["type"] == "lz4"
    (row_dim, row_names), (col_dim, col_names) = a.dims
    assert (row_dim or "", col_dim or "") == (meta["data_on_rows"], meta["data_on_cols"])  # unnamed: None
    check_names(row_names, expected["row_names"])
    check_names(col_names, expected["col_names"])
    want = fixture("datg", name + ".expected.bin").read_bytes()
    assert a[:, :].view(np.uint64).tobytes() == want  # bit for bit: NaN payloads, -0.0


# ---- BPCells ---------------------------------------------------------------------------


def dense_bits(m):
    """A scipy matrix made dense by assignment (toarray() adds into zeros,
    which turns -0.0 into 0.0)."""
    coo = m.tocoo()
    out = np.zeros(m.shape, m.dtype)
    out[coo.row, coo.col] = coo.data
    return out


@pytest.mark.parametrize("name", BPCELLS)
def test_bpcells_fixture(name):
    want = expected_json(fixture("bpcells", name + ".expected.json"))
    store = stowage.open(fixture("bpcells", name))
    assert store.format == "bpcells"
    m = store[""]
    assert isinstance(m, stowage.Sparse)
    assert m.shape == tuple(want["shape"]) and m.dtype == np.dtype(want["dtype"])
    assert m.format == ("csr" if want["storage_order"] == "row" else "csc")
    assert m.nnz == want["nnz_stored"]
    assert m.storage["version"] == want["version"]  # how it is stored, not an attribute
    assert m.attrs == {}
    assert [d[0] for d in m.dims] == ["rows", "cols"]
    assert m.dims[0][1] == want["row_names"] and m.dims[1][1] == want["col_names"]
    expected_bin = fixture("bpcells", want["data"]["file"]).read_bytes()
    s = m.to_scipy()
    assert isinstance(s, scipy.sparse.csc_matrix if m.format == "csc" else scipy.sparse.csr_matrix)
    assert s.shape == m.shape and s.nnz == m.nnz
    assert dense_bits(s).tobytes() == expected_bin
    assert np.asarray(m).tobytes() == expected_bin
    # Each major alone, and the second half, decode in isolation.
    dense = np.frombuffer(expected_bin, m.dtype).reshape(m.shape)
    half = m.majors // 2
    part = m.to_scipy(major=slice(half, None))
    if m.format == "csc":
        assert dense_bits(part).tobytes() == np.ascontiguousarray(dense[:, half:]).tobytes()
    else:
        assert dense_bits(part).tobytes() == np.ascontiguousarray(dense[half:, :]).tobytes()
    for major in range(m.majors):
        one = dense_bits(m.to_scipy(major=slice(major, major + 1)))
        ref = dense[:, major : major + 1] if m.format == "csc" else dense[major : major + 1, :]
        assert one.tobytes() == np.ascontiguousarray(ref).tobytes()


# ---- Daf ------------------------------------------------------------------------------


def check_daf_property(store, node, e, matrix):
    p = store[node]
    eltype = e["eltype"]
    assert p.storage["daf_eltype"] == eltype
    assert p.storage["daf_storage"] == e["storage"]
    assert p.shape == (tuple(e["shape"]) if matrix else (e["length"],))
    if eltype == "String":
        assert isinstance(p, stowage.Strings)
        if matrix:
            want = [v for row in e["values_row_major"] for v in row]
        else:
            want = e["values"]
        assert p.to_list() == want
        return
    kind = stowage.Sparse if matrix and e["storage"] == "sparse" else stowage.Array
    assert isinstance(p, kind), node
    want = fixture("daf", e["bin"]).read_bytes()
    assert len(want) == e["bin_bytes"]
    if isinstance(p, stowage.Sparse):
        assert dense_bits(p.to_scipy()).astype(p.dtype.newbyteorder("<")).tobytes() == want
    assert little_endian_bytes(np.asarray(p)) == want


@pytest.mark.parametrize("name", [pytest.param(n, marks=needs("zstd")) if n.endswith("_zstd") else n for n in DAF])
def test_daf_fixture(name):
    expected = expected_json(fixture("daf", name + ".expected.json"))
    if expected["must_fail"]:
        with pytest.raises(stowage.Error) as failure:
            stowage.open(fixture("daf", name), format="daf")
        assert name in str(failure.value)
        return
    store = stowage.open(fixture("daf", name), format="daf")
    attrs = store.attrs
    for scalar, s in expected["scalars"].items():
        assert attrs["daf_types"][scalar] == s["type"]
        assert attrs[scalar] == s["value"]
    assert sorted(store["axes"].keys()) == sorted(expected["axes"])
    for axis, a in expected["axes"].items():
        assert store["axes/" + axis].to_list() == a["entries"]
    checked = 0
    for axis, props in expected["vectors"].items():
        assert len(store["vectors/" + axis]) == len(props)
        for prop, e in props.items():
            check_daf_property(store, f"vectors/{axis}/{prop}", e, False)
            checked += 1
    for rows, by_cols in expected["matrices"].items():
        for cols, props in by_cols.items():
            for prop, e in props.items():
                check_daf_property(store, f"matrices/{rows}/{cols}/{prop}", e, True)
                checked += 1
    assert checked > 0


# ---- datadings ---------------------------------------------------------------------------


def check_float(got, want):
    assert type(got) is float
    if isinstance(want, str):
        assert math.isnan(got) if want == "nan" else got == (math.inf if want == "inf" else -math.inf)
    else:
        assert got == want and math.copysign(1, got) == math.copysign(1, want)


def check_value(got, e, bin_, where):
    if e is None:
        assert got is None, where
    elif isinstance(e, bool):
        assert type(got) is bool and got == e, where
    elif isinstance(e, int):
        assert type(got) is int and got == e, where
    elif isinstance(e, str):
        assert type(got) is str and got == e, where
    elif isinstance(e, list):
        assert type(got) is list and len(got) == len(e), where
        for i, (g, w) in enumerate(zip(got, e)):
            check_value(g, w, bin_, f"{where}[{i}]")
    elif "$map" in e:
        assert type(got) is dict and len(got) == len(e["$map"]), where
        for (gk, gv), (wk, wv) in zip(got.items(), e["$map"]):
            check_value(gk, wk, bin_, where + " key")
            check_value(gv, wv, bin_, f"{where}{{{wk!r}}}")
    elif "$bytes" in e:
        assert type(got) is bytes and got.hex() == e["$bytes"], where
    elif "$float64" in e:
        check_float(got, e["$float64"])
    elif "$ndarray" in e:
        nd = e["$ndarray"]
        assert type(got) is np.ndarray, where
        assert got.dtype.str == nd["dtype"] or (got.dtype.kind == "V" and got.dtype.itemsize == nd["itemsize"]), where
        assert got.shape == tuple(nd["shape"]) and got.size == nd["size"] and got.dtype.itemsize == nd["itemsize"]
        assert little_endian_bytes(got) == bin_[nd["bin_offset"] : nd["bin_offset"] + nd["bin_nbytes"]], where
        if "descr" in nd:
            assert [[n, got.dtype.fields[n][0].str] for n in got.dtype.names] == [d[:2] for d in nd["descr"]]
        if "values" in nd and got.dtype.kind in "biuf":
            for g, w in zip(got.astype(np.float64).ravel().tolist(), np.array(nd["values"], dtype=object).ravel().tolist()):
                if isinstance(w, bool):
                    assert g == float(w)
                else:
                    check_float(g, w)
    elif "$scalar" in e:
        s = e["$scalar"]
        assert isinstance(got, np.generic) and not isinstance(got, np.ndarray), where
        assert got.dtype.str == s["dtype"] and got.tobytes().hex() == s["data_hex"], where
        if got.dtype.kind == "c":
            check_float(float(got.real), s["value"][0])
            check_float(float(got.imag), s["value"][1])
        elif got.dtype.kind in "iub":
            assert got.item() == s["value"], where
        else:
            check_float(float(got), s["value"])
    elif "$complex" in e:
        assert type(got) is complex, where
        check_float(got.real, e["$complex"][0])
        check_float(got.imag, e["$complex"][1])
    else:
        raise AssertionError(f"{where}: unknown tagged value {e}")


@pytest.mark.parametrize("name", DATADINGS)
def test_datadings_fixture(name):
    path = fixture("datadings", name + ".msgpack")
    e = expected_json(str(path) + ".expected.json")
    bin_ = (str(path) + ".expected.bin") and fixture("datadings", name + ".msgpack.expected.bin").read_bytes()
    data = path.read_bytes()
    store = stowage.open(path)
    assert store.format == "datadings"
    r = store[""]
    assert isinstance(r, stowage.Records)
    assert len(r) == e["num_samples"]
    decoded = list(r)
    assert len(decoded) == len(r)
    for s in e["samples"]:
        i = s["index"]
        raw = r.raw(i)
        assert raw == data[s["offset"] : s["offset"] + s["length"]]
        assert hashlib.md5(raw).hexdigest() == s["raw_md5"]
        assert r.key(i) == s["key"]
        assert r.find(s["key"]) == i and s["key"] in r
        check_value(r[i], s["value"], bin_, f"{name}#{i}")
        check_value(decoded[i], s["value"], bin_, f"{name}#{i} (iterated)")
        check_value(r.get(s["key"]), s["value"], bin_, f"{name}#{i} (by key)")
    for p in e["lookups"]["present"]:
        assert r.find(p["key"]) == p["index"]
    for a in e["lookups"]["absent"]:
        assert r.find(a["key"]) is None and a["key"] not in r and r.get(a["key"], 42) == 42
    assert r[-1] is not None and len(r[1:3]) == min(2, max(0, len(r) - 1))


# ---- Zarr (z5's v2 and v3 stores, sharded or not) -------------------------------------


# The codec plugin each fixture needs, from its name ("v3_int32_zstd_sharded").
ZARR_CODECS = {"blosc": ["blosc"], "zstd": ["zstd"], "gzip": ["gzip"], "raw": []}


@pytest.mark.parametrize("name", [pytest.param(n, marks=needs("zarr", *ZARR_CODECS[n.split("_")[2]])) for n in ZARR])
def test_zarr_fixture(name):
    expected = expected_json(fixture("zarr", name + ".expected.json"))
    store = stowage.open(fixture("zarr", expected["container"]))
    assert store.format == "zarr"
    assert store.attrs == expected["root_attributes"]
    assert list(store.keys()) == [expected["array"]]
    a = store[expected["array"]]
    assert a.shape == tuple(expected["shape"]) and a.dtype == np.dtype(expected["dtype"])
    assert a.chunks == tuple(expected["chunks"])
    assert a.fill_value == np.dtype(expected["dtype"]).type(expected["fill_value"])
    values = np.fromfile(fixture("zarr", expected["expected_bin"]), dtype=np.dtype(expected["dtype"]).newbyteorder("<"))
    values = values.reshape(expected["shape"])
    np.testing.assert_array_equal(a[...], values)
    # A region across chunk (and shard) edges, as numpy slices it.
    region = tuple(slice(s // 3, s - s // 4) for s in expected["shape"])
    np.testing.assert_array_equal(a[region], values[region])
