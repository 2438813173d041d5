"""zarr-python 2.13 (Debian's python3-zarr, numcodecs 0.11) as the peer of
tests/zarr/strings_test.cpp for string arrays (dtype "|O" with numcodecs'
VLenUTF8 filter). Values are printed as JSON, one line per array:
{"node", "shape", "values" (C order, as zarr-python reads them), "zarray"}.

  zarr_strings_peer.py write STORE        writes the arrays of CASES into a new
                                          v2 store and prints what zarr-python
                                          reads back from it
  zarr_strings_peer.py read STORE NODE... prints what zarr-python reads
"""
import json
import sys

import numcodecs
import numpy as np
import zarr

# Strings a reader must keep byte for byte: empty, ASCII, accents, CJK,
# an emoji (4-byte UTF-8), a NUL inside, newlines and quotes.
WORDS = ["", "a", "Zürich", "東京", "🙂 smile", "nul\x00inside", "two\nlines", 'quo"te', "São Paulo",
         "x" * 300]

# name, shape, chunks, compressor, fill value, dimension separator, order,
# and how many rows along the first dimension are written (the rest are
# chunks never written, or written in part: the fill value).
CASES = [
    ("plain", (7,), (3,), None, "", ".", "C", 4),
    ("zstd_2d", (5, 4), (2, 3), numcodecs.Zstd(level=3), "-", "/", "C", 3),
    ("blosc", (23,), (5,), numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE), None,
     ".", "C", 23),
    ("zlib_3d", (3, 4, 5), (2, 3, 2), numcodecs.Zlib(level=1), "", ".", "C", 2),
    ("nofill", (6,), (4,), numcodecs.GZip(level=5), None, ".", "C", 6),
    # F order: numcodecs flattens each chunk first dimension fastest
    ("f_order_3d", (5, 4, 3), (2, 3, 2), None, "", ".", "F", 4),
]


def values_of(n, seed):
    return [WORDS[(seed + 3 * i) % len(WORDS)] + ("" if i % 4 == 0 else str(i)) for i in range(n)]


def describe(arr, node):
    return {"node": node, "shape": list(arr.shape), "values": arr[...].ravel(order="C").tolist(),
            "zarray": json.loads(arr.store[(arr.path + "/" if arr.path else "") + ".zarray"])}


def write(store_path):
    root = zarr.open_group(zarr.DirectoryStore(store_path), mode="w")
    for seed, (name, shape, chunks, compressor, fill, sep, order, rows) in enumerate(CASES):
        arr = root.create_dataset(name, shape=shape, chunks=chunks, dtype=object,
                                  object_codec=numcodecs.VLenUTF8(), compressor=compressor,
                                  fill_value=fill, dimension_separator=sep, order=order)
        part = (rows,) + shape[1:]
        data = np.empty(part, dtype=object)
        data.ravel()[:] = values_of(int(np.prod(part)), seed)
        arr[:rows] = data
        print(json.dumps(describe(arr, name)))


def read(store_path, nodes):
    root = zarr.open(zarr.DirectoryStore(store_path), mode="r")
    for node in nodes:
        arr = root if node == "" else root[node]
        print(json.dumps(describe(arr, node)))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    elif sys.argv[1] == "read":
        read(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
