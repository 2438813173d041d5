#!/usr/bin/python3
"""Reading numcodecs-filtered Zarr v2 arrays: stowage (its delta, shuffle and
astype codec plugins through the Zarr plugin) beside zarr-python 2.13 (the
peer: numcodecs' filters), and the unfiltered array as the limit, in one run.

A 64 MiB uint16 volume (256x256x512, 64^3 chunks, no compressor, so the
figure is the filters' cost) is written by zarr-python with no filter, with
delta, with shuffle, and as float32 with astype to uint16. Each is read
whole into memory, best of --repeat, on one thread: the stowage package's
a[...] (stowage.set_threads(1)) and zarr-python's z[:].

    meson devenv -C build /usr/bin/python3 bench/filters/run.py [--plugin-path DIR]

--plugin-path DIR puts DIR first (an older build's Zarr plugin, to compare
before and after). Prints a table; bench/filters/RESULTS.md keeps figures.
"""
import argparse
import os
import shutil
import tempfile
import time

import numcodecs
import numpy as np
import stowage
import zarr

MIB = 1 << 20


def volume():
    z, y, x = np.meshgrid(np.arange(256), np.arange(256), np.arange(512), indexing="ij")
    return ((x * 3 + y * 5 + z * 7) % 4096 + (x * y) % 17).astype("<u2")


def write(root):
    data = volume()
    arrays = {
        "none": (data, None),
        "delta": (data, [numcodecs.Delta(dtype="<u2")]),
        "shuffle": (data, [numcodecs.Shuffle(elementsize=2)]),
        "astype": (data.astype("<f4"), [numcodecs.AsType(encode_dtype="<u2", decode_dtype="<f4")]),
    }
    group = zarr.open_group(os.path.join(root, "v.zarr"), mode="w")
    for name, (values, filters) in arrays.items():
        group.create_dataset(name, data=values, chunks=(64, 64, 64), compressor=None,
                             filters=filters)
    return {name: values.nbytes for name, (values, _) in arrays.items()}


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin-path", default=None)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="stowage-bench-filters-")
    try:
        sizes = write(tmp)
        store = os.path.join(tmp, "v.zarr")
        stowage.set_threads(1)
        path = [args.plugin_path] if args.plugin_path else None
        ours = stowage.open(store, plugin_path=path)
        print(f"zarr {zarr.__version__}, numcodecs {numcodecs.__version__}; MB/s of decoded data "
              f"read whole into memory, one thread, best of {args.repeat}")
        print(f"{'array':8} {'MiB':>5} {'stowage':>9} {'zarr-python':>12}")
        for name, nbytes in sizes.items():
            a = ours[name]
            z = zarr.open_array(os.path.join(store, name), mode="r")
            ours_s = best(lambda: a[...], args.repeat)
            theirs_s = best(lambda: z[:], args.repeat)
            assert np.array_equal(a[...], z[:]), name
            print(f"{name:8} {nbytes // MIB:5d} {nbytes / ours_s / 1e6:9.0f} "
                  f"{nbytes / theirs_s / 1e6:12.0f}")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
