"""Several processes writing one Zarr v3 shard (issue 30): a 256^3 uint16
shard of 64^3 inner chunks (zstd 3), written by 1 process whole, and by 2
and 4 processes each writing its slab of 64-plane layers at the same time
(each call merges with the stored shard under the shard's lock and
publishes before it returns). Prints the wall time from the common start to
the last writer's close, best of --runs, and checks every value after each
run (lost values would be counted, not hidden).

Usage (the build tree's package and plugins):
  meson devenv -C build /usr/bin/python3 bench/zarr/shard_writers.py [--runs N] [--dir DIR]
"""

import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np

import stowage

SHAPE, CHUNKS = (256, 256, 256), (64, 64, 64)

WRITER = textwrap.dedent("""
    import sys, time
    import numpy as np
    import stowage
    path, start, z0, z1, step = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    store = stowage.open(path, "r+")
    a = store["a"]
    vol = np.arange(256 * 256 * 256, dtype=np.uint64).astype(np.uint16).reshape(256, 256, 256)
    time.sleep(max(0.0, start - time.time()))
    for z in range(z0, z1, step):
        a[z:z + step] = vol[z:z + step]
    store.close()  # timed too: a writer that publishes at close is not done before
    print(time.time())
""")


def one_run(path, writers, step):
    with stowage.open(path, "w") as store:
        store.create_array("a", SHAPE, "uint16", chunks=CHUNKS, shards=SHAPE, compression="zstd:level=3")
    per = SHAPE[0] // writers
    start = time.time() + 2.0
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(start), str(k * per), str((k + 1) * per), str(step)],
                              stdout=subprocess.PIPE, text=True) for k in range(writers)]
    ends = [float(p.communicate()[0]) for p in procs]
    want = np.arange(256 * 256 * 256, dtype=np.uint64).astype(np.uint16).reshape(SHAPE)
    lost = int((stowage.open(path)["a"][...] != want).sum())
    return max(ends) - start, lost


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    root = pathlib.Path(args.dir or tempfile.mkdtemp(prefix="stowage-shard-writers-"))
    root.mkdir(parents=True, exist_ok=True)
    print("One 256^3 uint16 shard of 64^3 zstd inner chunks (32 MiB); N processes each write 256/N planes\n"
          "in calls of `planes` planes, released together; wall time to the last close, best of %d; values checked." % args.runs)
    print("%-9s %-6s %9s %8s %s" % ("writers", "planes", "seconds", "MB/s", "values lost (per run)"))
    for writers, step in ((1, 256), (1, 64), (2, 64), (4, 64)):
        best, lost = 1e30, []
        for r in range(args.runs):
            path = root / f"w{writers}-{step}-{r}.zarr"
            t, n = one_run(path, writers, step)
            best, lost = min(best, t), lost + [n]
            shutil.rmtree(path)
        print("%-9d %-6d %9.3f %8.0f %s" % (writers, step, best, 256 ** 3 * 2 / 1e6 / best, json.dumps(lost)))
    if not args.dir:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
