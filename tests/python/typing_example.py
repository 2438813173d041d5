"""A program using stowage's public API as a typed program would, for mypy
to check (test_stubs.py), never to run: it shows the package's types (inline
annotations, py.typed and the generated _core.pyi) are usable. assert_type
pins what mypy must infer where a module is annotated; written so it stays
right once the rest (_nodes.py, _interop.py) is annotated too."""

import os
from typing import Any, assert_type

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
