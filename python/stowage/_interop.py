"""dask and xarray views of stowage nodes (imported only when used)."""

import numpy as np

from ._errors import InvalidArgumentError
from ._nodes import Array, Group, Sparse, Strings

__all__ = ["to_dask", "to_xarray"]


def to_dask(array, chunks=None):
    """A ``dask.array.Array`` over a stowage :class:`Array` (or :class:`Sparse`,
    read dense), on the array's own chunk grid unless ``chunks`` is given.
    Each task reads its block with ``array[...]``; the array pickles by path,
    so this works on a ``dask.distributed`` cluster of processes."""
    import dask.array
    import dask.base

    if not isinstance(array, (Array, Sparse)):
        raise InvalidArgumentError("to_dask takes a stowage Array or Sparse, not " + type(array).__name__)
    if chunks is None:
        chunks = array.chunks if isinstance(array, Array) else "auto"
    name = "stowage-" + dask.base.tokenize(array.store.path, array.store.format, array.node, chunks)
    # lock=False: reads release the GIL and a store is safe to read from many
    # threads; asarray=False keeps dask from calling numpy.asarray on the
    # whole Array (its __getitem__ already returns numpy).
    return dask.array.from_array(_DaskSource(array), chunks=chunks, name=name, lock=False,
                                 asarray=False, fancy=False, meta=np.empty((0,) * array.ndim, array.dtype))


class _DaskSource:
    """What dask.array.from_array needs: shape, dtype, ndim and slicing."""

    def __init__(self, array):
        self.array = array
        self.shape = array.shape
        self.dtype = array.dtype
        self.ndim = array.ndim

    def __getitem__(self, key):
        if isinstance(self.array, Array):
            return self.array[key]
        # A block of a sparse matrix: that window, read dense.
        rows, cols = (k.indices(n) for k, n in zip(key, self.shape))
        return self.array.read_dense(rows[0], cols[0], max(0, rows[1] - rows[0]), max(0, cols[1] - cols[0]))[
            :: rows[2], :: cols[2]]


def to_xarray(node, name=None):
    """A node as xarray sees it through ``engine="stowage"``, lazily: an
    :class:`Array`, :class:`Sparse` or :class:`Strings` gives the
    ``xarray.DataArray`` that ``xr.open_dataarray(path, engine="stowage",
    group=node)`` gives, a :class:`Group` the ``xarray.Dataset`` of
    ``xr.open_dataset``. Nothing is read until values are asked for; dims
    and labels (as index coordinates) come from the node's ``dims``, and its
    attributes go to ``attrs``. ``name`` renames a DataArray (default: the
    node's name, None for a store's root array).

        >>> x = stowage.to_xarray(stowage.open("expression.datg")[""])
        >>> x.dims, x.coords["Rows"].values[:2]
        (('Rows', 'Cols'), array(['row1', 'row2'], dtype=object))
        >>> x.sel(Rows="row2").values          # reads that row's chunks only

    Unlike before, this no longer reads the array into memory: ``x.load()``
    (or ``x.values``) does."""
    import xarray

    from ._xarray import UNNAMED, StowageBackendEntrypoint

    if not isinstance(node, (Group, Array, Sparse, Strings)):
        raise InvalidArgumentError("to_xarray takes a stowage Group, Array, Sparse or Strings, not "
                                   + type(node).__name__)
    ds = xarray.open_dataset(node, engine=StowageBackendEntrypoint)
    if isinstance(node, Group):
        return ds
    (x,) = ds.data_vars.values()
    if name is not None:
        return x.rename(name)
    return x.rename(None) if x.name == UNNAMED else x
