#!/usr/bin/python3
"""zarr-python 2 (Debian's) reading the Zarr v2 arrays zarr_bench wrote.

For each PATH given, reads the array whole and 1000 random 64^3 chunks
(the same picks as zarr_bench: a list of chunk coordinates on stdin, one
JSON list per PATH), best of --runs runs, and checks the whole read against
the volume zarr_bench wrote (bench/support/n5_volume.hpp's values).
numcodecs runs c-blosc on its own threads from the main thread (a user's
default); read_1thread_s is the same read with numcodecs.blosc.use_threads =
False, as in bench/n5/peer_zarr_n5.py.
Prints one JSON object per path:
  {"path": ..., "read_s": ..., "read_1thread_s": ..., "random_chunk_us": ...}
Usage: peer_zarr_v2.py [--runs N] PATH... < picks.json
"""
import json
import sys
import time

import numcodecs.blosc
import numpy as np
import zarr


def volume(shape):
    """bench/support/n5_volume.hpp's values: a smooth field plus noise."""
    z, y, x = np.indices(shape, dtype=np.uint32)
    noise = ((z * 73856093) ^ (y * 19349663) ^ (x * 83492791)) & 0x3F
    return ((z * 3 + y * 2 + x + noise) & 0xFFFF).astype(np.uint16)


def best_time(runs, fn):
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main():
    args = sys.argv[1:]
    runs = 3
    if args[:1] == ["--runs"]:
        runs, args = int(args[1]), args[2:]
    picks = json.load(sys.stdin)
    expected = None
    for path in args:
        a = zarr.open(path, mode="r")
        if expected is None:
            expected = volume(a.shape)
        if not np.array_equal(a[...], expected):
            sys.exit(f"{path}: zarr-python read differs from the volume written")
        read_s = best_time(runs, lambda: a[...])
        numcodecs.blosc.use_threads = False
        read_1thread_s = best_time(runs, lambda: a[...])
        c = a.chunks

        def random_chunks():
            for z, y, x in picks:
                a[z * c[0]:(z + 1) * c[0], y * c[1]:(y + 1) * c[1], x * c[2]:(x + 1) * c[2]]

        random_us = best_time(runs, random_chunks) / len(picks) * 1e6
        numcodecs.blosc.use_threads = None
        print(json.dumps({"path": path, "read_s": read_s, "read_1thread_s": read_1thread_s,
                          "random_chunk_us": random_us}), flush=True)


if __name__ == "__main__":
    main()
