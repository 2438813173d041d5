"""Pickling, and the package in other processes: a dask.distributed
LocalCluster with 2 worker processes (a real scheduler and workers) reducing
an N5 volume and writing a conversion in parallel through Array.__setitem__
on disjoint chunks (the cluster: conftest.py); torch's DataLoader with 2
workers over a datadings set."""

import pickle

import dask.array
import numpy as np
import torch.utils.data

import stowage
import stowage.torch
from conftest import expected_json, fixture, needs
from test_fixtures import check_value


@needs("zstd", "blosc")
def test_every_kind_pickles_and_reopens():
    store = stowage.open(fixture("n5", "zarr-written.n5"))
    for node in [store, store["groups"], store["blosc/float64_3d"]]:
        back = pickle.loads(pickle.dumps(node))
        assert type(back) is type(node) and back.store.path if hasattr(back, "store") else back.path
    a = pickle.loads(pickle.dumps(store["blosc/float64_3d"]))
    assert np.array_equal(a[...], store["blosc/float64_3d"][...]) and a.node == "blosc/float64_3d"
    s = pickle.loads(pickle.dumps(stowage.open(fixture("bpcells", "uint_packed_col_names"))[""]))
    assert s.nnz == 11
    r = pickle.loads(pickle.dumps(stowage.open(fixture("datadings", "basic.msgpack"))[""]))
    assert r.key(0) == "img/0001.jpg"
    names = pickle.loads(pickle.dumps(stowage.open(fixture("daf", "julia_v10_small"), format="daf")["axes/cell"]))
    assert names.to_list() == ["A", "B", "C", "D"]
    e = pickle.loads(pickle.dumps(stowage.NodeNotFoundError("gone", code="not found", path="p")))
    assert isinstance(e, KeyError) and str(e) == "gone" and e.path == "p"


def test_a_store_made_for_writing_reopens_without_truncating(tmp_path):
    store = stowage.open(tmp_path / "w.n5", "w")
    store.create_array("a", (4,), "uint8")[...] = [1, 2, 3, 4]
    again = pickle.loads(pickle.dumps(store["a"]))
    assert again.store.mode == "r+"
    assert again[...].tolist() == [1, 2, 3, 4]


@needs("zstd", "blosc")
def test_dask_distributed_reduction_over_an_n5_volume(tmp_path, cluster):
    rng = np.random.default_rng(5)
    volume = rng.integers(0, 65535, (64, 96, 80), dtype=np.uint16)
    with stowage.open(tmp_path / "vol.n5", "w") as store:
        store.create_array("raw", volume.shape, "uint16", chunks=(32, 32, 32), compression="blosc")[...] = volume
    a = stowage.open(tmp_path / "vol.n5")["raw"]
    d = stowage.to_dask(a)
    assert d.numblocks == (2, 3, 3)
    total = d.astype(np.uint64).sum().compute()
    assert int(total) == int(volume.astype(np.uint64).sum())
    assert np.array_equal(d.max(axis=0).compute(), volume.max(axis=0))
    # The work ran in the two worker processes.
    assert len(cluster.scheduler_info()["workers"]) == 2


def _copy_block(block, block_info=None, target=None):
    """Writes one block into the destination at its place; returns its sum."""
    loc = block_info[0]["array-location"]
    target[tuple(slice(lo, hi) for lo, hi in loc)] = block
    return np.array([[[block.astype(np.int64).sum()]]])


@needs("zstd", "blosc")
def test_dask_distributed_workers_write_disjoint_chunks(tmp_path, cluster):
    src = stowage.open(fixture("n5", "zarr-written.n5"))["zlib/int32_3d"]  # (6, 7, 9), chunks (4, 4, 4)
    with stowage.open(tmp_path / "out.n5", "w") as out:
        target = out.create_array("copy", src.shape, src.dtype, chunks=src.chunks, compression="zstd")
    d = stowage.to_dask(src)
    sums = d.map_blocks(_copy_block, target=target, dtype=np.int64, chunks=(1, 1, 1)).compute()
    assert int(sums.sum()) == int(src[...].astype(np.int64).sum())
    copy = stowage.open(tmp_path / "out.n5")["copy"]
    assert np.array_equal(copy[...], src[...])
    assert copy.codec["type"] == "zstd"


def test_dataloader_with_two_workers_over_a_datadings_set():
    path = fixture("datadings", "many.msgpack")
    expected = expected_json(str(path) + ".expected.json")
    dataset = stowage.torch.RecordsDataset(path)
    assert len(dataset) == expected["num_samples"] == 3000
    loader = torch.utils.data.DataLoader(dataset, batch_size=100, num_workers=2, collate_fn=lambda batch: batch)
    seen = [sample for batch in loader for sample in batch]
    keys = [s["key"] for s in seen]
    assert keys == [f"train/{i:05}" for i in range(3000)]
    bin_ = fixture("datadings", "many.msgpack.expected.bin").read_bytes()
    for s in expected["samples"]:
        check_value(seen[s["index"]], s["value"], bin_, f"sample {s['index']} from a worker")
    raw = stowage.torch.RecordsDataset(path, decode=False)
    loader = torch.utils.data.DataLoader(raw, batch_size=None, num_workers=2)
    assert [bytes(b) for b in loader][:3] == [stowage.open(path)[""].raw(i) for i in range(3)]



def _store_and_check(cluster, target_path, node, x, want):
    """da.store into a stowage array on the cluster's worker processes; every
    value must be there when it returns (read by a fresh handle)."""
    target = stowage.open(target_path, "r+")[node]
    dask.array.store(x, target, lock=False)
    assert len(cluster.scheduler_info()["workers"]) == 2
    back = stowage.open(target_path)[node][...]
    wrong = int((back != want).sum())
    assert wrong == 0, f"{wrong} of {want.size} values wrong right after da.store returned"


@needs("zstd")
def test_dask_store_into_a_sharded_zarr_array_with_chunks_smaller_than_a_shard(tmp_path, cluster):
    # Dask blocks of one inner chunk and blocks cutting across inner chunks:
    # several workers write parts of one shard, and the shards are complete
    # on disk when store() returns (not when the workers exit).
    for i, blocks in enumerate([(10, 10, 10), (7, 9, 11)]):
        path = tmp_path / f"s{i}.zarr"
        with stowage.open(path, "w") as store:
            store.create_array("a", (40, 50, 60), "int32", chunks=(10, 10, 10), shards=(20, 20, 20),
                               compression="zstd")
        want = np.arange(40 * 50 * 60, dtype=np.int32).reshape(40, 50, 60) + 1
        _store_and_check(cluster, path, "a", dask.array.from_array(want, chunks=blocks), want)


@needs("zstd")
def test_dask_store_into_n5_and_zarr_chunks_its_blocks_cut_across(tmp_path, cluster):
    # Blocks (7, 9, 11) over chunks (10, 10, 10): two tasks write parts of
    # one chunk, each merging with what is stored.
    want = (np.arange(30 * 40 * 50) % 65000 + 1).astype(np.uint16).reshape(30, 40, 50)
    for name, options in [("m.n5", {}), ("m2.zarr", {"zarr_version": 2}), ("m3.zarr", {})]:
        with stowage.open(tmp_path / name, "w", options=options) as store:
            store.create_array("a", (30, 40, 50), "uint16", chunks=(10, 10, 10), compression="zstd")
        _store_and_check(cluster, tmp_path / name, "a", dask.array.from_array(want, chunks=(7, 9, 11)), want)
