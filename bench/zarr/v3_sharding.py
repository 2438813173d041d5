"""bench/zarr/v3_sharding.py: Zarr v3 unsharded against sharded, a first look (not the
issue's full table: no N5 or zarr-python rows).

    STOWAGE_PLUGIN_PATH=build/plugins STOWAGE_PLUGIN_PATH_ONLY=1 \
        PYTHONPATH=build/python /usr/bin/python3 bench/zarr/v3_sharding.py [DIR]

A 128 MiB uint16 volume (256x512x512, values multiples of 16 so zstd has
work) in 64^3 chunks, unsharded or in 256^3 shards of 64 inner chunks (4
shards), raw or zstd level 1: a whole write (through store close), a
whole read, and reads of one random 64^3 (inner) chunk, each from a freshly
opened store (so the shard index is read too: "cold handle") or from one
open array (the index cached: "warm"). Medians; Python's slicing and the
512 KiB numpy allocation are inside every figure. Run it on a quiet machine.
"""
import os
import random
import shutil
import sys
import time

import numpy as np
import stowage

root = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "/tmp", "v3_sharding_bench")
shutil.rmtree(root, ignore_errors=True)
os.makedirs(root)
rng = np.random.default_rng(1)
shape = (256, 512, 512)
vol = rng.integers(0, 4096, size=shape, dtype=np.uint16) // 16 * 16  # 128 MiB, compressible
mib = vol.nbytes / 2**20
for name, shards in [("unsharded", None), ("sharded", [256, 256, 256])]:
    for codec in [None, {"type": "zstd", "level": 1}]:
        path = f"{root}/{name}-{'zstd' if codec else 'raw'}.zarr"
        s = stowage.open(path, "w", "zarr", options={"zarr_version": 3})
        d = {"kind": "array", "dtype": "uint16", "shape": list(shape), "chunks": [64] * 3}
        if shards: d["shards"] = shards
        if codec: d["codec"] = codec
        s._core.create("v", d)
        t = time.perf_counter(); s["v"][...] = vol; s.close()
        tw = time.perf_counter() - t
        s = stowage.open(path)
        a = s["v"]
        t = time.perf_counter(); back = a[...]
        tr = time.perf_counter() - t
        assert np.array_equal(back, vol)
        # random inner chunks, each from a freshly opened store (the shard index is read too)
        times = []
        for _ in range(50):
            i, j, k = (random.randrange(n // 64) * 64 for n in shape)
            s2 = stowage.open(path); a2 = s2["v"]
            t = time.perf_counter(); x = a2[i:i+64, j:j+64, k:k+64]; times.append(time.perf_counter() - t)
            s2.close()
        warm = []
        for _ in range(200):
            i, j, k = (random.randrange(n // 64) * 64 for n in shape)
            t = time.perf_counter(); x = a[i:i+64, j:j+64, k:k+64]; warm.append(time.perf_counter() - t)
        print(f"{name:9s} {'zstd' if codec else 'raw ':4s} write {mib / tw:7.0f} MiB/s  read {mib / tr:7.0f} MiB/s  "
              f"random 64^3 chunk: cold handle median {np.median(times)*1e6:6.0f} us, warm median {np.median(warm)*1e6:6.0f} us")
