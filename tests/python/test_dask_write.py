"""stowage.to_store writes a dask array as dask.array.to_zarr does: on the two
worker processes of conftest's `cluster`, on threads and on dask's process
pool; into N5 (blosc, gzip), Zarr v2, sharded Zarr v3, locally and into a
real S3 server (radosgw). x's blocks (70) never match the destination's
chunks (64) or shards (128): to_store rechunks so that one task writes each
chunk (shard), and the values read back (zarr-python for Zarr v2 and
zarr-python's own da.to_zarr alongside; stowage for N5 and Zarr v3, which
zarr-python 2.13 reads without sharding_indexed) are x's exactly."""

import ast
import json
import time

import dask
import dask.array
import numpy as np
import pytest
import zarr
from dask.delayed import Delayed

import stowage
from conftest import needs

SHAPE = (130, 150, 140)  # uint16: 5.2 MiB; a grid of 3 x 3 x 3 chunks of 64, 2 x 2 x 2 shards of 128
BLOSC = {"type": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}
# name: (path, to_store's keyword arguments, the unit one task writes)
LAYOUTS = {
    "n5-blosc": ("v.n5", {"compression": BLOSC, "chunks": (64, 64, 64)}, 64),
    "n5-gzip": ("v.n5", {"compression": "gzip", "chunks": (64, 64, 64)}, 64),
    "zarr2": ("v.zarr", {"compression": "zstd", "chunks": (64, 64, 64), "zarr_version": 2}, 64),
    "zarr3-sharded": ("v.zarr", {"compression": "zstd", "chunks": (64, 64, 64), "shards": (128, 128, 128)}, 128),
}
LAYOUT_PARAMS = [pytest.param(name, marks=needs("blosc", "zstd")) for name in LAYOUTS]


@pytest.fixture(scope="module")
def values():
    return np.random.default_rng(34).integers(0, 65536, SHAPE, dtype=np.uint16)


def blocks_of_70(values):
    x = dask.array.from_array(values, chunks=70)
    assert x.chunks[0] == (70, 60)
    return x


def units(unit):
    return int(np.prod([-(-n // unit) for n in SHAPE]))


def _name_and_block(key):
    key = ast.literal_eval(key) if key.startswith("(") else (key,)
    return key[0], key[1:]


def store_tasks(cluster, call):
    """Runs call(); the blocks its store tasks wrote (grid positions) and the
    workers they ran on: the tasks of store-map names the scheduler's task
    stream did not hold before (its time window can take in the end of the
    call before; the rechunk's last step is "rechunk-merge-store-map-...")."""
    seen = {_name_and_block(str(t["key"]))[0] for t in cluster.get_task_stream()}
    call()
    tasks = [(*_name_and_block(str(t["key"])), t["worker"]) for t in cluster.get_task_stream()]
    stores = [(block, worker) for name, block, worker in tasks if name.startswith("store-map-") and name not in seen]
    return [block for block, _ in stores], {worker for _, worker in stores}


def read_back(path, layout):
    """The values as a reader other than the writer sees them."""
    if layout == "zarr2":
        z = zarr.open(str(path), "r")["raw"]
        assert z.chunks == (64, 64, 64) and z.compressor.codec_id == "zstd"
        return z[...]
    a = stowage.open(path)["raw"]
    assert a.chunks == (64, 64, 64)
    if layout == "zarr3-sharded":
        meta = json.loads((path / "raw" / "zarr.json").read_text())
        assert meta["chunk_grid"]["configuration"]["chunk_shape"] == [128, 128, 128]
        assert meta["codecs"][0]["name"] == "sharding_indexed"
        assert len([p for p in (path / "raw" / "c").rglob("*") if p.is_file()]) == units(128)
    if layout.startswith("n5"):
        attrs = json.loads((path / "raw" / "attributes.json").read_text())
        assert attrs["blockSize"] == [64, 64, 64] and attrs["compression"]["type"] == layout[3:]
    return a[...]


@pytest.mark.parametrize("layout", LAYOUT_PARAMS)
def test_to_store_on_two_worker_processes(tmp_path, cluster, values, layout):
    name, kwargs, unit = LAYOUTS[layout]
    path = tmp_path / name
    blocks, workers = store_tasks(cluster, lambda: stowage.to_store(blocks_of_70(values), path, "raw", **kwargs))
    # one task per chunk (shard): none writes a unit another writes a part of
    assert len(blocks) == len(set(blocks)) == units(unit), blocks
    # in the worker processes; 27 tasks go to both, 8 shards may all go where their blocks are
    assert workers <= set(cluster.scheduler_info()["workers"]) and len(workers) >= (2 if unit == 64 else 1)
    assert np.array_equal(read_back(path, layout), values)


@pytest.mark.parametrize("layout", LAYOUT_PARAMS)
def test_to_store_on_threads(tmp_path, values, layout):
    name, kwargs, _ = LAYOUTS[layout]
    with dask.config.set(scheduler="threads"):
        written = stowage.to_store(blocks_of_70(values), tmp_path / name, "raw", **kwargs)
    assert written.store.mode == "r" and written.shape == SHAPE and written.dtype == np.uint16
    assert np.array_equal(read_back(tmp_path / name, layout), values)


@needs("zstd")
def test_to_store_on_the_process_pool(tmp_path, values):
    """dask's own process pool (pickled tasks, no distributed): the workers
    write into the dataset being built, published at the end."""
    with dask.config.set(scheduler="processes", num_workers=2):
        stowage.to_store(blocks_of_70(values)[:, :64], tmp_path / "p.zarr", "raw", compression="zstd",
                         chunks=(64, 64, 64), zarr_version=2)
    assert np.array_equal(zarr.open(str(tmp_path / "p.zarr"), "r")["raw"][...], values[:, :64])


@needs("zstd")
def test_same_array_as_da_to_zarr(tmp_path, cluster, values):
    """Defaults as to_zarr's: x's regular chunks become the array's chunks,
    its shape and dtype the array's; root array at node ""."""
    x = dask.array.from_array(values.astype(np.float32) / 7, chunks=(50, 75, 70))
    stowage.to_store(x, tmp_path / "ours.zarr", zarr_version=2)
    dask.array.to_zarr(x, str(tmp_path / "theirs.zarr"))
    ours, theirs = zarr.open(str(tmp_path / "ours.zarr"), "r"), zarr.open(str(tmp_path / "theirs.zarr"), "r")
    assert (ours.shape, ours.chunks, ours.dtype) == (theirs.shape, theirs.chunks, theirs.dtype)
    assert ours.chunks == (50, 75, 70)
    assert np.array_equal(ours[...], theirs[...]) and np.array_equal(ours[...], x.compute())


@needs("zstd")
def test_compute_false_gives_a_delayed_as_da_to_zarr(tmp_path, cluster, values):
    x = blocks_of_70(values)
    ours = stowage.to_store(x, tmp_path / "d.zarr", "raw", chunks=(64, 64, 64), zarr_version=2, compute=False)
    theirs = dask.array.to_zarr(x, str(tmp_path / "t.zarr"), component="raw", compute=False)
    assert isinstance(ours, Delayed) and isinstance(theirs, Delayed)
    # both arrays exist, holding the fill value, until the Delayed is computed
    for path in ("d.zarr", "t.zarr"):
        z = zarr.open(str(tmp_path / path), "r")["raw"]
        assert z.shape == SHAPE and not z[...].any()
    dask.compute(ours, theirs)
    assert np.array_equal(zarr.open(str(tmp_path / "d.zarr"), "r")["raw"][...], values)
    assert np.array_equal(zarr.open(str(tmp_path / "t.zarr"), "r")["raw"][...], values)


def _fail_in_the_first_block(block, block_info=None):
    if block_info[0]["chunk-location"] == (0, 0, 0):
        raise RuntimeError("block (0, 0, 0) failed")
    return block


@needs("zstd")
def test_a_failed_task_publishes_nothing_and_the_cluster_keeps_its_workers(tmp_path, cluster, values):
    path = tmp_path / "t.zarr"
    stowage.to_store(values, path, "raw", zarr_version=2)
    # 125 blocks, the first failing: most tasks are still to be sent when to_store discards
    bad = dask.array.from_array(values[::-1].copy(), chunks=32).map_blocks(_fail_in_the_first_block,
                                                                            dtype=np.uint16)
    with pytest.raises(RuntimeError, match=r"block \(0, 0, 0\) failed"):
        stowage.to_store(bad, path, "raw", zarr_version=2)
    assert np.array_equal(zarr.open(str(path), "r")["raw"][...], values)
    time.sleep(0.5)  # the tasks still running when one failed have ended: they wrote nowhere
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.zarr"]
    # and the workers kept their connection: tasks that reached them after the discard
    # failed as tasks, not while unpickling (which drops the worker in distributed 2022.12)
    assert len(cluster.scheduler_info()["workers"]) == 2


@needs("zstd")
def test_mode_r_plus_writes_into_the_existing_array(tmp_path, cluster, values):
    path = tmp_path / "e.n5"
    with stowage.open(path, "w") as store:
        store.create_array("raw", SHAPE, "uint16", chunks=(64, 64, 64), compression="zstd", attrs={"unit": "um"})
    stowage.to_store(blocks_of_70(values), path, "raw", mode="r+", attrs={"written": True})
    a = stowage.open(path)["raw"]
    assert np.array_equal(a[...], values) and dict(a.attrs) == {"unit": "um", "written": True}
    assert a.codec["type"] == "zstd"


def test_errors_name_the_path(tmp_path, values):
    path = tmp_path / "e.n5"
    stowage.to_store(values, path, "raw")
    with pytest.raises(stowage.InvalidArgumentError) as e:
        stowage.to_store(values[:10], path, "raw", mode="r+")
    assert f"{path}/raw" in str(e.value) and "(130, 150, 140)" in str(e.value) and "(10, 150, 140)" in str(e.value)
    with pytest.raises(stowage.InvalidArgumentError, match="chunks"):
        stowage.to_store(values, path, "raw", mode="r+", chunks=(10, 10, 10))
    with pytest.raises(stowage.InvalidArgumentError, match="same_kind"):
        stowage.to_store(values.astype(np.float32), path, "raw", mode="r+")
    with pytest.raises(stowage.NotFoundError) as e:
        stowage.to_store(values, tmp_path / "absent.n5", "raw", mode="r+")
    assert str(tmp_path / "absent.n5") in str(e.value)
    assert np.array_equal(stowage.open(path)["raw"][...], values)  # nothing refused was written


def test_a_format_publishing_at_close_is_written_from_threads(tmp_path, values):
    """.npy keeps one writer: compute=True writes it from this process's
    threads; a Delayed, which might run elsewhere, is refused."""
    with dask.config.set(scheduler="threads"):
        stowage.to_store(blocks_of_70(values), tmp_path / "v.npy")
    assert np.array_equal(np.load(tmp_path / "v.npy"), values)
    with pytest.raises(stowage.InvalidArgumentError, match="compute=False") as e:
        stowage.to_store(values, tmp_path / "w.npy", compute=False)
    assert str(tmp_path / "w.npy") in str(e.value)
    assert not (tmp_path / "w.npy").exists()


@needs("zstd")
def test_the_lower_level_way_da_store_into_an_array(tmp_path, cluster, values):
    """dask.array.store(x, array, lock=False) into an array made first, x on
    its chunks (the docstring of to_store and Array), as into zarr-python's."""
    x = blocks_of_70(values).rechunk(64)
    with stowage.open(tmp_path / "l.zarr", "w", options={"zarr_version": 2}) as store:
        ours = store.create_array("raw", SHAPE, "uint16", chunks=(64, 64, 64), compression="zstd")
    theirs = zarr.open(str(tmp_path / "z.zarr"), "w", shape=SHAPE, chunks=(64, 64, 64), dtype="uint16")
    dask.array.store([x, x], [ours, theirs], lock=False)
    back = zarr.open(str(tmp_path / "l.zarr"), "r")["raw"][...]
    assert np.array_equal(back, theirs[...]) and np.array_equal(back, values)


@needs("zstd")
def test_to_store_into_s3_from_the_workers(server, cluster, bucket, values):
    """Shards of a Zarr v3 array on radosgw: S3 cannot merge two writers'
    parts of one object, so workers writing parts of a shard are refused
    (test_dask_s3.py); to_store's blocks of whole shards are not."""
    options = {"endpoint": server["endpoint"], "region": server["region"],
               "access_key_id": server["access_key"], "secret_access_key": server["secret_key"]}
    url = f"s3://{bucket}/v.zarr"
    blocks, workers = store_tasks(cluster, lambda: stowage.to_store(
        blocks_of_70(values), url, "raw", compression="zstd", chunks=(64, 64, 64), shards=(128, 128, 128),
        storage_options=options))
    # in the worker processes (which S3 refuses parts of a shard from, as from any other process)
    assert len(blocks) == len(set(blocks)) == units(128) and workers <= set(cluster.scheduler_info()["workers"])
    assert np.array_equal(stowage.open(url, storage_options=options)["raw"][...], values)
