"""Single-cell matrices (BPCells, Daf, dense arrays) as ``anndata.AnnData``
(imported only when used)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from ._errors import InvalidArgumentError, NodeNotFoundError
from ._nodes import Array, Group, PathLike, Sparse, Store, Strings
from ._nodes import open as open_store

__all__ = ["to_anndata", "write_anndata"]

# Dimension names that hold observations (cells) whatever their position.
_OBS_NAMES = {"cell", "cells", "obs", "barcode", "barcodes"}


def to_anndata(source: PathLike | Store | Group | Array | Sparse, obs_names: Iterable[Any] | None = None,
               var_names: Iterable[Any] | None = None, *, layer: str | None = None, obs: str | int | None = None,
               lazy: bool = False) -> Any:  # anndata.AnnData
    """An ``anndata.AnnData`` whose ``X`` is a matrix of a store: cells
    (observations, ``obs``) x genes (variables, ``var``), as AnnData and
    scanpy want it.

    ``source``: a path (opened for reading), a :class:`Sparse` matrix (``X`` a ``scipy.sparse``
    matrix), a 2-d :class:`Array` (``X`` a numpy array), or a
    :class:`Store` / :class:`Group` holding one:

    - BPCells: the store's matrix (``store[""]``);
    - Daf: the matrix ``layer`` names (``"UMIs"``, found under
      ``matrices/<obs axis>/<other axis>/`` or the other way round, the copy
      whose rows or columns are the cells preferred so that ``X`` is read
      without a copy), or a path below the store
      (``"matrices/gene/cell/UMIs"``); without ``layer``, the only one there
      is. ``obs`` then names the obs axis (default ``"cell"``).

    ``obs_names`` / ``var_names``: the names of the cells / genes; by
    default the labels of those dimensions (BPCells' row and column names,
    Daf's axis entries), else as anndata's default, ``"0"``, ``"1"``, ...

    Orientation (``obs``: ``0``, ``1`` or a dimension name, the dimension
    holding the cells). By default a dimension named ``cell``, ``cells``,
    ``obs``, ``barcode`` or ``barcodes`` (Daf's ``cell`` axis); else, for
    BPCells, the columns: BPCells writes the matrices of R's single-cell
    tools, genes x cells, so ``X`` is the transpose (``to_scipy().T``: a
    CSC matrix becomes CSR without a copy, and its rows, the cells, are
    what was read fastest); else the rows, as stored.

    ``X`` keeps the stored dtype (anndata 0.8's default would cast to
    float32; this passes ``dtype=``, its announced future behaviour). On a
    Daf store, the vectors of the two axes (``vectors/cell/*``,
    ``vectors/gene/*``) become the columns of ``obs`` and ``var``.

    ``lazy=True``: ``X`` is a dask array (:func:`stowage.to_dask`, blocks of
    whole cells as ``scipy.sparse`` matrices) read when computed. Debian's
    anndata 0.8 takes a dask ``X`` only this far: its constructor reads one
    into numpy, so it is assigned afterwards, and its views
    (``adata[mask]``) raise ``NotImplementedError`` on it; subset
    ``adata.X`` itself, or ``adata.X = adata.X.compute()`` first. Hence
    the default is eager: ``X`` read now, whole.

        >>> import stowage
        >>> adata = stowage.to_anndata(stowage.open("pbmc.bpcells"))   # genes x cells on disk
        >>> adata.shape                                                 # (cells, genes)
        (2700, 32738)
        >>> ad = stowage.to_anndata(stowage.open("cells.daf"), layer="UMIs")
        >>> ad.obs.columns                                              # Daf's cell vectors
    """
    import anndata
    import pandas

    if isinstance(source, (str, os.PathLike)):
        source = open_store(source)
    matrix = _matrix_of(source, layer, obs)
    if matrix.ndim != 2:
        raise InvalidArgumentError(f"{matrix.store.path}: {matrix.node or '/'} has {matrix.ndim} dimensions, "
                                   "an AnnData X has 2")
    axis = _obs_axis(matrix, obs)
    dims = matrix.dims
    names = [_names(given, dims[d][1], matrix.shape[d], what)
             for given, d, what in ((obs_names, axis, "obs_names"), (var_names, 1 - axis, "var_names"))]
    frames = [pandas.DataFrame(_vectors(matrix.store, dims[d][0], matrix.shape[d]), index=index)
              for d, index in ((axis, names[0]), (1 - axis, names[1]))]
    if lazy:
        from ._interop import to_dask

        x = to_dask(matrix)
        adata = anndata.AnnData(obs=frames[0], var=frames[1])
        adata.X = _dask_transposed(x) if axis == 1 else x  # after: the constructor would read it
        return adata
    x = matrix.to_scipy() if isinstance(matrix, Sparse) else np.asarray(matrix)
    return anndata.AnnData(x.T if axis == 1 else x, obs=frames[0], var=frames[1], dtype=x.dtype)


def write_anndata(adata: Any, path: PathLike, format: str | None = None, *, layer: str = "UMIs", obs: str = "cell",
                  var: str = "gene") -> Store:
    """Write an ``anndata.AnnData`` as a BPCells matrix directory or a Daf
    repository (``format``: ``"bpcells"`` or ``"daf"``, else from the
    extension; ``"w"``: what is at ``path`` is replaced when all is written),
    so that :func:`to_anndata` reads it back equal. Returns the written
    :class:`Store`, opened for reading.

    - BPCells: ``X`` as BPCells and R hold single-cell counts, genes x
      cells in CSC (``X.T``: a CSR ``X`` is written without a copy), with
      the var names as row names and the obs names as column names.
      BPCells keeps nothing else (``obs``/``var`` columns, layers).
    - Daf: the axes ``obs`` (default ``"cell"``) and ``var`` (``"gene"``)
      from the names; ``X`` as the matrix ``layer`` (default ``"UMIs"``)
      and each of ``adata.layers`` under its name, all in
      ``matrices/<var>/<obs>/`` as sparse CSC (cells major: the copy
      ``to_anndata`` reads); ``obs``/``var`` columns as the axes' vectors
      (numbers and bools as they are, anything else as strings).

    BPCells takes uint32, float32 and float64 values (the format's types)::

        >>> stowage.write_anndata(adata, "counts.bpcells")
        >>> stowage.to_anndata(stowage.open("counts.bpcells")).X   # equal to adata.X
    """
    if format is None and os.path.splitext(os.fspath(path))[1] in (".bpcells", ".daf"):
        format = os.path.splitext(os.fspath(path))[1][1:]  # names the core does not take from an extension
    with open_store(path, "w", format) as store:
        if store.format not in ("bpcells", "daf"):
            raise InvalidArgumentError(f"{store.path}: write_anndata writes bpcells or daf, not {store.format}")
        if store.format == "bpcells":
            store.write_sparse("", _genes_by_cells(adata.X),
                               dims=[("genes", list(adata.var_names)), ("cells", list(adata.obs_names))])
        else:
            store.write_strings("axes/" + obs, list(adata.obs_names))
            store.write_strings("axes/" + var, list(adata.var_names))
            for name, x in [(layer, adata.X)] + list(adata.layers.items()):
                store.write_sparse(f"matrices/{var}/{obs}/{name}", _genes_by_cells(x))
            for axis, frame in ((obs, adata.obs), (var, adata.var)):
                for column, values in frame.items():
                    _write_vector(store, f"vectors/{axis}/{column}", values)
        path = store.path
    return open_store(path, "r", format)


def _genes_by_cells(x: Any) -> Any:
    import scipy.sparse

    return (x if scipy.sparse.issparse(x) else scipy.sparse.csr_matrix(np.asarray(x))).T.tocsc()


def _write_vector(store: Store, node: str, values: npt.ArrayLike) -> None:
    values = np.asarray(values)
    if values.dtype.kind in "biuf":
        store.create_array(node, values.shape, values.dtype)[...] = values
    else:  # str, object, categories: Daf's String vectors
        store.write_strings(node, [str(v) for v in values])


def _matrix_of(source: Any, layer: str | None, obs: str | int | None) -> Array | Sparse:
    """The Sparse or Array node that ``source`` and ``layer`` name."""
    if isinstance(source, Store):
        source = source.root  # a single-matrix store's root is its matrix (BPCells, npy)
    if isinstance(source, (Sparse, Array)):
        if layer is not None:
            raise InvalidArgumentError(f"{source.store.path}: {source.node or '/'} is a matrix; layer= names "
                                       "one inside a store or group")
        return source
    if not isinstance(source, Group):
        raise InvalidArgumentError("to_anndata takes a stowage Sparse, Array, Store or Group, not "
                                   + type(source).__name__)
    store = source.store
    if layer is not None and "/" in layer:
        return _matrix_of(source[layer], None, obs)
    axis = _obs_axis_name(obs)
    found = _daf_matrices(source, axis, layer)
    if len(found) == 1:
        return next(iter(found.values()))
    where = f"{store.path}: " + (f"{source.node}: " if source.node else "")
    if not found:
        what = f"matrix {layer!r}" if layer else "matrix"
        raise NodeNotFoundError(where + f"no {what} over the {axis!r} axis (give layer= a path below the "
                                "store, or obs= the axis of the cells)")
    raise InvalidArgumentError(where + f"several matrices over the {axis!r} axis; give layer= one of "
                               + ", ".join(sorted(found)))


def _obs_axis_name(obs: str | int | None) -> str:
    return obs if isinstance(obs, str) else "cell"


def _daf_matrices(group: Group, axis: str, layer: str | None) -> dict[str, Array | Sparse]:
    """{name: node} of the numeric matrices under ``matrices/`` between the
    axis ``axis`` and another one, of the name ``layer`` if given; of two
    copies (``cell/gene`` and ``gene/cell``), the one read as cells fastest."""
    if "matrices" not in group:
        return {}
    base: Any = group["matrices"]  # groups of groups
    found: dict[str, Array | Sparse] = {}
    for rows in base.keys():
        for cols in base[rows].keys():
            if (axis not in (rows, cols)) or rows == cols:
                continue
            for name in base[rows][cols].keys():
                if layer is not None and name != layer:
                    continue
                node = base[rows][cols][name]
                if isinstance(node, (Sparse, Array)) and (name not in found or _cells_major(node, axis)):
                    found[name] = node
    return found


def _cells_major(node: Array | Sparse, axis: str) -> bool:
    """Whether the cells of ``node`` are its fast axis: the major one of a
    sparse matrix, the rows of a dense one."""
    cells = [name for name, _ in node.dims].index(axis)
    if isinstance(node, Sparse):
        return cells == (0 if node.format == "csr" else 1)
    return cells == 0


def _obs_axis(matrix: Array | Sparse, obs: str | int | None) -> int:
    """The dimension (0 or 1) of ``matrix`` that holds the cells."""
    names = [name for name, _ in matrix.dims]
    if isinstance(obs, str):
        if obs not in names:
            raise InvalidArgumentError(f"{matrix.store.path}: {matrix.node or '/'} has no dimension {obs!r} "
                                       f"(its dimensions: {names})")
        return names.index(obs)
    if obs is not None:
        if obs not in (0, 1):
            raise InvalidArgumentError(f"obs is 0, 1 or a dimension name, not {obs!r}")
        return int(obs)
    for d, name in enumerate(names):
        if name and name.lower() in _OBS_NAMES:
            return d
    return 1 if matrix.store.format == "bpcells" else 0


def _names(given: Iterable[Any] | None, labels: Iterable[Any] | None, n: int, what: str) -> Any:  # pandas.Index
    """The index of obs or var: the names given, else the labels, else
    ``"0"``, ``"1"``, ... (anndata's own default)."""
    import pandas

    names = given if given is not None else labels
    if names is None:
        return pandas.Index(np.arange(n).astype(str), dtype=object)
    names = [str(x) for x in names]
    if len(names) != n:
        raise InvalidArgumentError(f"{what} has {len(names)} names for {n} entries")
    return pandas.Index(names, dtype=object)


def _vectors(store: Store, axis: str | None, n: int) -> dict[str, Any]:
    """{name: values} of Daf's vectors along ``axis`` (``vectors/<axis>/*``):
    the obs or var columns. Empty for other formats."""
    if store.format != "daf" or not axis:
        return {}
    node = "vectors/" + axis
    if node not in store:
        return {}
    columns: dict[str, Any] = {}
    for name in store.keys(node):
        vector = store[node + "/" + name]
        if isinstance(vector, Strings) and vector.shape == (n,):
            columns[name] = vector.to_list()
        elif isinstance(vector, Array) and vector.shape == (n,):
            columns[name] = vector[...]
    return columns


def _dask_transposed(x: Any) -> Any:
    """The transpose of a dask array of scipy.sparse blocks (dask's own
    ``x.T`` calls numpy.transpose with axes, which scipy.sparse refuses)."""
    import dask.array

    meta = x._meta.T
    return dask.array.blockwise(_transpose_block, "ji", x, "ij", dtype=x.dtype, meta=meta)


def _transpose_block(block: Any) -> Any:
    return block.T
