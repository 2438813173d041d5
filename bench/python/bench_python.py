"""bench/python: the stowage Python package against the C++ API and Python peers.

    ninja -C build bench-python            (or: meson devenv -C build python3 bench/python/bench_python.py --cpp ...)

Rows (the targets of issue 18 in the last column):
  1. a[...] of a 128 MiB uint16 N5 volume (256x512x512, 64^3 chunks), raw and
     blosc (lz4, shuffle, clevel 5): against the same read through the C++ API
     (cpp_reader, same threads) and zarr-python's N5Store;
  2. to_scipy() of a 30,000 x 10,000 BPCells count matrix, 5% dense (15 M
     non-zeros, uint32), against C++ Sparse::read_into with reused buffers;
  3. iterating a datadings set of 3 KiB samples ({"key", "image": 32x32x3
     uint8, "label"}) with decoding, against datadings' reader as
     bench/datadings/peer_python_reader.py does it (chunks of 16 samples,
     msgpack + msgpack_numpy).

Every figure is the best of --runs wall-clock runs after one untimed warm-up
run, on both sides alike (cpp_reader too), warm page cache, all threads
(stowage's default; zarr-python with its defaults). to_scipy() also shows
its first call in a new process against the C++ program's first read (fresh
memory on both sides: the kernel zero-fills the new pages; later calls reuse
pooled memory, as read_into reuses its vectors). The data is made once in --dir (default
/tmp/stowage-bench-python) and reused. --only n5,sparse,records picks rows.
"""

import argparse
import os
import pathlib
import struct
import subprocess
import sys
import time

import msgpack
import msgpack_numpy
import numpy as np
import scipy.sparse
import zarr
import zarr.n5

import stowage

VOLUME_SHAPE = (256, 512, 512)
CODECS = {"raw": {"type": "raw"}, "blosc": {"type": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}}


def best_of(runs, fn):
    """The best of `runs` timed calls after one untimed warm-up call (the
    rule cpp_reader follows too: page cache, plugin maps and allocator
    pools warm on both sides)."""
    fn()
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def make_volume(path, codec):
    if (path / "attributes.json").exists():
        return
    rng = np.random.default_rng(0)
    # Smooth structure plus noise: compressible as microscopy is, not constant.
    z, y, x = np.ogrid[: VOLUME_SHAPE[0], : VOLUME_SHAPE[1], : VOLUME_SHAPE[2]]
    with stowage.open(path, "w", "n5") as store:
        a = store.create_array("vol", VOLUME_SHAPE, "uint16", chunks=(64, 64, 64), compression=CODECS[codec])
        for z0 in range(0, VOLUME_SHAPE[0], 64):
            slab = ((np.sin(z[z0 : z0 + 64] / 9.0) + np.cos(y / 13.0) + np.sin(x / 7.0) + 3) * 600).astype(np.uint16)
            slab += rng.integers(0, 64, slab.shape, dtype=np.uint16)
            a[z0 : z0 + 64] = slab


def make_matrix(path):
    if path.exists():
        return
    rows, cols, density = 30000, 10000, 0.05
    rng = np.random.default_rng(1)
    m = scipy.sparse.random(rows, cols, density=density, format="csc", dtype=np.float32, random_state=2)
    m = scipy.sparse.csc_matrix((rng.integers(1, 30, m.nnz).astype(np.uint32), m.indices, m.indptr), shape=m.shape)
    with stowage.open(path, "w", "bpcells") as store:
        store.write_sparse("", m)


def make_records(path, n):
    if path.exists():
        return
    rng = np.random.default_rng(3)
    samples = ({"key": f"s{i:07}", "image": rng.integers(0, 256, (32, 32, 3), dtype=np.uint8), "label": int(i % 1000)}
               for i in range(n))
    with stowage.open(path, "w", "datadings") as store:
        store.write_records("", samples)


def datadings_reader_pass(path):
    """What datadings' MsgpackReader does to iterate (as peer_python_reader.py)."""
    offsets = open(str(path) + ".offsets", "rb").read()
    n = len(offsets) // 8 - 1
    off = struct.unpack(">%dQ" % (n + 1), offsets)
    count = 0
    with open(path, "rb") as f:
        for first in range(0, n, 16):
            last = min(n, first + 16)
            f.seek(off[first])
            chunk = f.read(off[last] - off[first])
            for i in range(first, last):
                s = chunk[off[i] - off[first] : off[i + 1] - off[first]]
                msgpack.unpackb(s, raw=False, strict_map_key=False, object_hook=msgpack_numpy.decode)
                count += 1
    return count


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cpp", required=True, help="the cpp_reader program")
    p.add_argument("--dir", default="/tmp/stowage-bench-python")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--samples", type=int, default=50000)
    p.add_argument("--only", default="n5,sparse,records", help="rows to run: n5, sparse, records")
    args = p.parse_args()
    d = pathlib.Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    print(f"bench/python: best of {args.runs} wall-clock runs, warm cache, {stowage.threads()} threads, "
          f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    rows = []

    def cpp(*argv):
        out = subprocess.run([args.cpp, *argv, str(args.runs)], check=True, capture_output=True, text=True).stdout
        return [float(x) for x in out.split()]

    only = set(args.only.split(","))
    for codec in CODECS if "n5" in only else ():
        path = d / f"volume-{codec}.n5"
        make_volume(path, codec)
        a = stowage.open(path)["vol"]
        a[...]  # warm the page cache
        ours = best_of(args.runs, lambda: a[...])
        out = np.empty(a.shape, a.dtype)
        ours_into = best_of(args.runs, lambda: a.read(out=out))
        cpp_fresh, cpp_reused = cpp("array", str(path), "vol")
        z = zarr.open(zarr.n5.N5Store(str(path)), mode="r")["vol"]
        peer = best_of(args.runs, lambda: z[...])
        assert np.array_equal(z[:64, :64, :64], a[:64, :64, :64])
        mb = a.nbytes / 2**20
        rows.append((f"N5 {codec}: a[...] (a new array)", ours, mb / ours, "MiB/s",
                     f"C++ into a new buffer {mb / cpp_fresh:.0f} MiB/s: x{cpp_fresh / ours:.2f} (>= 0.95)",
                     f"zarr-python {mb / peer:.0f} MiB/s: x{peer / ours:.1f} (>= 5)"))
        rows.append((f"N5 {codec}: a.read(out=) (a reused array)", ours_into, mb / ours_into, "MiB/s",
                     f"C++ into a reused buffer {mb / cpp_reused:.0f} MiB/s: x{cpp_reused / ours_into:.2f} (>= 0.95)",
                     ""))

    if "sparse" in only:
        path = d / "counts.bpcells"
        make_matrix(path)
        first = first_to_scipy(path)
        m = stowage.open(path)[""]
        ours = best_of(args.runs, lambda: m.to_scipy())
        cpp_fresh, cpp_reused, cpp_first = cpp("sparse", str(path))
        rate = m.nnz / 1e6
        rows.append((f"BPCells to_scipy() {m.shape[0]}x{m.shape[1]}, {rate:.0f} M nnz", ours, rate / ours, "M nnz/s",
                     f"C++ Sparse::read {rate / cpp_fresh:.0f} M nnz/s: x{cpp_fresh / ours:.2f}",
                     f"read_into (reused buffers) {rate / cpp_reused:.0f} M nnz/s: x{cpp_reused / ours:.2f} (>= 0.8)"))
        rows.append(("  the first call in a new process", first, rate / first, "M nnz/s",
                     f"C++ Sparse::read's first call {rate / cpp_first:.0f} M nnz/s: x{cpp_first / first:.2f}", ""))
    if "records" in only:
        records_row(d, args, rows)

    print(f"\n{'workload':46} {'seconds':>8} {'rate':>10} {'':10} against (x: ours as a multiple; target)")
    for what, seconds, rate, unit, vs1, vs2 in rows:
        print(f"{what:46} {seconds:8.3f} {rate:10.0f} {unit:10} {vs1}" + (f"; {vs2}" if vs2 else ""))
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


def first_to_scipy(path):
    """Seconds of to_scipy()'s first call in a new Python process (page cache warm)."""
    code = ("import sys, time, stowage; m = stowage.open(sys.argv[1])['']; t = time.perf_counter(); m.to_scipy(); "
            "print(time.perf_counter() - t)")
    return float(subprocess.run([sys.executable, "-c", code, str(path)], check=True, capture_output=True,
                                text=True).stdout)


def records_row(d, args, rows):
    path = d / "samples.msgpack"
    make_records(path, args.samples)
    r = stowage.open(path)[""]
    sample_bytes = len(r.raw(0))
    count = len(r)
    ours = best_of(args.runs, lambda: sum(1 for _ in r))
    peer = best_of(args.runs, lambda: datadings_reader_pass(path))
    rows.append((f"datadings iteration + decode, {sample_bytes} B samples", ours, count / ours, "samples/s",
                 f"datadings' reader {count / peer:.0f}/s: x{peer / ours:.2f} (>= 2)", ""))


if __name__ == "__main__":
    main()
