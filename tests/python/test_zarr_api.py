"""zarr-python's API on stowage (issue #34): the same operations on a
zarr-python 2.13 array or group and on stowage give the same values.

The peer is zarr-python over a Zarr v2 store it wrote (blosc, as its
default); stowage opens that very store, and a Zarr v3 (sharded) and an N5
copy of the same values, so each selection is checked on three formats.
Where zarr 2.13's ``z[...]`` refuses a selection that newer zarr-python
sends to ``oindex`` (slices mixed with arrays, boolean masks), stowage's
``a[...]`` is compared with ``z.oindex``/``z.vindex``."""

import json

import numpy as np
import pytest
import zarr
from conftest import needs

import stowage

SHAPE, CHUNKS = (37, 53), (8, 10)
REF = np.random.default_rng(34).integers(-1000, 1000, SHAPE).astype(np.int32)
SHARDS = (16, 20)


def zarr_v2(path, values=REF, chunks=CHUNKS, fill_value=0):
    """The peer's array: zarr-python 2.13 writes it (blosc, its default)."""
    z = zarr.open_array(str(path), mode="w", shape=values.shape, chunks=chunks, dtype=values.dtype,
                        fill_value=fill_value)
    z[...] = values
    return z


def stowage_array(tmp_path, fmt):
    """REF in ``fmt`` through stowage: "zarr2" is the peer's own store."""
    if fmt == "zarr2":
        zarr_v2(tmp_path / "a.zarr")
        return stowage.open(tmp_path / "a.zarr", "r+")[""]
    path = tmp_path / ("a.n5" if fmt == "n5" else "a3.zarr")
    with stowage.open(path, "w") as store:
        shards = SHARDS if fmt == "zarr3" else None
        store.create_array("a", data=REF, chunks=CHUNKS, shards=shards, compression="gzip")
    return stowage.open(path, "r+")["a"]


FORMATS = [pytest.param("zarr2", marks=needs("blosc")), "zarr3", "n5"]
rng = np.random.default_rng(7)
ROWS = rng.integers(-37, 37, 12)  # unsorted, repeated and negative, as zarr takes them
COLS = np.array([52, 0, 3, 3, 40, 11])
ROWMASK = REF[:, 0] > 0
COLMASK = REF[0] % 3 == 0
MASK = REF % 7 == 0

# (selection, how zarr 2.13 reads it): stowage's a[sel] must equal it.
GETITEM = [
    (np.s_[3:30:4, 7], lambda z, s: z[s]),
    (ROWS, lambda z, s: z.oindex[s]),  # one index array: rows
    ((ROWS, COLS[:1].repeat(12)), lambda z, s: z[s]),  # only integer arrays: coordinates, as z[...] does
    ((5, COLS), lambda z, s: z[s]),
    (np.s_[ROWS, 2:50:3], lambda z, s: z.oindex[s]),  # arrays mixed with slices: orthogonal
    (np.s_[ROWMASK, COLS], lambda z, s: z.oindex[s]),
    (np.s_[..., COLMASK], lambda z, s: z.oindex[:, COLMASK]),
    (ROWMASK, lambda z, s: z.oindex[s]),
    (MASK, lambda z, s: z.vindex[s]),  # a mask of the array's shape: a mask selection
    (np.s_[ROWS.tolist(), :], lambda z, s: z.oindex[s]),  # lists as arrays
    (np.s_[np.array([], int), 1:3], lambda z, s: z.oindex[s]),
    ((np.array(4), np.int64(-1)), lambda z, s: z[4, -1]),  # 0-d arrays are integers, as numpy's
]


@pytest.mark.parametrize("fmt", FORMATS)
def test_selections_read_as_zarr_python_reads_them(tmp_path, fmt):
    a = stowage_array(tmp_path, fmt)
    z = zarr_v2(tmp_path / "peer.zarr") if fmt != "zarr2" else zarr.open_array(str(tmp_path / "a.zarr"), "r")
    for sel, peer in GETITEM:
        got, want = a[sel], peer(z, sel)
        assert got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want), sel
    for sel in [(ROWS, COLS), (ROWMASK, slice(None)), (Ellipsis, COLMASK), (4, COLS)]:
        assert np.array_equal(a.oindex[sel], z.oindex[sel]) and np.array_equal(
            a.get_orthogonal_selection(sel), z.get_orthogonal_selection(sel)), sel
    coords = (ROWS, rng.integers(0, 53, 12))
    assert np.array_equal(a.vindex[coords], z.vindex[coords])
    assert np.array_equal(a.get_coordinate_selection(coords), z.get_coordinate_selection(coords))
    grid = (np.array([[1, 2], [30, 36]]), np.array([[0], [52]]))  # broadcast to (2, 2)
    assert np.array_equal(a.vindex[grid], z.vindex[grid]) and a.vindex[grid].shape == (2, 2)
    assert np.array_equal(a.get_mask_selection(MASK), z.get_mask_selection(MASK))
    assert np.array_equal(a.vindex[MASK], z.vindex[MASK])
    # Negative steps, which zarr refuses: numpy's answer on the peer's values.
    assert np.array_equal(a[::-3, 50:2:-7], z[...][::-3, 50:2:-7])
    assert np.array_equal(a.oindex[::-1, COLS], z[...][::-1][:, COLS])


# (selection, value, how zarr 2.13 writes it) applied in order to both.
SETITEM = [
    (np.s_[ROWS[:4], 2:50:3], -1, lambda z, s, v: z.oindex.__setitem__(s, v)),
    (np.s_[ROWMASK, COLS], np.arange(ROWMASK.sum() * len(COLS), dtype=np.int32).reshape(-1, len(COLS)),
     lambda z, s, v: z.oindex.__setitem__(s, v)),
    ((np.array([0, 36, 5]), np.array([52, 0, 5])), [7, 8, 9], lambda z, s, v: z.__setitem__(s, v)),
    (MASK, 4242, lambda z, s, v: z.vindex.__setitem__(s, v)),
    (np.s_[..., COLMASK], np.int32(-5), lambda z, s, v: z.oindex.__setitem__((slice(None), COLMASK), v)),
]


@pytest.mark.parametrize("fmt", FORMATS)
def test_selections_write_as_zarr_python_writes_them(tmp_path, fmt):
    a = stowage_array(tmp_path, fmt)
    z = zarr_v2(tmp_path / "peer.zarr")
    for sel, value, peer in SETITEM:
        a[sel] = value
        peer(z, sel, value)
    a.oindex[[1, 2], [3, 4]] = [[10, 11], [12, 13]]
    z.oindex[[1, 2], [3, 4]] = [[10, 11], [12, 13]]
    a.vindex[[30, 31], [40, 41]] = 99
    z.vindex[[30, 31], [40, 41]] = 99
    a.set_mask_selection(REF > 900, 900)
    z.set_mask_selection(REF > 900, 900)
    a.set_orthogonal_selection((slice(None), [0]), 1)
    z.set_orthogonal_selection((slice(None), [0]), 1)
    a.set_coordinate_selection(([36], [52]), 2)
    z.set_coordinate_selection(([36], [52]), 2)
    want = z[...]
    assert not np.array_equal(want, REF)
    assert np.array_equal(a[...], want)
    if fmt == "zarr2":  # what stowage wrote, read back by zarr-python
        assert np.array_equal(zarr.open_array(str(tmp_path / "a.zarr"), "r")[...], want)
    # zarr's rules for values: a value that does not fit is refused, nothing written.
    with pytest.raises(stowage.InvalidArgumentError, match="does not fit int32"):
        a.oindex[[0], :] = 2**40
    assert np.array_equal(a[...], want)


def test_orthogonal_reads_are_boxes_not_elements(tmp_path):
    a = stowage_array(tmp_path, "zarr3")
    calls = []

    class Counting:  # the extension's array, counting reads
        def __init__(self, core):
            self.core = core

        def read(self, offset, counts, out):
            calls.append(counts)
            return self.core.read(offset, counts, out)

        def __getattr__(self, name):
            return getattr(self.core, name)

    a._core = Counting(a._core)
    rows = np.arange(0, 37, 2)[::-1]  # 19 rows in every row chunk
    assert np.array_equal(a.oindex[rows, [1, 5, 52]], REF[np.ix_(rows, [1, 5, 52])])
    # Columns 1 and 5 share a chunk, 52 is 4 chunks on: two runs, two reads.
    assert calls == [[37, 5], [37, 1]]
    calls.clear()
    points = (np.array([0, 36, 1]), np.array([0, 52, 1]))  # two corners: two chunks, not the whole array
    assert np.array_equal(a.vindex[points], REF[points])
    assert sorted(calls) == [[1, 1], [2, 2]]
    # Every third chunk of a long axis: 334 runs, merged into at most 64 boxes.
    with stowage.open(tmp_path / "long.zarr", "w") as store:
        long = store.create_array("l", data=np.arange(10000, dtype="u4"), chunks=(10,))
    long = stowage.open(tmp_path / "long.zarr")["l"]
    long._core = Counting(long._core)
    calls.clear()
    picks = np.arange(0, 10000, 30)[::-1]
    assert np.array_equal(long[picks], picks) and np.array_equal(long.oindex[picks[::2]], picks[::2])
    assert 2 <= len(calls) <= 2 * 64 and sum(c[0] for c in calls) < 2 * 10000


@pytest.mark.parametrize("fmt", FORMATS)
def test_index_errors_name_the_array(tmp_path, fmt):
    a = stowage_array(tmp_path, fmt)
    z = zarr_v2(tmp_path / "peer.zarr")
    where = str(tmp_path / "a.zarr") if fmt == "zarr2" else a.store.path + "/a"
    bad = [
        (lambda x: x.oindex[[0, 40], :], "index 40 is out of bounds for axis 0 with size 37"),
        (lambda x: x[[-38]], "index -38 is out of bounds"),
        (lambda x: x.vindex[np.ones((3, 3), bool)], r"mask's shape \(3, 3\) is not the array's shape \(37, 53\)"),
        (lambda x: x.oindex[np.ones(5, bool), :], "boolean index of length 5 does not match axis 0 with size 37"),
        (lambda x: x.vindex[[1, 2]], "one integer or integer array per axis"),
        (lambda x: x[1, 60], "index 60 is out of bounds for axis 1 with size 53"),
    ]
    for read, message in bad:
        with pytest.raises(IndexError) as e:
            read(a)
        assert str(e.value).startswith(where + ": "), str(e.value)
        assert e.match(message)
        with pytest.raises(IndexError):  # zarr-python refuses the same selections
            read(z)
    with pytest.raises(IndexError, match=f"^{where}: index 37 is out of bounds"):
        a.vindex[[37], [0]] = 1


def build_tree(root):
    """The same hierarchy through either API (zarr-python's names)."""
    bar = root.create_group("bar")
    bar.create_group("baz")
    quux = bar.require_group("quux")
    quux.create_dataset("baz", shape=(100,), chunks=(10,), dtype="f8")
    root.create_group("foo")
    root.require_dataset("x", shape=(6, 4), chunks=(3, 2), dtype="i2")
    return root


def listing(root):
    paths, items = [], []
    root.visit(paths.append)
    root.visititems(lambda path, node: items.append((path, type(node).__name__)))
    found = root.visit(lambda path: path if path.endswith("quux") else None)
    return {
        "tree": str(root.tree()), "tree1": str(root.tree(level=1)), "subtree": str(root["bar"].tree()),
        "paths": paths, "kinds": [k for _, k in items], "found": found,
        "groups": [n for n, _ in root.groups()], "group_keys": list(root.group_keys()),
        "arrays": [(n, a.shape, str(a.dtype)) for n, a in root.arrays()], "array_keys": list(root.array_keys()),
        "deep": [n for n, _ in root.arrays(recurse=True)], "sub": list(root["bar"].group_keys()),
        "contains": ["bar/quux/baz" in root, "quux" in root["bar"], "bar/nope" in root, "x" in root],
    }


@pytest.mark.parametrize("fmt", ["n5", "zarr3"])
def test_groups_browse_as_zarr_python_groups(tmp_path, fmt):
    peer = listing(build_tree(zarr.open_group(str(tmp_path / "peer.zarr"), mode="w")))
    assert peer["tree"].splitlines()[:3] == ["/", " ├── bar", " │   ├── baz"]
    with stowage.open(tmp_path / "v2.zarr", "w", options={"zarr_version": 2}) as store:
        build_tree(store)
    ours = listing(stowage.open(tmp_path / "v2.zarr"))
    assert ours == peer
    # zarr-python browses the tree stowage made, and the other way round.
    assert listing(zarr.open_group(str(tmp_path / "v2.zarr"), "r")) == peer
    assert listing(stowage.open(tmp_path / "peer.zarr")) == peer
    # Another format: the same tree.
    path = tmp_path / ("t.n5" if fmt == "n5" else "t.zarr")
    with stowage.open(path, "w") as store:
        build_tree(store)
    assert listing(stowage.open(path)) == peer


def test_require_and_create_refuse_what_zarr_refuses(tmp_path):
    z = build_tree(zarr.open_group(str(tmp_path / "peer.zarr"), mode="w"))
    store = build_tree(stowage.open(tmp_path / "v2.zarr", "w", options={"zarr_version": 2}))
    where = str(tmp_path / "v2.zarr")
    for g in (z, store):
        assert g.require_group("bar")["quux/baz"].shape == (100,)  # the existing group
        assert g.require_dataset("x", shape=(6, 4), dtype="i1").dtype == np.int16  # int8 casts safely
        with pytest.raises(TypeError, match="shape do not match existing array; expected"):
            g.require_dataset("x", shape=(6, 5), dtype="i2")
        with pytest.raises(TypeError, match=r"dtypes \(int32, int16\) cannot be safely cast"):
            g.require_dataset("x", shape=(6, 4), dtype="i4")
        with pytest.raises(TypeError, match="dtypes do not match exactly"):
            g.require_dataset("x", shape=(6, 4), dtype="i1", exact=True)
        with pytest.raises(ValueError):  # zarr's ContainsGroupError, stowage's InvalidArgumentError
            g.create_group("bar")
        with pytest.raises(ValueError):
            g.require_group("x")
    with pytest.raises(stowage.InvalidArgumentError, match=f"^{where}/bar: a group is already there"):
        store.create_group("bar")
    with pytest.raises(TypeError, match=f"^{where}/x: shape"):
        store.require_array("x", shape=(1,), dtype="i2")
    store.close()


@pytest.mark.parametrize("fill", [7, -3.5, np.nan])
def test_create_array_with_data_and_fill_value_reads_in_zarr_python(tmp_path, fill):
    dtype = "i2" if fill == 7 else "f4"
    data = np.arange(30, dtype=dtype).reshape(5, 6)
    with stowage.open(tmp_path / "v2.zarr", "w", options={"zarr_version": 2}) as store:
        g = store.create_group("g")
        a = g.create_array("data", data=data, chunks=(2, 4), compression="zstd", attrs={"unit": "um"})
        assert a.shape == (5, 6) and a.dtype == np.dtype(dtype) and np.array_equal(a[...], data)
        f = g.create_array("filled", shape=(5, 6), dtype=dtype, chunks=(2, 4), fill_value=fill)
        f[0:2, 0:4] = 1  # one chunk written, the rest is the fill value
        d = g.create_dataset("auto", data=np.zeros((1000, 600), "f8"))  # zarr 2's chunks=True
    z = zarr.open_group(str(tmp_path / "v2.zarr"), "r")["g"]
    assert np.array_equal(z["data"][...], data) and z["data"].attrs["unit"] == "um"
    want = np.full((5, 6), fill, dtype)
    want[0:2, 0:4] = 1
    assert np.array_equal(z["filled"][...], want, equal_nan=True)
    ours = stowage.open(tmp_path / "v2.zarr")["g/filled"]
    assert np.array_equal(ours[...], want, equal_nan=True)
    assert np.array_equal(ours.fill_value, z["filled"].fill_value, equal_nan=True)
    assert ours.fill_value.dtype == np.dtype(dtype)
    assert d.chunks != d.shape and np.prod(d.chunks) * 8 <= 1 << 20 and z["auto"].chunks == d.chunks


def test_fill_values_where_the_format_has_none(tmp_path):
    with stowage.open(tmp_path / "x.n5", "w") as store:
        assert store.create_array("zero", shape=(4,), dtype="u1", chunks=(2,), fill_value=0).fill_value == 0
        with pytest.raises(stowage.UnsupportedError, match=f"^{tmp_path / 'x.n5'}/seven: .*N5 has no fill value"):
            store.create_array("seven", shape=(4,), dtype="u1", chunks=(2,), fill_value=7)
        assert "seven" not in store
    with stowage.open(tmp_path / "x.npy", "w") as store:
        with pytest.raises(stowage.UnsupportedError, match=f"^{tmp_path / 'x.npy'}: npy keeps no fill value"):
            store.create_array("", shape=(4,), dtype="u1", fill_value=7)
    with stowage.open(tmp_path / "v3.zarr", "w") as store:
        a = store.create_array("s", shape=(8,), dtype="u2", chunks=(2,), shards=(4,), fill_value=9)
        a[0] = 1
        assert a[...].tolist() == [1, 9, 9, 9, 9, 9, 9, 9]


@needs("blosc")
def test_info_and_chunk_counts_as_zarr_python(tmp_path):
    z = zarr.open_array(str(tmp_path / "a.zarr"), mode="w", shape=SHAPE, chunks=CHUNKS, dtype="i4")
    z[0:8, 0:25] = 1  # 3 chunks written
    a = stowage.open(tmp_path / "a.zarr")[""]
    assert (a.nchunks, a.nchunks_initialized) == (z.nchunks, z.nchunks_initialized) == (30, 3)
    assert a.chunk_grid == z.cdata_shape
    info = str(a.info)
    for line in [f"Name               : {tmp_path / 'a.zarr'}", "Type               : stowage.Array",
                 "Data type          : int32", "Shape              : (37, 53)", "Chunk shape        : (8, 10)",
                 "Fill value         : 0", "Format             : zarr v2", "Read-only          : True",
                 "No. bytes          : 7844 (7.7K)", "Chunks initialized : 3/30"]:
        assert line in info.splitlines(), info
    assert '"id": "blosc"' in info or '"type": "blosc"' in info, info
    assert repr(a.info) == info  # shows itself in a REPL, as zarr's InfoReporter
    with stowage.open(tmp_path / "s.zarr", "w") as store:
        s = store.create_array("s", shape=(8, 8), dtype="u1", chunks=(2, 2), shards=(4, 4))
        assert s.shards == (4, 4) and s.nchunks == 16 and "Shard shape        : (4, 4)" in s.info


def test_group_info_counts_as_zarr_python(tmp_path):
    z = build_tree(zarr.open_group(str(tmp_path / "v2.zarr"), mode="w"))
    peer = dict(z.info_items())
    info = stowage.open(tmp_path / "v2.zarr").info
    for key in ("No. members", "No. arrays", "No. groups", "Arrays", "Groups"):
        assert f"{key:<11} : {peer[key]}" in info.splitlines(), (key, peer[key], info)
    assert f"Name        : {tmp_path / 'v2.zarr'}" in info.splitlines()
    sub = stowage.open(tmp_path / "v2.zarr")["bar"].info
    assert f"Name        : {tmp_path / 'v2.zarr'}/bar" in sub.splitlines() and "Groups      : baz, quux" in sub


@needs("blosc", "zstd")
def test_zarr_compressors_are_taken(tmp_path):
    import numcodecs

    data = np.arange(600, dtype="u2").reshape(20, 30)
    codecs = {"blosc": numcodecs.Blosc(cname="zstd", clevel=5, shuffle=numcodecs.Blosc.BITSHUFFLE),
              "zstd": numcodecs.Zstd(level=4), "zlib": numcodecs.Zlib(level=3), "none": None}
    with stowage.open(tmp_path / "v2.zarr", "w", options={"zarr_version": 2}) as store:
        for name, codec in codecs.items():
            store.create_dataset(name, data=data, chunks=(10, 10), compressor=codec)
        with pytest.raises(stowage.InvalidArgumentError, match="compression= or compressor=, not both"):
            store.create_dataset("both", data=data, compression="zstd", compressor=None)
    z = zarr.open_group(str(tmp_path / "v2.zarr"), "r")
    for name, codec in codecs.items():
        assert z[name].compressor == codec and np.array_equal(z[name][...], data), name


@pytest.mark.parametrize("shape, dtype", [((20000, 20000), "f4"), ((512, 512, 512), "u2"), ((3000, 7), "f8"),
                                          ((100,), "i1")])
def test_arrays_made_without_chunks_are_chunked_as_zarr_python_chunks_them(tmp_path, shape, dtype):
    z = zarr.open_group(str(tmp_path / "z.zarr"), mode="w").create_dataset("a", shape=shape, dtype=dtype)
    with stowage.open(tmp_path / "s.zarr", "w") as s:
        a = s.create_array("a", shape=shape, dtype=dtype)
        b = s.create_dataset("b", shape=shape, dtype=dtype)
        assert a.chunks == b.chunks == z.chunks


def test_an_int_shape_beside_data_is_taken_as_zarr_takes_it(tmp_path):
    with stowage.open(tmp_path / "s.zarr", "w") as s:
        assert s.create_array("a", shape=5, data=np.arange(5)).shape == (5,)
        with pytest.raises(stowage.InvalidArgumentError, match=r"s.zarr.*shape \(4,\) is not data's \(5,\)"):
            s.create_array("b", shape=4, data=np.arange(5))


def test_zarr_3_compressors_and_auto_chunks_are_taken(tmp_path):
    import numcodecs

    data = np.arange(600, dtype="u2").reshape(20, 30)
    with stowage.open(tmp_path / "v3.zarr", "w") as store:
        store.create_array("a", data=data, chunks="auto", compressors={"name": "zstd", "configuration": {"level": 4}})
        store.create_array("b", data=data, chunks=(10, 10), compressors=[numcodecs.Zstd(level=2)])
        store.create_array("c", data=data, chunks=(10, 10), compressors=None)
        with pytest.raises(stowage.InvalidArgumentError, match="one codec is taken, not 2"):
            store.create_array("d", data=data, compressors=[numcodecs.Zstd(), numcodecs.Zlib()])
    meta = {n: json.loads((tmp_path / "v3.zarr" / n / "zarr.json").read_text()) for n in "abc"}
    codecs = {n: [c for c in m["codecs"] if c["name"] != "bytes"] for n, m in meta.items()}
    assert codecs["a"] == [{"name": "zstd", "configuration": {"level": 4, "checksum": False}}]
    assert codecs["b"][0]["configuration"]["level"] == 2 and codecs["c"] == []
    assert meta["a"]["chunk_grid"]["configuration"]["chunk_shape"] == [20, 30]  # zarr's guess: one chunk
    s = stowage.open(tmp_path / "v3.zarr")
    assert all(np.array_equal(s[n][...], data) for n in "abc")
