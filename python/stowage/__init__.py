"""stowage: scientific arrays and matrices in N5, datg, Daf, BPCells,
datadings and npy, through the format and codec plugins of the C++ library.

    import stowage
    store = stowage.open("volume.n5")          # format detected
    a = store["raw/s0"]                        # an Array
    block = a[0:64, :, 100]                    # numpy.ndarray, C order
    m = stowage.open("counts.bpcells")[""].to_scipy()
    stowage.to_store(dask_array, "out.zarr", "raw", shards=(128, 128, 128))
    stowage.convert("volume.n5", "volume.zstd.n5", compression="zstd")

Plugins are found as the tools find them: ``plugin_path=`` of open/convert,
then ``STOWAGE_PLUGIN_PATH``, then the directory installed beside the
library. ``stowage.torch.RecordsDataset`` serves datadings sets to PyTorch.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from . import _core
from ._convert import convert, plugin_detail, plugins
from ._dask import to_store  # imports dask only when called
from ._errors import (
    CorruptError,
    Error,
    InternalError,
    InvalidArgumentError,
    NodeNotFoundError,
    NotFoundError,
    PermissionDeniedError,
    PluginError,
    StorageIOError,
    UnsupportedError,
)
from ._nodes import Array, Attributes, Group, Records, Sparse, Store, Strings, open
from ._zarr_functions import array, create_array, empty, full, group, ones, open_array, open_group, zeros

__version__: str = _core.version()
__all__ = [
    "open", "Store", "Group", "Array", "Sparse", "Strings", "Records", "Attributes",
    "convert", "plugins", "plugin_detail", "to_dask", "to_store", "to_xarray", "to_anndata", "write_anndata",
    "set_threads", "threads",
    "open_group", "open_array", "group", "create_array", "array", "zeros", "ones", "full", "empty",
    "Error", "NotFoundError", "NodeNotFoundError", "InvalidArgumentError", "CorruptError",
    "UnsupportedError", "PermissionDeniedError", "StorageIOError", "PluginError", "InternalError",
]


def to_dask(array: Array | Sparse, chunks: Any = None) -> Any:
    """A ``dask.array.Array`` on the array's native chunk grid; of a Sparse
    matrix, ``scipy.sparse`` blocks of whole rows (CSR) or columns (CSC)
    (see :func:`stowage._interop.to_dask`). Typed ``Any``: importing stowage
    never imports dask::

        stowage.to_dask(stowage.open("volume.n5")["raw/s0"]).mean().compute()
    """
    from ._interop import to_dask as impl

    return impl(array, chunks)


def to_xarray(node: Array | Sparse | Strings | Group, name: str | None = None) -> Any:
    """A lazy ``xarray.DataArray`` (of an Array, Sparse or Strings) or
    ``xarray.Dataset`` (of a Group), as ``engine="stowage"`` opens it, with
    dimension names and labels as coordinates (see
    :func:`stowage._interop.to_xarray`). Typed ``Any``: importing stowage
    never imports xarray::

        stowage.to_xarray(stowage.open("volume.n5")["raw"])  # a Dataset, nothing read
    """
    from ._interop import to_xarray as impl

    return impl(node, name)


def to_anndata(source: str | os.PathLike[str] | Store | Group | Array | Sparse,
               obs_names: Sequence[str] | None = None, var_names: Sequence[str] | None = None, *,
               layer: str | None = None, obs: int | str | None = None, lazy: bool = False) -> Any:
    """An ``anndata.AnnData`` (cells x genes) of a BPCells or Daf matrix or a
    dense array (a node, a store or a path), names from its labels (see
    :func:`stowage._anndata.to_anndata`); typed ``Any``, as anndata is
    imported only here::

        adata = stowage.to_anndata(stowage.open("pbmc.bpcells"))
    """
    from ._anndata import to_anndata as impl

    return impl(source, obs_names, var_names, layer=layer, obs=obs, lazy=lazy)


def write_anndata(adata: Any, path: str | os.PathLike[str], format: str | None = None, *,
                  layer: str = "UMIs", obs: str = "cell", var: str = "gene") -> Store:
    """Write an ``anndata.AnnData`` as BPCells (genes x cells) or Daf, read
    back equal by :func:`to_anndata` (see :func:`stowage._anndata.write_anndata`)::

        stowage.write_anndata(adata, "counts.bpcells")
    """
    from ._anndata import write_anndata as impl

    return impl(adata, path, format, layer=layer, obs=obs, var=var)


def set_threads(n: int) -> None:
    """Worker threads that decode and encode chunks (default: all cores),
    for this process (as ``numcodecs.blosc.set_nthreads`` is for blosc).

    >>> stowage.set_threads(2)
    >>> stowage.threads()
    2
    """
    _core.set_threads(int(n))


def threads() -> int:
    """The number of worker threads (see :func:`set_threads`).

    >>> stowage.threads() >= 1
    True
    """
    return _core.threads()
