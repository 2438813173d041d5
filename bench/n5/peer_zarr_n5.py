#!/usr/bin/python3
"""The N5 benchmark workload through Debian's zarr-python N5FSStore.

Writes and reads a 256x512x512 uint16 volume in 64^3 chunks for each codec,
plus 1000 random single-chunk reads. zarr-python 2 reads and writes chunks
on one thread, but numcodecs' Blosc runs c-blosc on its own threads (two
here) when called from the main thread: that default is what a user gets,
so read_s is measured with it, and for blosc also read_1thread_s with
numcodecs.blosc.use_threads = False (faster in 3 runs of 4 here: on 512 KiB
chunks blosc's threads mostly cost more than they save). Every figure (write,
read, random chunks) is the best of --runs runs (default 3, n5_bench passes
its own), each write into a directory that never existed, as in n5_bench.
Prints one JSON object per codec on stdout:
  {"codec": ..., "write_s": ..., "read_s": ..., ["read_1thread_s": ...,]
   "random_chunk_us": ..., "bytes": ...}
Usage: peer_zarr_n5.py [--runs N] [--cpu] WORK_DIR [codec ...]   (codecs: raw gzip zstd blosc bzip2 xz)
zarr's N5 lz4 uses numcodecs framing, which N5 readers cannot read, so lz4
is not part of the peer run.
"""
import json
import os
import shutil
import sys
import time

import numcodecs
import numcodecs.blosc
import numpy as np
import zarr
from zarr.n5 import N5FSStore

SHAPE = (256, 512, 512)
CHUNKS = (64, 64, 64)
COMPRESSORS = {
    "raw": None,
    "gzip": numcodecs.GZip(6),
    "zstd": numcodecs.Zstd(3),
    "blosc": numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE),
    "bzip2": numcodecs.BZ2(9),
    "xz": numcodecs.LZMA(preset=6),
}


def volume():
    """The same values as bench/n5/n5_bench.cpp: a smooth field plus noise."""
    z, y, x = np.indices(SHAPE, dtype=np.uint32)
    noise = ((z * 73856093) ^ (y * 19349663) ^ (x * 83492791)) & 0x3F
    return ((z * 3 + y * 2 + x + noise) & 0xFFFF).astype(np.uint16)


RUNS = 3
clock = time.perf_counter  # --cpu: time.process_time (this process, all threads)


def best_time(fn):
    """The best of RUNS timed calls of fn."""
    best = float("inf")
    for _ in range(RUNS):
        t = clock()
        fn()
        best = min(best, clock() - t)
    return best


def best_read_time(a):
    """The best of RUNS whole reads (the page cache is warm)."""
    return best_time(lambda: a[...])


def run(work, name, data):
    paths = [os.path.join(work, "zarr-%s-%d.n5" % (name, i)) for i in range(RUNS)]
    for p in paths:
        shutil.rmtree(p, ignore_errors=True)
    write_s = float("inf")
    for p in paths:  # each write into a directory that never existed
        a = zarr.create(shape=SHAPE, chunks=CHUNKS, dtype="u2", compressor=COMPRESSORS[name],
                        store=N5FSStore(p), path="vol", overwrite=True)
        t = clock()
        a[...] = data
        write_s = min(write_s, clock() - t)
    path = paths[-1]
    assert np.array_equal(a[...], data)
    read_s = best_read_time(a)
    read_1thread_s = None
    if name == "blosc":
        numcodecs.blosc.use_threads = False
        read_1thread_s = best_read_time(a)
        numcodecs.blosc.use_threads = None
    rng = np.random.default_rng(1)
    grid = [s // c for s, c in zip(SHAPE, CHUNKS)]
    picks = [[rng.integers(0, g) for g in grid] for _ in range(1000)]
    def random_reads():
        for p in picks:
            a[tuple(slice(i * c, (i + 1) * c) for i, c in zip(p, CHUNKS))]
    random_us = best_time(random_reads) / len(picks) * 1e6
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
    for p in paths:
        shutil.rmtree(p, ignore_errors=True)
    result = {"codec": name, "write_s": write_s, "read_s": read_s, "random_chunk_us": random_us,
              "bytes": size}
    if read_1thread_s is not None:
        result["read_1thread_s"] = read_1thread_s
    return result


def main():
    global RUNS, clock
    args = sys.argv[1:]
    if args[:1] == ["--runs"]:
        RUNS = max(1, int(args[1]))
        args = args[2:]
    if args[:1] == ["--cpu"]:
        clock = time.process_time
        args = args[1:]
    work = args[0]
    names = args[1:] or ["raw", "gzip", "zstd", "blosc"]
    data = volume()
    for name in names:
        print(json.dumps(run(work, name, data)), flush=True)


if __name__ == "__main__":
    main()
