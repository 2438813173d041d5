"""zarr-python 2.13 (Debian's python3-zarr, numcodecs 0.11) as the peer of
tests/zarr: it writes Zarr v2 stores for stowage to read, and reads the
stores stowage writes. Every array it touches is dumped as numpy read it:
little-endian bytes in C order, one file per array, named after the node
('/' becomes '__').

  zarr_peer.py write STORE OUT_DIR   writes the arrays of CASES into STORE,
                                     then OUT_DIR/manifest.json and the dumps
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
        if fill is not None and a.dtype.kind == "f" and not np.isfinite(fill):
            fill = "NaN" if np.isnan(fill) else ("Infinity" if fill > 0 else "-Infinity")
        elif fill is not None:
            fill = fill.item() if hasattr(fill, "item") else fill
        print(json.dumps({"node": node, "dtype": a.dtype.str, "shape": list(a.shape), "chunks": list(a.chunks),
                          "order": a.order, "fill_value": fill,
                          "compressor": a.compressor.get_config() if a.compressor else None,
                          "separator": a._dimension_separator or ".", "attributes": a.attrs.asdict(),
                          "chunks_stored": a.nchunks_initialized}))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "read":
        read(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit("usage: zarr_peer.py write STORE OUT | read STORE OUT NODE...")
