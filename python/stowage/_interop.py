"""dask and xarray views of stowage arrays (imported only when used)."""

import numpy as np

from ._errors import InvalidArgumentError
from ._nodes import Array, Sparse

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


def to_xarray(array, name=None):
    """An ``xarray.DataArray`` holding the array's values (read now), with its
    dimension names as ``dims`` and its labels as coordinates; attributes
    go to ``attrs``. Unnamed dimensions are called ``dim_0``, ``dim_1``, ..."""
    import xarray

    dims, coords = [], {}
    for d, (dim_name, labels) in enumerate(array.dims or [(None, None)] * array.ndim):
        dim_name = dim_name or f"dim_{d}"
        dims.append(dim_name)
        if labels is not None:
            coords[dim_name] = np.asarray(labels, dtype=object)
    attrs = {k: v for k, v in array.attrs.items() if k != "stowage_labels"}
    return xarray.DataArray(np.asarray(array), dims=dims, coords=coords, attrs=attrs,
                            name=name or (array.node.rsplit("/", 1)[-1] or None))
