"""Several writers on one array lose nothing: processes and threads writing
disjoint parts of one Zarr v3 shard, of one N5 / Zarr chunk (regions that
cover chunks in part, as dask blocks that do not match the array's chunks
do), and a write that returns is published: another process reads it before
the writer closes its store."""

import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import stowage
from conftest import needs

# One writer process: opens the store "r+", waits for the common start time
# (so the writers overlap), writes its blocks, closes.
WRITER = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import stowage
    path, fmt, start, blocks = sys.argv[1], sys.argv[2], float(sys.argv[3]), json.loads(sys.argv[4])
    store = stowage.open(path, "r+", fmt or None)
    for node, lo, hi, value, at in blocks:
        a = store[node]
        time.sleep(max(0.0, start + at - time.time()))
        a[tuple(slice(l, h) for l, h in zip(lo, hi))] = np.full([h - l for l, h in zip(lo, hi)], value, a.dtype)
    store.close()
""")

# (name, format, open options, create_array keyword arguments)
LAYOUTS = {
    "n5": ("n5", {}, {}),
    "zarr2": ("zarr", {"zarr_version": 2}, {}),
    "zarr3": ("zarr", {}, {}),
    "zarr3-sharded": ("zarr", {}, {"shards": None}),  # shards of 2 x 2 (x 2) chunks
}


def make(tmp_path, layout, name, shape, chunks, compression="zstd"):
    fmt, options, extra = LAYOUTS[layout]
    path = tmp_path / f"{name}.{fmt}"
    with stowage.open(path, "w", fmt, options=options) as store:
        kw = {"shards": [2 * c for c in chunks]} if "shards" in extra else {}
        store.create_array("a", shape, "uint16", chunks=chunks, compression=compression, **kw)
    return path, fmt


def run_writers(path, fmt, per_process, node="a"):
    """Starts one process per list of blocks [(lo, hi, value)] or
    [(node, lo, hi, value, seconds after the start)], together."""
    import json

    per_process = [[b if len(b) == 5 else (node, *b, 0.0) for b in blocks] for blocks in per_process]
    start = time.time() + 1.5  # after every process has imported stowage and opened the store
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), fmt, str(start), json.dumps(blocks)],
                              stderr=subprocess.PIPE, text=True)
             for blocks in per_process]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err


def tiles(shape, block):
    """Every block of `block`'s shape tiling `shape` (edge blocks cut), numbered from 1."""
    grid = [range(0, n, b) for n, b in zip(shape, block)]
    out = []
    for i, lo in enumerate(np.stack(np.meshgrid(*grid, indexing="ij"), -1).reshape(-1, len(shape)).tolist()):
        hi = [min(l + b, n) for l, b, n in zip(lo, block, shape)]
        out.append((lo, hi, i + 1))
    return out


def expected_of(shape, blocks):
    want = np.zeros(shape, np.uint16)
    for lo, hi, value in blocks:
        want[tuple(slice(l, h) for l, h in zip(lo, hi))] = value
    return want


@needs("zstd")
def test_four_processes_each_write_an_inner_chunk_of_one_shard(tmp_path):
    # 24 rounds, each on an array of its own, the four writers released
    # together every 0.1 s: each writes one inner chunk of the one shard.
    rounds = 24
    path, fmt = make(tmp_path, "zarr3-sharded", "s", (32, 32), (16, 16))
    with stowage.open(path, "r+", fmt) as store:
        for r in range(1, rounds):
            store.create_array(f"a{r}", (32, 32), "uint16", chunks=(16, 16), compression="zstd", shards=(32, 32))
    nodes = ["a"] + [f"a{r}" for r in range(1, rounds)]
    blocks = tiles((32, 32), (16, 16))  # the four inner chunks of the one shard
    run_writers(path, fmt, [[(n, lo, hi, v, 0.1 * r) for r, n in enumerate(nodes)] for lo, hi, v in blocks])
    store = stowage.open(path)
    lost = [n for n in nodes if not np.array_equal(store[n][...], expected_of((32, 32), blocks))]
    assert lost == []


@needs("zstd")
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_four_processes_write_blocks_that_cut_across_chunks(tmp_path, layout):
    # dask blocks (7, 9, 11) over chunks (10, 10, 10): most chunks are
    # written in part by two to eight processes.
    shape = (20, 27, 33)
    path, fmt = make(tmp_path, layout, "m", shape, (10, 10, 10))
    blocks = tiles(shape, (7, 9, 11))
    run_writers(path, fmt, [blocks[k::4] for k in range(4)])
    assert np.array_equal(stowage.open(path)["a"][...], expected_of(shape, blocks))


@needs("zstd")
@pytest.mark.parametrize("layout", ["zarr3-sharded", "n5"])
def test_two_threads_with_two_handles_on_one_shard(tmp_path, layout):
    for round_ in range(10):
        path, fmt = make(tmp_path, layout, f"t{round_}", (32, 32), (16, 16))
        blocks = tiles((32, 32), (16, 12))  # cut across the inner chunks

        def write(mine):
            store = stowage.open(path, "r+", fmt)
            for lo, hi, value in mine:
                store["a"][lo[0]:hi[0], lo[1]:hi[1]] = value
            store.close()

        threads = [threading.Thread(target=write, args=(blocks[k::2],)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert np.array_equal(stowage.open(path)["a"][...], expected_of((32, 32), blocks)), f"round {round_}"


READER = textwrap.dedent("""
    import sys
    import numpy as np
    import stowage
    print(int(stowage.open(sys.argv[1])["a"][...].astype(np.int64).sum()))
""")


@needs("zstd")
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_write_that_returns_is_published_before_close(tmp_path, layout):
    path, fmt = make(tmp_path, layout, "p", (32, 32), (16, 16))
    store = stowage.open(path, "r+", fmt)
    store["a"][16:32, 0:16] = 5  # one whole inner chunk of the shard: the rest of the shard is left
    seen = subprocess.run([sys.executable, "-c", READER, str(path)], capture_output=True, text=True, check=True)
    assert int(seen.stdout) == 5 * 16 * 16
    store["a"][3:20, 5:9] = 7  # in part of two inner chunks of the one shard
    seen = subprocess.run([sys.executable, "-c", READER, str(path)], capture_output=True, text=True, check=True)
    assert int(seen.stdout) == 5 * 16 * 16 - 5 * 4 * 4 + 7 * 17 * 4
    assert not [p.name for p in path.rglob("*") if ".stowage-tmp." in p.name]
    store.close()


@needs("zstd")
def test_a_handle_that_read_a_shard_sees_another_writers_rewrite(tmp_path):
    path, fmt = make(tmp_path, "zarr3-sharded", "r", (32, 32), (16, 16))
    reader = stowage.open(path)["a"]
    assert int(reader[...].sum()) == 0  # no shard yet: the reader's handle knows that
    rng = np.random.default_rng(3)
    for round_ in range(3):  # each a shard of another size
        want = rng.integers(0, 1000 * (round_ + 1), (32, 32), dtype=np.uint16)
        with stowage.open(path, "r+") as writer:
            writer["a"][...] = want
        assert np.array_equal(reader[...], want), f"round {round_}"
        assert np.array_equal(reader[5:20, 7:9], want[5:20, 7:9])


@needs("zstd")
@pytest.mark.parametrize("layout", ["n5", "zarr3-sharded"])
def test_a_writer_killed_while_it_held_a_chunk_lock_blocks_no_one(tmp_path, layout):
    # A writer SIGKILLed inside its read-modify-write, holding the chunk's
    # (or shard's) lock: the kernel frees the flock, its lock file stays.
    path, fmt = make(tmp_path, layout, "k", (32, 32), (16, 16))
    with stowage.open(path, "r+", fmt) as store:
        store["a"][0:16, 0:16] = 1  # makes the chunk's (shard's) directory
    key = next(p for p in path.rglob("*") if p.is_file() and p.name == "0" and p.parent.name == "0")
    lock = key.parent / f".{key.name}.stowage-lock"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import fcntl, os, sys, time
        fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        print("held", flush=True)
        time.sleep(60)
    """), str(lock)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    holder.kill()  # SIGKILL while holding it
    holder.wait()
    assert lock.exists()
    done = subprocess.run([sys.executable, "-c", WRITER, str(path), fmt, str(time.time()),
                           '[["a", [3, 3], [9, 9], 7, 0.0]]'], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    want = np.zeros((32, 32), np.uint16)
    want[0:16, 0:16] = 1
    want[3:9, 3:9] = 7
    assert np.array_equal(stowage.open(path)["a"][...], want)
    assert not lock.exists()  # its next holder removed it
