"""dask and xarray views of stowage nodes (imported only when used)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._errors import InvalidArgumentError
from ._nodes import Array, Group, Sparse, Strings

__all__ = ["to_dask", "to_xarray"]


def to_dask(array: Array | Sparse, chunks: Any = None) -> Any:  # a dask.array.Array
    """A ``dask.array.Array`` over a stowage :class:`Array` or :class:`Sparse`.

    An Array is read on its own chunk grid unless ``chunks`` is given
    (dask's forms: ``64``, ``(64, 128)``, ``"auto"``...); each task reads its
    block with ``array[...]``. The array pickles by path, so this works on a
    ``dask.distributed`` cluster of processes::

        x = stowage.to_dask(stowage.open("volume.n5")["raw/s0"])
        x.mean().compute()

    A Sparse matrix gives blocks that are ``scipy.sparse`` matrices in the
    storage's layout (dask's ``meta`` is an empty ``csr_matrix`` or
    ``csc_matrix``), cut along the major axis only: each task reads whole
    rows (CSR) or columns (CSC) with ``m[a:b]``, which reads only those.
    ``chunks`` is then the number of majors per block (an int, or dask's
    pair with the whole minor axis, ``(-1, 100)`` for CSC; default: blocks
    of about a million stored values)::

        x = stowage.to_dask(stowage.open("counts.bpcells")[""])   # CSC
        x.blocks[0].compute()                                     # a scipy.sparse.csc_matrix
        x.compute()                                               # equal to m.to_scipy()

    Slicing and ``map_blocks`` work on sparse blocks; dask's reductions
    (``x.sum(axis=0)``) do not, in Debian's dask 2022.12 (they pass numpy's
    ``keepdims``, which scipy.sparse refuses): reduce each block in
    ``map_blocks``, or densify it,
    ``x.map_blocks(lambda b: b.toarray(), meta=numpy.empty((0, 0), x.dtype))``.
    """
    import dask.array
    import dask.base

    if not isinstance(array, (Array, Sparse)):
        raise InvalidArgumentError("to_dask takes a stowage Array or Sparse, not " + type(array).__name__)
    if isinstance(array, Sparse):
        chunks = _major_chunks(array, chunks)
        meta = _sparse_meta(array)
    else:
        chunks = array.chunks if chunks is None else chunks
        meta = np.empty((0,) * array.ndim, array.dtype)
    name = "stowage-" + dask.base.tokenize(array.store.path, array.store.format, array.node, chunks)
    # lock=False: reads release the GIL and a store is safe to read from many
    # threads; asarray=False keeps dask from calling numpy.asarray on the
    # whole Array (its __getitem__ already returns numpy) and on sparse blocks.
    return dask.array.from_array(_DaskSource(array), chunks=chunks, name=name, lock=False,
                                 asarray=False, fancy=False, meta=meta)


# Stored values per block of a sparse matrix by default: some MB per task,
# enough to keep the per-task cost of dask small.
_SPARSE_BLOCK_VALUES = 1 << 20


def _major_chunks(matrix: Sparse, chunks: Any) -> tuple[int, int]:
    """dask chunks for a Sparse matrix: blocks of whole majors. ``chunks``:
    majors per block, as an int or as dask's pair whose minor entry is the
    whole axis (``-1``, ``None`` or its length)."""
    major = 0 if matrix.format == "csr" else 1
    minors = matrix.shape[1 - major]
    if isinstance(chunks, (tuple, list)) and len(chunks) == 2 and chunks[1 - major] in (-1, None, minors):
        chunks = chunks[major]
    if chunks is None:
        per_major = matrix.nnz / max(1, matrix.majors)
        chunks = max(1, int(_SPARSE_BLOCK_VALUES / per_major) if per_major else matrix.majors)
    elif not isinstance(chunks, (int, np.integer)) or chunks < 1:
        raise InvalidArgumentError(
            f"to_dask of a {matrix.format.upper()} matrix cuts blocks of whole {'rows' if major == 0 else 'columns'}: "
            f"chunks is the number of {'rows' if major == 0 else 'columns'} per block, not {chunks!r}")
    return (int(chunks), minors) if major == 0 else (minors, int(chunks))


def _sparse_meta(matrix: Sparse) -> Any:
    import scipy.sparse

    kind = scipy.sparse.csr_matrix if matrix.format == "csr" else scipy.sparse.csc_matrix
    return kind((0, 0), dtype=matrix.dtype)


class _DaskSource:
    """What dask.array.from_array needs: shape, dtype, ndim and slicing
    (numpy blocks of an Array, scipy.sparse blocks of a Sparse)."""

    def __init__(self, array: Array | Sparse) -> None:
        self.array = array
        self.shape = array.shape
        self.dtype = array.dtype
        self.ndim = array.ndim

    def __getitem__(self, key: Any) -> Any:
        return self.array[key]


def to_xarray(node: Group | Array | Sparse | Strings, name: str | None = None) -> Any:  # xarray.DataArray | Dataset
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
    ds = xarray.open_dataset(node, engine=StowageBackendEntrypoint)  # type: ignore[arg-type]  # the engine takes nodes
    if isinstance(node, Group):
        return ds
    (x,) = ds.data_vars.values()
    if name is not None:
        return x.rename(name)
    return x.rename(None) if x.name == UNNAMED else x
