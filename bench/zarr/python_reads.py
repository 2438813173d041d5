"""bench/zarr/python_reads.py: reading a whole array from Python against the
disk's or page cache's limit (issue 35's `a[...] >= 0.8 of the limit`).

    meson devenv -C build python3 bench/zarr/python_reads.py [--size 1024] [--runs 5] [--dir DIR]

The zarrs benchmark suite's array (github zarrs/zarr_benchmarks: uint16,
element (z, y, x) = (x + y*y/32 + z*z*z) % 65536) in its three Zarr v3
layouts: raw in 256^3 chunks, zstd in 256^3 chunks, 256^3 shards of 64^3
zstd inner chunks. Written once into --dir by stowage (reused when there:
the same arrays as zarrs_suite.cpp writes, with the same default --dir).
Per layout, best of --runs after one untimed read:
  limit      os.preadv of every chunk or shard file into a reused
             page-aligned buffer, on stowage's threads (a thread pool)
  read(out=) into an array allocated once
  a[...]     a new array per call (pooled memory: python/src/buffer_pool.hpp)
warm (page cache) and cold (caches dropped before each timed run; only as
root, else said and skipped).
"""

import argparse
import mmap
import os
import pathlib
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import stowage
from page_cache import best, can_drop

LAYOUTS = {
    "raw": {"chunks": (256,) * 3, "compression": {"type": "raw"}},
    "zstd": {"chunks": (256,) * 3, "compression": {"type": "zstd", "level": 3}},
    "sharded": {"chunks": (64,) * 3, "shards": (256,) * 3, "compression": {"type": "zstd", "level": 3}},
}


def values(n, z0, z1):
    z = np.arange(z0, z1, dtype=np.uint64)[:, None, None]
    y = np.arange(n, dtype=np.uint64)[None, :, None]
    x = np.arange(n, dtype=np.uint64)[None, None, :]
    return ((x + y * y // 32 + z * z * z) % 65536).astype(np.uint16)


def make(path, n, layout):
    if (path / "vol" / "zarr.json").exists():
        return
    with stowage.open(path, "w", format="zarr", options={"zarr_version": 3}) as store:
        a = store.create_array("vol", shape=(n,) * 3, dtype="uint16", **LAYOUTS[layout])
        for z in range(0, n, 256):
            a[z:z + 256] = values(n, z, min(n, z + 256))


def limit_reader(files, threads):
    """preadv of each file into a reused page-aligned buffer of the pool thread reading it."""
    size = max(os.path.getsize(f) for f in files)
    local = threading.local()  # each pool thread's buffer, made at its first file

    def one(f):
        buf = getattr(local, "buf", None)
        if buf is None:
            buf = local.buf = mmap.mmap(-1, size)
        fd = os.open(f, os.O_RDONLY)
        try:
            os.preadv(fd, [buf], 0)
        finally:
            os.close(fd)

    pool = ThreadPoolExecutor(threads)
    return lambda: list(pool.map(one, files))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", default="/tmp/stowage-bench-zarrs")
    ap.add_argument("--no-cold", action="store_true")
    args = ap.parse_args()
    n, threads = args.size, stowage.threads()
    cold_ok = not args.no_cold and can_drop()
    gb = n ** 3 * 2 / 1e9
    print(f"{n}^3 uint16 ({gb:.2f} GB), {threads} threads, best of {args.runs}; GB/s of decoded data")
    if not args.no_cold and not cold_ok:
        print("cold: skipped (dropping the page cache needs root)")
    print(f"{'layout':8} {'cache':5} {'limit':>7} {'read(out=)':>11} {'a[...]':>7} {'out=/lim':>9} {'[...]/lim':>10}")
    for layout in LAYOUTS:
        path = pathlib.Path(args.dir) / f"v3-{n}-{layout}.zarr"  # as zarrs_suite names them
        make(path, n, layout)
        a = stowage.open(path)["vol"]
        check = a[n - 1:n, :8, :8]
        assert (check == values(n, n - 1, n)[:, :8, :8]).all(), f"{path}: wrong values"
        files = sorted(str(p) for p in (path / "vol" / "c").rglob("*") if p.is_file())
        out = np.empty(a.shape, a.dtype)
        for cache in ("warm", "cold") if cold_ok else ("warm",):
            cold = cache == "cold"
            timed = {}
            for name, fn in (("limit", limit_reader(files, threads)), ("out", lambda: a.read(out=out)),
                             ("new", lambda: a[...])):
                fn()  # untimed: plugin state, pools and (warm) the page cache
                timed[name] = best(args.runs, cold, fn)
            t_lim, t_out, t_new = timed["limit"], timed["out"], timed["new"]
            print(f"{layout:8} {cache:5} {gb / t_lim:7.2f} {gb / t_out:11.2f} {gb / t_new:7.2f} "
                  f"{t_lim / t_out:9.2f} {t_lim / t_new:10.2f}")
    print("limit: the chunk/shard files' bytes (compressed for zstd) read into reused buffers; for the\n"
          "compressed layouts it is the I/O alone, and decoding bounds the reads (bench/codecs).")


if __name__ == "__main__":
    sys.exit(main())
