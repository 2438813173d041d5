"""zarr-python 2.13 (Debian's python3-zarr, numcodecs 0.11) as the peer of
tests/zarr: it writes Zarr v2 stores for stowage to read, and reads the
stores stowage writes. Every array it touches is dumped as numpy read it:
little-endian bytes in C order, one file per array, named after the node
('/' becomes '__').

  zarr_peer.py write STORE OUT_DIR   writes the arrays of CASES into STORE,
                                     then OUT_DIR/manifest.json and the dumps
  zarr_peer.py write-filters STORE OUT_DIR
                                     the same for the arrays of FILTERED
                                     (numcodecs' delta, shuffle, astype,
                                     fixedscaleoffset, quantize, bitround,
                                     packbits)
  zarr_peer.py write-dtypes STORE OUT_DIR
                                     the same for the float16 and complex
                                     arrays of DTYPED
  zarr_peer.py consolidate STORE     zarr.consolidate_metadata(STORE)
  zarr_peer.py read-consolidated STORE OUT_DIR
                                     opens STORE with zarr.open_consolidated
                                     and dumps every array in it, as read
  zarr_peer.py read STORE OUT_DIR NODE...
                                     dumps each NODE and prints one JSON line
                                     per node: what zarr-python sees of it
"""
import json
import os
import sys

import numcodecs
import numpy as np
import zarr

# The compressors zarr-python writes with, as numcodecs configs.
COMPRESSORS = {
    "raw": None,
    "blosc-lz4": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
    "blosc-zstd-bit": {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0},
    "blosc-auto": {"id": "blosc", "cname": "blosclz", "clevel": 9, "shuffle": -1, "blocksize": 256},
    "zlib": {"id": "zlib", "level": 1},
    "gzip": {"id": "gzip", "level": 5},
    "bz2": {"id": "bz2", "level": 9},
    "lzma": {"id": "lzma", "format": 1, "check": -1, "preset": 1, "filters": None},
    "zstd": {"id": "zstd", "level": 3},
    "lz4": {"id": "lz4", "acceleration": 1},
}

# The arrays written with each compressor: dtype (numpy typestr, both byte
# orders), shape, chunks (edge chunks do not fit), order, separator, fill
# value, and how many rows along axis 0 are written (the rest are chunks
# never written, or partly written ones).
ARRAYS = [
    ("u2", "<u2", (13, 10), (4, 3), "C", ".", 0, None),
    ("f8be", ">f8", (13, 10), (4, 3), "F", "/", "NaN", 6),
    ("b1", "|b1", (9, 7), (4, 4), "C", "/", True, 5),
    ("i8", "<i8", (11, 5), (3, 2), "F", ".", -7, 4),
    ("f4", "<f4", (5, 6, 7), (2, 4, 3), "C", ".", "-Infinity", 3),
    ("i1", "|i1", (30,), (8,), "F", "/", 3, None),
    ("i4be", ">i4", (6, 5), (6, 5), "C", ".", 2**31 - 1, 6),
    ("u8", "<u8", (7, 3), (2, 2), "C", "/", 2**64 - 1, 3),
]


# Arrays with filters: name, dtype, shape, chunks, filters (numcodecs
# configs), compressor (a key of COMPRESSORS), how the data is made
# ("random"; "walk": a random walk with small steps, for deltas stored in
# narrow types; "small": integers 0..255; "f4": float64 values a float32
# holds), and rows written (None: all).
FILTERED = [
    ("delta_i4", "<i4", (50, 7), (16, 3), [{"id": "delta", "dtype": "<i4"}], "zlib", "random", None),
    ("delta_i8_as_i2", "<i8", (40,), (16,), [{"id": "delta", "dtype": "<i8", "astype": "<i2"}], "raw", "walk", 30),
    ("delta_u2be", ">u2", (9, 8), (4, 4), [{"id": "delta", "dtype": ">u2"}], "blosc-lz4", "random", None),
    ("delta_f8", "<f8", (20, 6), (8, 4), [{"id": "delta", "dtype": "<f8"}], "zstd", "random", None),
    ("delta_f4be", ">f4", (33,), (10,), [{"id": "delta", "dtype": ">f4"}], "raw", "random", None),
    ("delta_i1", "|i1", (64,), (20,), [{"id": "delta", "dtype": "|i1"}], "gzip", "random", 50),
    ("shuffle_f4", "<f4", (12, 11), (5, 5), [{"id": "shuffle", "elementsize": 4}], "zlib", "random", None),
    ("shuffle_i8be", ">i8", (17,), (6,), [{"id": "shuffle", "elementsize": 8}], "raw", "random", None),
    ("shuffle_u2_es1", "<u2", (10, 3), (4, 2), [{"id": "shuffle", "elementsize": 1}], "lz4", "random", None),
    ("shuffle_f8_es4", "<f8", (9, 9), (4, 4), [{"id": "shuffle", "elementsize": 4}], "bz2", "random", None),
    ("astype_f8_as_f4", "<f8", (13, 10), (4, 3), [{"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}],
     "blosc-zstd-bit", "f4", 9),
    ("astype_i2_as_u1", "<i2", (25,), (7,), [{"id": "astype", "encode_dtype": "|u1", "decode_dtype": "<i2"}],
     "raw", "small", None),
    ("astype_u1_as_i8be", "|u1", (6, 6), (4, 4), [{"id": "astype", "encode_dtype": ">i8", "decode_dtype": "|u1"}],
     "lzma", "random", None),
    ("astype_f8_as_i2", "<f8", (3, 7), (2, 4), [{"id": "astype", "encode_dtype": "<i2", "decode_dtype": "<f8"}],
     "zstd", "f4", None),
    ("astype_i4_as_f8", ">i4", (8, 5), (3, 5), [{"id": "astype", "encode_dtype": "<f8", "decode_dtype": ">i4"}],
     "gzip", "random", None),
    ("delta_shuffle_i4", "<i4", (30, 4), (8, 4),
     [{"id": "delta", "dtype": "<i4", "astype": "<i2"}, {"id": "shuffle", "elementsize": 2}], "zstd", "walk", None),
    ("astype_delta_shuffle", "<f8", (19, 3), (5, 3),
     [{"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}, {"id": "delta", "dtype": "<f4"},
      {"id": "shuffle", "elementsize": 4}], "blosc-auto", "f4", None),
    ("delta_shuffle_u8", "<u8", (21,), (8,), [{"id": "delta", "dtype": "<u8"}, {"id": "shuffle", "elementsize": 8}],
     "raw", "random", None),
    # fixedscaleoffset, quantize, bitround, packbits (lossy but for packbits:
    # what zarr-python reads back is what the filter kept).
    ("fso_f8_as_u2", "<f8", (20, 6), (8, 4),
     [{"id": "fixedscaleoffset", "offset": 1000, "scale": 10, "dtype": "<f8", "astype": "<u2"}], "zlib", "fso", None),
    ("fso_i4be_as_i2", ">i4", (30,), (8,),
     [{"id": "fixedscaleoffset", "offset": -7, "scale": 2, "dtype": ">i4", "astype": "<i2"}], "raw", "small", 25),
    ("fso_f4_float_shuffle", "<f4", (16, 3), (8, 3),
     [{"id": "fixedscaleoffset", "offset": 0.5, "scale": 100.5, "dtype": "<f4", "astype": "<i4"},
      {"id": "shuffle", "elementsize": 4}], "raw", "f4", None),
    ("quantize_f8", "<f8", (13, 10), (4, 3), [{"id": "quantize", "digits": 2, "dtype": "<f8"}], "raw", "random", None),
    ("quantize_f4be_as_f8", ">f4", (15,), (6,), [{"id": "quantize", "digits": 3, "dtype": ">f4", "astype": "<f8"}],
     "zstd", "f4", 10),
    ("bitround_f4", "<f4", (12, 11), (5, 5), [{"id": "bitround", "keepbits": 6}], "raw", "random", None),
    ("bitround_f8", "<f8", (9, 9), (4, 4), [{"id": "bitround", "keepbits": 20}], "gzip", "random", 7),
    ("packbits_b1", "|b1", (9, 7), (4, 4), [{"id": "packbits"}], "raw", "random", None),
    ("packbits_b1_zlib", "|b1", (30,), (7,), [{"id": "packbits"}], "zlib", "random", 20),
]


# float16 and complex arrays in both byte orders: name, dtype, shape, chunks,
# fill value (complex: [re, im], as .zarray keeps it), rows written.
DTYPED = [
    ("f2", "<f2", (9, 7), (4, 3), "NaN", 5),
    ("f2be", ">f2", (10,), (4,), -1.5, 6),
    ("c8", "<c8", (6, 5), (4, 2), [1.5, -2.0], 3),
    ("c8be", ">c8", (7,), (3,), ["-Infinity", 2.5], 4),  # (zarr 2.13 reads an infinite imaginary fill as NaN)
    ("c16", "<c16", (5, 4), (2, 4), [0.0, 0.0], 3),
    ("c16be", ">c16", (8, 3), (3, 3), [-0.25, 1e300], 4),
]


def dtyped_values(typestr, shape, seed):
    """Values with infinities, NaN and -0.0 among them (complex: in either part)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(typestr)
    data = rng.standard_normal(size=shape) * 100
    if dtype.kind == "c":
        data = data + 1j * rng.standard_normal(size=shape) * 1e3
        data.flat[1] = complex(np.inf, -0.0)
        data.flat[2] = complex(-0.0, np.nan)
    else:
        data.flat[1] = np.inf
        data.flat[2] = -0.0
    return data.astype(dtype)


def write_dtyped(store_path, out):
    store = zarr.DirectoryStore(store_path)
    zarr.group(store=store, overwrite=True)
    manifest = []
    for seed, (name, typestr, shape, chunks, fill, rows) in enumerate(DTYPED, start=200):
        value = complex(fill_of(fill[0]), fill_of(fill[1])) if isinstance(fill, list) else fill_of(fill)
        a = zarr.create(shape=shape, chunks=chunks, dtype=typestr, compressor=None, fill_value=value,
                        store=store, path=name, overwrite=True)
        a[:rows] = dtyped_values(typestr, shape, seed)[:rows]
        dump(a, out, name)
        written = json.load(open(os.path.join(store_path, name, ".zarray")))
        manifest.append({"node": name, "dtype": typestr, "shape": shape, "fill_value": written["fill_value"]})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"arrays": manifest}, f)


def fill_json(v):
    """A float fill value as .zarray spells it: non-finite ones as strings."""
    v = float(v)
    if np.isfinite(v):
        return v
    return "NaN" if np.isnan(v) else ("Infinity" if v > 0 else "-Infinity")


def filtered_values(typestr, shape, seed, how):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(typestr)
    if how == "walk":
        return np.cumsum(rng.integers(-300, 300, size=shape)).reshape(shape).astype(dtype)
    if how == "small":
        return rng.integers(0, 256, size=shape).astype(dtype)
    if how == "fso":  # what fixedscaleoffset(offset=1000, scale=10) stores in uint16
        return rng.uniform(1000, 7000, size=shape).astype(dtype)
    if how == "f4":
        return (rng.standard_normal(size=shape) * 1000).astype("<f4").astype(dtype)
    return values(typestr, shape, seed)


def write_filtered(store_path, out):
    store = zarr.DirectoryStore(store_path)
    zarr.group(store=store, overwrite=True)
    manifest = []
    for seed, (name, typestr, shape, chunks, filters, cname, how, rows) in enumerate(FILTERED, start=100):
        compressor = COMPRESSORS[cname]
        codec = numcodecs.get_codec(dict(compressor)) if compressor else None
        a = zarr.create(shape=shape, chunks=chunks, dtype=typestr, compressor=codec, fill_value=7, store=store,
                        path=name, filters=[numcodecs.get_codec(dict(f)) for f in filters], overwrite=True)
        data = filtered_values(typestr, shape, seed, how)
        if rows is None:
            a[...] = data
        else:
            a[:rows] = data[:rows]
        dump(a, out, name)
        original = np.ascontiguousarray(data).astype(data.dtype.newbyteorder("<"))
        with open(os.path.join(out, name + ".orig.bin"), "wb") as f:
            f.write(original.tobytes())  # what was written, before any filter lost precision
        manifest.append({"node": name, "dtype": typestr, "shape": shape, "chunks": chunks, "filters": filters,
                         "rows": rows,
                         "compressor": compressor, "written": json.load(open(os.path.join(store_path, name,
                                                                                          ".zarray")))})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"arrays": manifest}, f)


def consolidate(store_path):
    zarr.consolidate_metadata(zarr.DirectoryStore(store_path))


def read_consolidated(store_path, out):
    root = zarr.open_consolidated(zarr.DirectoryStore(store_path), mode="r")
    def walk(group, prefix):
        for name, a in group.arrays():
            dump(a, out, prefix + name)
            print(json.dumps({"node": prefix + name, "dtype": a.dtype.str, "shape": list(a.shape),
                              "attributes": a.attrs.asdict()}))
        for name, sub in group.groups():
            print(json.dumps({"node": prefix + name, "group": True, "attributes": sub.attrs.asdict()}))
            walk(sub, prefix + name + "/")
    print(json.dumps({"node": "", "group": True, "attributes": root.attrs.asdict()}))
    walk(root, "")


def values(typestr, shape, seed):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(typestr)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dtype)
    if dtype.kind == "f":
        data = (rng.standard_normal(size=shape) * 1000).astype(dtype)
        data.flat[1] = np.inf  # special values survive the trip
        data.flat[2] = -0.0
        return data
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype.newbyteorder("="), endpoint=True).astype(dtype)


def fill_of(fill):
    return {"NaN": np.nan, "Infinity": np.inf, "-Infinity": -np.inf}.get(fill, fill) if isinstance(fill, str) else fill


def dump(array, out, node):
    data = np.ascontiguousarray(array[...])
    data = data.astype(data.dtype.newbyteorder("<"))
    with open(os.path.join(out, node.replace("/", "__") + ".bin"), "wb") as f:
        f.write(data.tobytes())


def write(store_path, out):
    store = zarr.DirectoryStore(store_path)
    root = zarr.group(store=store, overwrite=True)
    root.attrs["written_by"] = "zarr-python " + zarr.__version__
    root.attrs["unicode"] = "grüße ✓"
    manifest = []
    seed = 1
    for cname, compressor in COMPRESSORS.items():
        for name, typestr, shape, chunks, order, separator, fill, rows in ARRAYS:
            node = cname + "/" + name
            codec = numcodecs.get_codec(dict(compressor)) if compressor else None
            a = zarr.create(shape=shape, chunks=chunks, dtype=typestr, compressor=codec, fill_value=fill_of(fill),
                            order=order, store=store, path=node, dimension_separator=separator, overwrite=True)
            a.attrs["seed"] = seed
            a.attrs["_ARRAY_DIMENSIONS"] = ["d%d" % i for i in range(len(shape))]
            data = values(typestr, shape, seed)
            if rows is None:
                a[...] = data
            else:
                a[:rows] = data[:rows]
            dump(a, out, node)
            last = [(s + c - 1) // c - 1 for s, c in zip(shape, chunks)]
            manifest.append({"node": node, "compressor": compressor, "dtype": typestr, "shape": shape,
                             "chunks": chunks, "order": order, "separator": separator, "fill_value": fill,
                             "seed": seed,
                             # the last chunk is never written when fewer rows are
                             "missing_chunk": last if rows is not None and rows <= last[0] * chunks[0] else None})
            seed += 1
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"zarr": zarr.__version__, "numcodecs": numcodecs.__version__, "arrays": manifest}, f)


def read(store_path, out, nodes):
    store = zarr.DirectoryStore(store_path)
    for node in nodes:
        a = zarr.open_array(store=store, path=node, mode="r")
        dump(a, out, node)
        fill = a.fill_value
        if fill is not None and a.dtype.kind == "c":
            fill = [fill_json(fill.real), fill_json(fill.imag)]
        elif fill is not None and a.dtype.kind == "f" and not np.isfinite(fill):
            fill = "NaN" if np.isnan(fill) else ("Infinity" if fill > 0 else "-Infinity")
        elif fill is not None:
            fill = fill.item() if hasattr(fill, "item") else fill
        print(json.dumps({"node": node, "dtype": a.dtype.str, "shape": list(a.shape), "chunks": list(a.chunks),
                          "order": a.order, "fill_value": fill,
                          "compressor": a.compressor.get_config() if a.compressor else None,
                          "filters": [f.get_config() for f in a.filters] if a.filters else None,
                          "separator": a._dimension_separator or ".", "attributes": a.attrs.asdict(),
                          "chunks_stored": a.nchunks_initialized}))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "write-filters":
        write_filtered(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "write-dtypes":
        write_dtyped(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "consolidate":
        consolidate(sys.argv[2])
    elif sys.argv[1] == "read-consolidated":
        read_consolidated(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "read":
        read(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit("usage: zarr_peer.py write|write-filters|write-dtypes STORE OUT | consolidate STORE | read-consolidated STORE OUT"
                 " | read STORE OUT NODE...")
