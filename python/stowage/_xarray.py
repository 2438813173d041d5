"""The xarray backend ``engine="stowage"``: any array-holding node of any
format as a lazy ``xarray.Dataset`` (imported only when xarray asks).

Registered as the entry point ``xarray.backends`` = ``stowage`` (in
pyproject.toml, and in the build tree's ``stowage-<version>.dist-info``), so

    import xarray as xr
    ds = xr.open_dataset("volume.n5", engine="stowage", group="raw/s0")
    ds = xr.open_dataset("counts.bpcells", engine="stowage", chunks={})  # dask, the store's chunks

Variables are read through xarray's lazy indexing (``BackendArray``, basic
indexing over ``Array[...]``): opening reads metadata only. Values are then
decoded by xarray's CF conventions, as every xarray backend does.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import xarray
from xarray import conventions
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.core import indexing

from ._errors import UnsupportedError
from ._nodes import Array, Group, Node, PathLike, Sparse, Store, Strings, _join, _Node
from ._nodes import open as _open

__all__ = ["StowageBackendEntrypoint", "StowageBackendArray", "open_node"]

# What xarray calls the variable of an unnamed DataArray: open_dataarray
# gives it the name None (the root array of a datg or BPCells file has no name).
UNNAMED = "__xarray_dataarray_variable__"

# Attributes that only carry what dims and labels already say.
_DIMENSION_ATTRIBUTES = ("stowage_labels", "_ARRAY_DIMENSIONS")


class StowageBackendArray(BackendArray):
    """A stowage :class:`Array`, :class:`Sparse` (read dense, by window) or
    :class:`Strings` node as xarray's ``BackendArray``: xarray's lazy
    indexing calls an Array with integers, slices and integer arrays per
    axis (outer indexing, through :attr:`Array.oindex`), the others with
    integers and slices, and each call reads only the chunks it touches.

        >>> v = StowageBackendArray(stowage.open("volume.n5")["raw/s0"])
        >>> xarray.Variable(("z", "y", "x"), indexing.LazilyIndexedArray(v))[0, :8].values
    """

    def __init__(self, node: Array | Sparse | Strings) -> None:
        self.node = node  # pickles by path: dask workers reopen the store
        self.shape = tuple(node.shape)
        self.dtype = np.dtype(object) if isinstance(node, Strings) else node.dtype

    def __getitem__(self, key: indexing.ExplicitIndexer) -> Any:
        support = indexing.IndexingSupport.OUTER if isinstance(self.node, Array) else indexing.IndexingSupport.BASIC
        return indexing.explicit_indexing_adapter(key, self.shape, support, self._read)

    def _read(self, key: tuple[Any, ...]) -> Any:
        if isinstance(self.node, Array):
            return self.node.oindex[key]
        if isinstance(self.node, Sparse):
            return _read_sparse(self.node, key)
        return np.array(self.node.to_list(), dtype=object).reshape(self.shape)[key]


def _read_sparse(matrix: Sparse, key: tuple[Any, ...]) -> npt.NDArray[Any]:
    """The dense window of a sparse matrix that ``key`` (ints and slices) selects."""
    picks, box = [], []  # type: list[Any], list[tuple[int, int]]
    for k, n in zip(key + (slice(None),) * (2 - len(key)), matrix.shape):
        if isinstance(k, slice):
            r = range(*k.indices(n))
            lo = min(r[0], r[-1]) if r else 0
            box.append((lo, (max(r[0], r[-1]) + 1 - lo) if r else 0))
            picks.append(slice(r[0] - lo, None, r.step) if r else slice(0, 0))
        else:
            box.append((int(k) % n, 1))
            picks.append(0)
    (r0, rows), (c0, cols) = box
    return matrix.read_dense(r0, c0, rows, cols)[tuple(picks)]


# ---- nodes -> variables ------------------------------------------------------------------


def _dims(node: Array | Sparse | Strings) -> list[tuple[str, list[str] | None]]:
    """``(name, labels)`` per dimension, names filled in: the node's dims, an
    N5 dataset's ``axes`` attribute (N5 order, reversed to C order), a 1-d
    Strings node's own name (a Daf axis), else xarray's ``dim_0``, ``dim_1``..."""
    if isinstance(node, Strings):
        dims: list[tuple[str | None, list[str] | None]] = [
            (d.get("name") or None, None) for d in node.describe().get("dims") or []]
        if not dims and len(node.shape) == 1:
            dims = [(node.name or None, None)]
    else:
        dims = node.dims
    dims = dims or [(None, None)] * len(node.shape)
    axes: Any = (node.describe().get("attributes") or {}).get("axes")
    if node.store.format == "n5" and not any(n for n, _ in dims) and _strs(axes, len(dims)):
        dims = [(a, lab) for a, (_, lab) in zip(reversed(axes), dims)]
    return [(name or f"dim_{d}", labels) for d, (name, labels) in enumerate(dims)]


def _strs(value: Any, n: int) -> bool:
    return isinstance(value, list) and len(value) == n and all(isinstance(v, str) for v in value)


def _variable(node: Array | Sparse | Strings) -> tuple[xarray.Variable, dict[str, npt.NDArray[Any]]]:
    """An ``xarray.Variable`` over the node (nothing read) and its labels, ``{dim: labels}``."""
    dims = _dims(node)
    names = tuple(name for name, _ in dims)
    attrs = _attrs(node)
    encoding = {}
    if isinstance(node, Array):
        encoding = {"chunks": node.chunks, "preferred_chunks": dict(zip(names, node.chunks))}
    data = indexing.LazilyIndexedArray(StowageBackendArray(node))
    labels = {name: np.asarray(lab, dtype=object) for name, lab in dims if lab is not None}
    return xarray.Variable(names, data, attrs, encoding), labels


def _attrs(node: _Node) -> dict[str, Any]:
    return {k: v for k, v in (node.describe().get("attributes") or {}).items() if k not in _DIMENSION_ATTRIBUTES}


def _conflict(variable: xarray.Variable, labels: dict[str, npt.NDArray[Any]], sizes: dict[Hashable, int],
              coords: dict[str, npt.NDArray[Any]]) -> str | None:
    """Why this variable does not fit the dataset so far (or None)."""
    for dim, n in zip(variable.dims, variable.shape):
        if sizes.get(dim, n) != n:
            return f"dimension {dim!r} has length {n} here and {sizes[dim]} in the dataset"
    for dim, lab in labels.items():
        if dim in coords and not np.array_equal(coords[dim], lab):
            return f"dimension {dim!r} has other labels here than in the dataset"
    return None


def _group_variables(group: Group, drop: set[str]) -> tuple[dict[str, xarray.Variable], dict[str, npt.NDArray[Any]]]:
    """The group's array-holding children whose dims agree, and their labels.
    A child whose dims conflict with an earlier one's, or of a type the
    format cannot read, is left out with a warning naming it and why;
    subgroups and record sets are not variables (as xarray's zarr engine)."""
    variables: dict[str, xarray.Variable] = {}
    coords: dict[str, npt.NDArray[Any]] = {}
    sizes: dict[Hashable, int] = {}
    for name in group.keys():
        if name in drop:
            continue
        path = _join(group.node, name)
        try:
            child = group.store[path]
        except UnsupportedError as e:
            warnings.warn(f"{group.store.path}: {path!r} is left out: {e}", stacklevel=6)
            continue
        if not isinstance(child, (Array, Sparse, Strings)):
            continue
        variable, labels = _variable(child)
        why = _conflict(variable, labels, sizes, coords)
        if why:
            warnings.warn(f"{group.store.path}: {path!r} is left out of the dataset of {group.node or '/'!r}: {why}; "
                          f"open it with group={path!r}", stacklevel=6)
            continue
        variables[name] = variable
        sizes.update(zip(variable.dims, variable.shape))
        coords.update(labels)
    return variables, coords


def _node_variables(node: Node, drop: set[str]) -> tuple[dict[str, xarray.Variable], dict[str, npt.NDArray[Any]]]:
    """``(variables, labels)`` of a group, or of one array-holding node."""
    if isinstance(node, Group):
        return _group_variables(node, drop)
    if not isinstance(node, (Array, Sparse, Strings)):
        raise UnsupportedError(f"{node.store.path}: {node.node or '/'!r} is a {type(node).__name__.lower()} node; "
                               "engine='stowage' opens groups, arrays, sparse matrices and strings")
    name = node.name or UNNAMED
    if name in drop:
        return {}, {}
    variable, labels = _variable(node)
    return {name: variable}, labels


def open_node(node: Node, *, drop_variables: str | Iterable[str] | None = None, mask_and_scale: bool = True,
              decode_times: bool = True, concat_characters: bool = True,
              decode_coords: bool | Literal["coordinates", "all"] = True, use_cftime: bool | None = None,
              decode_timedelta: bool | None = None) -> xarray.Dataset:
    """A node of an open store as an ``xarray.Dataset``, lazily, decoded by
    xarray's CF conventions (what ``xr.open_dataset(..., engine="stowage")``
    returns before xarray adds caching and dask).

        >>> ds = open_node(stowage.open("expression.datg")[""])
        >>> ds[UNNAMED].dims
        ('Rows', 'Cols')
    """
    drop = set([drop_variables] if isinstance(drop_variables, str) else drop_variables or ())
    variables, labels = _node_variables(node, drop)
    for dim, lab in labels.items():
        if dim not in variables and dim not in drop:
            variables[dim] = xarray.Variable((dim,), lab)
    # A group's attributes are the dataset's; an array's are its variable's
    # only, as xarray reads back a DataArray it wrote.
    attrs = _attrs(node) if isinstance(node, Group) else {}
    # xarray 2023.01 annotates decode_coords as bool, yet takes "coordinates"
    # and "all" (its own engines pass them); it gives Mappings back.
    variables, attrs, coord_names = conventions.decode_cf_variables(  # type: ignore[assignment]
        variables, attrs, mask_and_scale=mask_and_scale, decode_times=decode_times,
        concat_characters=concat_characters, use_cftime=use_cftime, decode_timedelta=decode_timedelta,
        decode_coords=decode_coords)  # type: ignore[arg-type]
    ds = xarray.Dataset(variables, attrs=attrs)
    return ds.set_coords(coord_names.intersection(variables))


class StowageBackendEntrypoint(BackendEntrypoint):
    """xarray's ``engine="stowage"``: every format stowage reads, lazily.

    ``filename_or_obj``: a path or URL (as :func:`stowage.open` takes it), an
    open :class:`Store`, or a node. ``group``: the node to open below it
    (default: the root). A group gives its arrays (and sparse matrices and
    strings) as data variables where their dimensions agree (others are left
    out with a warning); an array gives one variable, named after the node
    (``__xarray_dataarray_variable__`` for a store's root array, so
    ``open_dataarray`` names it None). Dimension names and labels come from
    the node's ``dims`` (Zarr ``_ARRAY_DIMENSIONS``/``dimension_names``,
    datg row/column names, Daf axes, BPCells names, N5 ``axes``), labels as
    index coordinates; unnamed dimensions are ``dim_0``, ``dim_1``...
    ``format``, ``storage_options``, ``plugin_path``, ``options``: as
    :func:`stowage.open`. ``chunks={}`` gives dask arrays on the store's
    chunks (``preferred_chunks`` in each variable's encoding).

        >>> ds = xr.open_dataset("scan.zarr", engine="stowage", chunks={})
        >>> xr.open_mfdataset(["day1.n5", "day2.n5"], engine="stowage", group="raw", concat_dim="t",
        ...                   combine="nested")

    Differs from xarray's zarr engine on purpose: an array's fill value
    (what unwritten chunks read as; 0 in N5, datg, Daf) is not a missing
    value marker, so it is not turned into ``_FillValue`` and nothing is
    masked unless the attributes declare ``_FillValue`` or
    ``missing_value``. Sparse matrices read dense, window by window, when
    indexed. A missing unnamed dimension is not an error.
    """

    description = "Open N5, Zarr, datg, Daf, BPCells and npy datasets through stowage's plugins"
    url = "https://github.com/stowage/stowage/tree/main/python"
    open_dataset_parameters = (
        "filename_or_obj", "drop_variables", "mask_and_scale", "decode_times", "concat_characters",
        "decode_coords", "use_cftime", "decode_timedelta", "group", "format", "storage_options",
        "plugin_path", "options")

    def open_dataset(  # type: ignore[override]  # keyword-only options, as xarray's own engines
            self, filename_or_obj: PathLike | Store | Node, *, drop_variables: str | Iterable[str] | None = None,
            mask_and_scale: bool = True, decode_times: bool = True, concat_characters: bool = True,
            decode_coords: bool | Literal["coordinates", "all"] = True, use_cftime: bool | None = None,
            decode_timedelta: bool | None = None, group: str | None = None, format: str | None = None,  # noqa: A002
            storage_options: Mapping[str, Any] | None = None, plugin_path: Sequence[PathLike] | None = None,
            options: Mapping[str, Any] | None = None) -> xarray.Dataset:
        """What ``xr.open_dataset(filename_or_obj, engine="stowage", ...)``
        calls: the node as a lazy Dataset, CF-decoded; a store this call
        opened is closed by the Dataset's ``close()``.

            >>> StowageBackendEntrypoint().open_dataset("counts.bpcells")["__xarray_dataarray_variable__"]
        """
        node, opened = _resolve(filename_or_obj, group, format, storage_options, plugin_path, options)
        try:
            ds = open_node(node, drop_variables=drop_variables, mask_and_scale=mask_and_scale,
                           decode_times=decode_times, concat_characters=concat_characters,
                           decode_coords=decode_coords, use_cftime=use_cftime, decode_timedelta=decode_timedelta)
        except BaseException:
            if opened is not None:
                opened.close()
            raise
        if opened is not None:
            ds.set_close(opened.close)
        return ds

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        """True for paths ending in .n5, .datg, .daf or .bpcells (``.zarr``
        stays xarray's zarr engine's; pass ``engine="stowage"`` for it)."""
        import os

        try:
            ext = os.path.splitext(os.fspath(filename_or_obj).rstrip("/"))[1]
        except TypeError:
            return isinstance(filename_or_obj, (Store, Group, Array, Sparse, Strings))
        return ext in {".n5", ".datg", ".daf", ".bpcells"}


def _resolve(obj: Any, group: str | None, format: str | None,  # noqa: A002
             storage_options: Mapping[str, Any] | None, plugin_path: Sequence[PathLike] | None,
             options: Mapping[str, Any] | None) -> tuple[Node, Store | None]:
    """The node to open and the store this call opened (None: the caller's)."""
    opened = None
    if isinstance(obj, Store):
        base = ""
    elif isinstance(obj, (Group, Array, Sparse, Strings)):
        obj, base = obj.store, obj.node
    else:
        obj = opened = _open(obj, "r", format, plugin_path=plugin_path, options=options,
                             storage_options=storage_options)
        base = ""
    try:
        return obj[_join(base, group or "")], opened
    except BaseException:
        if opened is not None:
            opened.close()
        raise
