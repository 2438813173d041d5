#!/usr/bin/python3
"""zarr-python 2 (Debian's 2.13) on the zarrs suite's unsharded layouts, as
Zarr v2 copies (zarrs_suite.cpp writes them): zarr-python 2 reads no v3.

For each PATH (a v2 array of n^3 uint16 in 256^3 chunks), best of --runs:
read all (z[...]), the round trip (read all, write a new v2 array with the
same compressor and chunks) and every 256^3 chunk read one by one at
concurrency 1 and --threads (a thread pool; zarr 2 is synchronous). --cold
drops the page cache before each timed run (root only). One untimed read
first, checked against the suite's formula on a sample.
Prints one JSON object per path: {"path", "read_s", "roundtrip_s", "chunks_s": {"1": s, "N": s}}
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import zarr
from page_cache import best


def check(a, path):
    n = a.shape[0]
    z = np.arange(0, n, 97, dtype=np.uint64)[:, None, None]
    y = np.arange(0, n, 89, dtype=np.uint64)[None, :, None]
    x = np.arange(0, n, 83, dtype=np.uint64)[None, None, :]
    want = ((x + y * y // 32 + z * z * z) % 65536).astype(np.uint16)
    if not np.array_equal(a[::97, ::89, ::83], want):
        sys.exit(f"{path}: zarr-python reads other values than the suite's")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    for path in args.paths:
        z = zarr.open_array(path, mode="r")
        check(z[...], path)
        out = {"path": path, "read_s": best(args.runs, args.cold, lambda: z[...])}
        scratch = tempfile.mkdtemp(dir=os.path.dirname(path))

        def round_trip():
            target = os.path.join(scratch, "rt.zarr")
            shutil.rmtree(target, ignore_errors=True)
            w = zarr.open_array(target, mode="w", shape=z.shape, chunks=z.chunks, dtype=z.dtype,
                                compressor=z.compressor, fill_value=z.fill_value)
            w[...] = z[...]

        out["roundtrip_s"] = best(args.runs, args.cold, round_trip)
        shutil.rmtree(scratch)
        edge = z.chunks[0]
        starts = [(i, j, k) for i in range(0, z.shape[0], edge) for j in range(0, z.shape[1], edge)
                  for k in range(0, z.shape[2], edge)]

        def one(s):
            return z[s[0]:s[0] + edge, s[1]:s[1] + edge, s[2]:s[2] + edge]

        out["chunks_s"] = {}
        for c in sorted({1, args.threads}):
            with ThreadPoolExecutor(c) as pool:
                out["chunks_s"][str(c)] = best(args.runs, args.cold, lambda: all(a is not None for a in pool.map(one, starts)))
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
