"""Timing with a warm or a dropped page cache, for bench/zarr's Python scripts."""
import os
import time


def can_drop():
    """Whether this process may drop the page cache (root)."""
    try:
        with open("/proc/sys/vm/drop_caches", "w"):
            return True
    except OSError:
        return False


def drop():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")


def best(runs, cold, fn):
    """The best wall time of `runs` calls of fn, each after a cache drop when cold."""
    t = float("inf")
    for _ in range(runs):
        if cold:
            drop()
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t
