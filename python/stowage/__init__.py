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

__version__ = _core.version()
__all__ = [
    "open", "Store", "Group", "Array", "Sparse", "Strings", "Records", "Attributes",
    "convert", "plugins", "plugin_detail", "to_dask", "to_store", "to_xarray", "set_threads", "threads",
    "Error", "NotFoundError", "NodeNotFoundError", "InvalidArgumentError", "CorruptError",
    "UnsupportedError", "PermissionDeniedError", "StorageIOError", "PluginError", "InternalError",
]


def to_dask(array, chunks=None):
    """A ``dask.array.Array`` on the array's native chunk grid (see
    :func:`stowage._interop.to_dask`)."""
    from ._interop import to_dask as impl

    return impl(array, chunks)


def to_xarray(array, name=None):
    """An ``xarray.DataArray`` with dimension names and labels as coordinates
    (see :func:`stowage._interop.to_xarray`)."""
    from ._interop import to_xarray as impl

    return impl(array, name)


def set_threads(n):
    """Worker threads that decode and encode chunks (default: all cores)."""
    _core.set_threads(int(n))


def threads():
    """The number of worker threads."""
    return _core.threads()
