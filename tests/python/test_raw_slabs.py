"""Uncompressed chunks are read slab by slab straight into the caller's array
(stowage_array_vtable.read_chunk_slabs, issue #35): regions that start and end
inside chunks, edge chunks, missing chunks, both byte orders, Zarr v2 written
by zarr-python and Zarr v3 (sharded or not) written by stowage, against the
values themselves and against zarr-python's reads."""

import numpy as np
import pytest
import zarr

import stowage

SHAPE, CHUNKS = (70, 45, 33), (32, 16, 16)  # edge chunks in every dimension
RNG = np.random.default_rng(35)
REGIONS = [(slice(None),) * 3, (slice(3, 61), slice(5, 44), slice(1, 30)), (slice(31, 33), 7, slice(15, 17)),
           (slice(64, 70), slice(40, 45), slice(0, 33)), (5, slice(None), 2)]


@pytest.mark.parametrize("dtype", ["<u2", ">u2", "<f8", ">i4"])
def test_zarr_v2_raw_regions_equal_zarr_python(tmp_path, dtype):
    values = RNG.integers(0, 60000, SHAPE).astype(dtype)
    z = zarr.open_array(str(tmp_path / "a.zarr"), mode="w", shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                        compressor=None, fill_value=9)
    z[:64] = values[:64]  # the last row of chunks stays missing: the fill value
    expected = z[...]
    a = stowage.open(tmp_path / "a.zarr")[""]
    for region in REGIONS:
        np.testing.assert_array_equal(a[region], expected[region], err_msg=str(region))
        np.testing.assert_array_equal(a[region], z[region], err_msg=str(region))


@pytest.mark.parametrize("shards", [None, (64, 32, 32)])
def test_zarr_v3_raw_regions(tmp_path, shards):
    values = RNG.integers(-2**31, 2**31 - 1, SHAPE).astype(np.int32)
    with stowage.open(tmp_path / "a.zarr", "w", options={"zarr_version": 3}) as store:
        a = store.create_array("v", shape=SHAPE, dtype="int32", chunks=CHUNKS, shards=shards,
                               compression={"type": "raw"}, fill_value=-1)
        a[:, :32] = values[:, :32]
    expected = values.copy()
    expected[:, 32:] = -1
    a = stowage.open(tmp_path / "a.zarr")["v"]
    for region in REGIONS:
        np.testing.assert_array_equal(a[region], expected[region], err_msg=str(region))


def test_truncated_raw_chunk_is_named(tmp_path):
    z = zarr.open_array(str(tmp_path / "a.zarr"), mode="w", shape=SHAPE, chunks=CHUNKS, dtype="<u2",
                        compressor=None)
    z[...] = 1
    chunk = tmp_path / "a.zarr" / "1.1.1"
    chunk.write_bytes(chunk.read_bytes()[:1000])
    a = stowage.open(tmp_path / "a.zarr")[""]
    with pytest.raises(stowage.CorruptError, match=r"1\.1\.1: chunk file is 1000 bytes"):
        a[40:41, 20:21, 20:21]
