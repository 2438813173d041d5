"""bench/python: writing a dask array, stowage.to_store against dask.array.to_zarr
(zarr-python 2.13) and against stowage-convert, in one run (issue 34's targets:
>= 3x to_zarr, >= 0.8 of stowage-convert).

    meson devenv -C build python3 bench/python/bench_dask_write.py --convert build/tools/convert/stowage-convert

The data: bench_python.py's 128 MiB uint16 volume (256x512x512, smooth
structure plus noise) and its mirror image along z, 256 MiB (512x512x512),
written once as an uncompressed N5 in --dir, read
into memory and made a persisted dask array of 64^3 C-contiguous blocks
(the destination's chunks, which to_zarr needs), the same x for every writer. Rows, all blosc (lz4, shuffle, clevel 5),
chunks 64^3, on dask's threaded scheduler (every core) unless --scheduler
distributed (a LocalCluster of 2 processes of 1 thread; the blocks then
travel from the client to the workers):
  1. N5: stowage.to_store into .n5; da.to_zarr into zarr.n5.N5Store;
     stowage-convert of the uncompressed N5 into an N5.
  2. Zarr v3 sharded (shards 128^3): stowage.to_store; da.to_zarr into a
     Zarr v2 array of the same chunks, unsharded (zarr-python 2.13 has no
     sharding_indexed); stowage-convert --shards.
Each figure is the best of --runs wall-clock runs after one untimed warm-up
run, the destination removed before each run (page cache warm for the source
of stowage-convert, which reads and decodes it; the dask array is in memory).
"""

import argparse
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import time

import dask
import dask.array
import numcodecs
import numpy as np
import zarr
import zarr.n5

import stowage

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from bench_python import VOLUME_SHAPE, make_volume  # noqa: E402 (the same volume)

SHAPE = (2 * VOLUME_SHAPE[0],) + VOLUME_SHAPE[1:]
CHUNKS = (64, 64, 64)
SHARDS = (128, 128, 128)
BLOSC = {"type": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}
BLOSC_CLI = json.dumps(BLOSC)


def source_volume(d):
    """bench_python.py's volume and its mirror image along z (256 MiB), kept
    in d/source-256.n5 (uncompressed: stowage-convert's source)."""
    make_volume(d / "half.n5", "raw")
    if not (d / "source-256.n5" / "vol" / "attributes.json").exists():
        half = stowage.open(d / "half.n5")["vol"][...]
        with stowage.open(d / "source-256.n5", "w") as store:
            a = store.create_array("vol", SHAPE, "uint16", chunks=CHUNKS, compression="raw")
            a.write(half)
            a.write(half[::-1], (half.shape[0], 0, 0))
    return stowage.open(d / "source-256.n5")["vol"][...]


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    return path


def cpu_seconds():
    """CPU time of this process (every thread) and of its ended children (stowage-convert)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def best_of(runs, make_destination, write):
    """(wall, CPU) seconds: the best of `runs` timed writes after one untimed
    warm-up, each into a fresh destination, and the least CPU time of them
    (steadier than wall time on a shared machine)."""
    best, cpu = float("inf"), float("inf")
    for i in range(runs + 1):
        destination = make_destination()
        t0, c0 = time.perf_counter(), cpu_seconds()
        write(destination)
        seconds, cpu_used = time.perf_counter() - t0, cpu_seconds() - c0
        if i:
            best, cpu = min(best, seconds), min(cpu, cpu_used)
    return best, cpu


def convert(tool, source, destination, *extra):
    subprocess.run([tool, "--quiet", "--compression", BLOSC_CLI, "--chunks", ",".join(map(str, CHUNKS)),
                    *extra, f"{source}::vol", f"{destination}::vol"], check=True)


def rows(x, d, tool, runs):
    """(row, to_store, da.to_zarr, stowage-convert) in seconds."""
    source = d / "source-256.n5"
    out = []
    ours = best_of(runs, lambda: fresh(d / "ours.n5"),
                   lambda p: stowage.to_store(x, p, "vol", compression=BLOSC, chunks=CHUNKS))
    blosc = numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE)
    theirs = best_of(runs, lambda: zarr.n5.N5Store(str(fresh(d / "theirs.n5"))),
                     lambda store: dask.array.to_zarr(x, store, component="vol", compressor=blosc))
    tool_s = best_of(runs, lambda: fresh(d / "tool.n5"), lambda p: convert(tool, source, p))
    out.append(("N5 blosc", ours, theirs, tool_s))
    ours = best_of(runs, lambda: fresh(d / "ours.zarr"),
                   lambda p: stowage.to_store(x, p, "vol", compression=BLOSC, chunks=CHUNKS, shards=SHARDS))
    theirs = best_of(runs, lambda: str(fresh(d / "theirs.zarr")),
                     lambda p: dask.array.to_zarr(x, p, component="vol", compressor=blosc))
    tool_s = best_of(runs, lambda: fresh(d / "tool.zarr"),
                     lambda p: convert(tool, source, p, "--shards", ",".join(map(str, SHARDS))))
    out.append(("Zarr v3 sharded blosc (zarr-python: v2 unsharded)", ours, theirs, tool_s))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--convert", required=True, help="the stowage-convert program")
    p.add_argument("--dir", default="/tmp/stowage-bench-dask-write")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--scheduler", default="threads", choices=["threads", "distributed"])
    args = p.parse_args()
    d = pathlib.Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    volume = source_volume(d)
    # Each block its own C-contiguous array, as a computed dask array's blocks are (from_array's
    # would be strided views of the volume, copied by both writers before encoding).
    x = dask.array.from_array(volume, chunks=CHUNKS).map_blocks(np.ascontiguousarray)
    mib = volume.nbytes / 2**20
    if args.scheduler == "distributed":
        import distributed

        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                                           silence_logs=40)
        client = distributed.Client(cluster)
        x = x.persist()  # the blocks in the workers, as a computed dask array would be
        distributed.wait(x)
    else:
        dask.config.set(scheduler="threads")
        x = x.persist()
    print(f"{mib:.0f} MiB uint16 {volume.shape}, chunks {CHUNKS}, {args.scheduler}, {os.cpu_count()} cores, "
          f"best of {args.runs}; load {os.getloadavg()[0]:.1f}")
    print("| row | to_store | da.to_zarr | stowage-convert | x to_zarr (>= 3) | of convert (>= 0.8) "
          "| CPU s: to_store / to_zarr / convert |")
    print("|---|---|---|---|---|---|---|")
    for name, (ours, ours_cpu), (theirs, theirs_cpu), (tool_s, tool_cpu) in rows(x, d, args.convert, args.runs):
        print(f"| {name} | {mib / ours:.0f} MiB/s | {mib / theirs:.0f} MiB/s | {mib / tool_s:.0f} MiB/s "
              f"| x{theirs / ours:.2f} | {tool_s / ours:.2f} | {ours_cpu:.2f} / {theirs_cpu:.2f} / {tool_cpu:.2f} |",
              flush=True)
    print(f"load after: {os.getloadavg()[0]:.1f}")
    if args.scheduler == "distributed":
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()
