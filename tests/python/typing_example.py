"""A program using stowage's public API as a typed program would, for mypy
to check (test_stubs.py), never to run: it shows the package's types (inline
annotations, py.typed and the generated _core.pyi) are usable. assert_type
pins what mypy must infer: every module of the package is annotated."""

import os
from typing import Any, Literal, assert_type

import numpy as np
import numpy.typing as npt

import stowage
import stowage._core
from stowage.torch import RecordsDataset


def summary_ratio(source: str | os.PathLike[str], destination: str) -> float:
    summary = stowage.convert(source, destination, to="zarr", compression="zstd:level=5", shards=[64, 64])
    assert_type(summary, dict[str, Any])
    return float(summary["ratio"])


def codecs() -> list[str]:
    found = stowage.plugins(load=False)
    assert_type(found, list[dict[str, Any]])
    detail = stowage.plugin_detail("zstd")
    assert_type(detail, dict[str, Any] | None)
    return [p["id"] for p in found if p["kind"] == "codec"]


def block_mean(path: str) -> float:
    stowage.set_threads(2)
    assert_type(stowage.threads(), int)
    with stowage.open(path) as store:
        a = store["raw/s0"]
        if not isinstance(a, stowage.Array):
            raise TypeError(f"{path}: raw/s0 is not an array")
        block: npt.NDArray[Any] = a[0:64, :, 10]
        a.attrs["unit"] = "nm"
        return float(np.mean(block))


def where_it_failed(path: str) -> str:
    try:
        stowage.open(path)
    except stowage.NotFoundError as e:
        assert_type(e.path, str)
        return e.code
    except stowage.Error as e:
        assert_type(e, stowage.Error)
        return e.plugin
    return ""


def first_sample_key(path: str) -> int:
    ds = RecordsDataset(path, decode=False, transform=lambda b: len(b))
    assert_type(len(ds), int)
    assert_type(ds.records, stowage.Records)
    return int(ds[0])


def raw_store(path: str) -> list[str]:
    # The extension's own types, from the generated _core.pyi.
    core = stowage._core.Store.open(path, "r")
    assert_type(core, stowage._core.Store)
    assert_type(core.format, str)
    return core.list("")


def write_and_read(path: str) -> float:
    # Store, Group and Array as zarr-python's Group and Array type them.
    with stowage.open(path, "w") as store:
        assert_type(store, stowage.Store)
        a = store.create_array("raw", shape=(64, 64), dtype="uint16", chunks=(32, 32), fill_value=7)
        assert_type(a, stowage.Array)
        a[0:2, :] = np.ones((2, 64))
        a.set((slice(0, 2), 0), np.array([1.5, 2.5]), casting="unsafe")
        assert_type(a[...], npt.NDArray[Any])
        assert_type(a.oindex[[0, 2], :], npt.NDArray[Any])
        assert_type(a.vindex[[0, 1], [2, 3]], npt.NDArray[Any])
        a.oindex[[0, 2], :] = 0
        a.resize(128, 64)
        assert_type(a.append(np.zeros((1, 64), "uint16")), tuple[int, ...])
        assert_type(a.shape, tuple[int, ...])
        assert_type(a.chunks, tuple[int, ...])
        assert_type(a.shards, tuple[int, ...] | None)
        assert_type(a.dtype, np.dtype[Any])
        assert_type(a.fill_value, np.generic)
        assert_type(a.info, str)
        g = store.create_group("labels", attrs={"source": "manual"})
        assert_type(g, stowage.Group)
        assert_type(g.require_group("cells"), stowage.Group)
        assert_type(g.attrs, stowage.Attributes)
        g.attrs["unit"] = "um"
        assert_type(dict(g.attrs), dict[str, Any])
        assert_type(store["labels"], stowage.Group | stowage.Array | stowage.Sparse | stowage.Strings | stowage.Records)
        assert_type(store.tree(), str)
        for name, child in store.arrays(recurse=True):
            assert_type(child, stowage.Array)
        return float(np.asarray(a).mean())


def single_cell(path: str) -> int:
    store = stowage.open(path)
    m = store[""]
    if not isinstance(m, stowage.Sparse):
        raise TypeError(f"{path}: not a sparse matrix")
    assert_type(m.format, Literal["csc", "csr"])
    assert_type(m[:, [3, 7, 9]], Any)  # a scipy.sparse matrix: scipy has no types
    assert_type(m.to_scipy(), Any)
    assert_type(m.read_dense(0, 0, 10, 10), npt.NDArray[Any])
    genes = store["axes/gene"]
    if isinstance(genes, stowage.Strings):
        assert_type(genes[0], str)
        assert_type(genes[1:], list[str])
    adata = stowage.to_anndata(store, obs="cell")
    assert_type(adata, Any)  # anndata.AnnData: imported only when used
    assert_type(stowage.write_anndata(adata, path + ".daf"), stowage.Store)
    assert_type(stowage.to_dask(m), Any)
    return m.nnz


def zarr_functions(path: str) -> None:
    root = stowage.open_group(path, mode="w")
    assert_type(root, stowage.Store | stowage.Group)
    z = stowage.open_array(path, mode="a", path="a", shape=(100, 100), chunks=(10, 10), dtype="i4")
    assert_type(z, stowage.Array)
    assert_type(stowage.zeros((10, 10), store=path, path="z"), stowage.Array)
    assert_type(stowage.array(np.arange(10), store=path, path="b"), stowage.Array)
    records = stowage.open(path)["train"]
    if isinstance(records, stowage.Records):
        assert_type(records.raw(0), bytes)
        assert_type(records.find("img_00042"), int | None)
