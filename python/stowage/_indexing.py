"""Selections beyond integers and slices, as zarr-python's: orthogonal
(``oindex``), coordinate (``vindex``) and mask selections of an
:class:`~stowage.Array`.

Nothing here reads an element at a time. An orthogonal selection reads, per
axis, runs of the chunks its indices touch (one box per combination of runs,
a few boxes at most) and picks from them with numpy; coordinates and masks
read their bounding box when it is mostly touched chunks, otherwise the part
of each touched chunk they fall in. Writes read and rewrite the same boxes.
"""

from __future__ import annotations

import contextlib
import itertools
import operator
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import numpy as np
import numpy.typing as npt

from . import _core

if TYPE_CHECKING:
    from ._nodes import Array

# What an axis of an orthogonal selection picks: a slice's range, or int64
# positions; and whether an integer index dropped the axis.
Positions: TypeAlias = "range | npt.NDArray[np.int64]"
Axis: TypeAlias = "tuple[Positions, bool]"

__all__ = ["OIndex", "VIndex", "kind_of", "named_index_errors"]

_MAX_BOXES = 64  # boxes one orthogonal selection reads at most (runs are merged past it)


def empty(shape: Sequence[int], dtype: npt.DTypeLike) -> npt.NDArray[Any]:
    """A new C-order array for a read to fill, as ``np.empty``. Arrays of 4
    MiB and more take memory from a pool of recently freed ones
    (python/src/buffer_pool.hpp): the kernel zero-fills fresh pages, which
    costs as much as a warm read of raw chunks."""
    dt = np.dtype(dtype)
    if dt.hasobject:
        return np.empty(shape, dt)
    return cast("npt.NDArray[Any]", _core._empty([operator.index(n) for n in shape], dt))


@contextlib.contextmanager
def named_index_errors(where: str) -> Iterator[None]:
    """Re-raise an IndexError with the array's path in front of its message."""
    try:
        yield
    except IndexError as e:
        raise IndexError(f"{where}: {e}") from None


# ---- what kind of selection ----------------------------------------------------------


def _is_array_like(k: Any) -> bool:
    return isinstance(k, list) or (isinstance(k, np.ndarray) and k.ndim > 0)  # a 0-d array is a scalar


def _as_index_array(k: Any) -> npt.NDArray[Any]:
    a = np.asarray(k)
    if a.size == 0 and a.dtype.kind not in "biu":  # [] is float64 to numpy
        a = a.astype(np.int64)
    if a.dtype.kind not in "biu":
        raise IndexError(f"index arrays must hold integers or booleans, not {a.dtype}")
    return a


def _is_int_array(k: Any) -> bool:
    return _is_array_like(k) and _as_index_array(k).dtype.kind in "iu"


def _is_int(k: Any) -> bool:
    return not isinstance(k, (bool, np.bool_)) and isinstance(k, (int, np.integer))


def kind_of(key: Any, ndim: int) -> str:
    """``"basic"`` (integers, slices, ``...``), ``"coordinate"`` (only
    integers and integer arrays, one per axis: zarr-python's "pure fancy
    indexing", which ``z[...]`` sends to ``vindex``), ``"mask"`` (one
    boolean array of the array's rank) or ``"orthogonal"`` (any other mix
    with arrays: ``oindex``)."""
    if isinstance(key, tuple) and len(key) == 1 and _is_array_like(key[0]):
        key = key[0]
    if _is_array_like(key):
        a = _as_index_array(key)
        if a.dtype.kind == "b":
            return "mask" if a.ndim == ndim and ndim > 1 else "orthogonal"
        return "coordinate" if ndim == 1 else "orthogonal"
    parts = key if isinstance(key, tuple) else (key,)
    if not any(_is_array_like(k) for k in parts):
        return "basic"
    if len(parts) == ndim and all(_is_int(k) or _is_int_array(k) for k in parts):
        return "coordinate"
    return "orthogonal"


# ---- orthogonal selections -----------------------------------------------------------


def orthogonal_axes(key: Any, shape: Sequence[int]) -> list[Axis]:
    """One ``(positions, dropped)`` per axis: what the axis selects, in
    order (a ``range`` for a slice, else int64 positions, duplicates kept),
    and whether an integer dropped it."""
    parts = list(key) if isinstance(key, tuple) else [key]
    if sum(k is Ellipsis for k in parts) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if any(k is Ellipsis for k in parts):
        i = next(i for i, k in enumerate(parts) if k is Ellipsis)
        parts[i : i + 1] = [slice(None)] * (len(shape) - len(parts) + 1)
    if len(parts) > len(shape):
        raise IndexError(f"too many indices for an array of {len(shape)} dimensions")
    parts += [slice(None)] * (len(shape) - len(parts))
    return [_axis(k, n, d) for d, (k, n) in enumerate(zip(parts, shape))]


def _axis(k: Any, n: int, d: int) -> Axis:
    if isinstance(k, slice):
        return range(*k.indices(n)), False  # not an array: an axis may be longer than memory allows
    if _is_array_like(k):
        a = _as_index_array(k)
        if a.ndim != 1:
            raise IndexError(f"an orthogonal selection takes 1-d index arrays; axis {d} got {a.ndim} dimensions")
        if a.dtype.kind == "b":
            if a.shape[0] != n:
                raise IndexError(f"boolean index of length {a.shape[0]} does not match axis {d} with size {n}")
            return np.flatnonzero(a).astype(np.int64), False
        return _in_bounds(a.astype(np.int64), n, d), False
    try:
        i = operator.index(k)
    except TypeError:
        raise IndexError("stowage arrays take integers, slices, '...', integer arrays and boolean arrays "
                         f"as indices, not {type(k).__name__}") from None
    return _in_bounds(np.array([i], np.int64), n, d), True


def _in_bounds(a: npt.NDArray[np.int64], n: int, d: int) -> npt.NDArray[np.int64]:
    bad = (a < -n) | (a >= n)
    if bad.any():
        raise IndexError(f"index {int(a[np.argmax(bad)])} is out of bounds for axis {d} with size {n}")
    return np.where(a < 0, a + n, a)


def _runs(positions: Positions, chunk: int) -> list[tuple[int, int]]:
    """[lo, hi) ranges covering ``positions``, split where a whole chunk
    between two of them is not touched (reading it would be wasted). A
    slice is one range, as ``a[::k]`` reads (its bounding box)."""
    if isinstance(positions, range):
        return [(min(positions), max(positions) + 1)] if len(positions) else []
    u = np.unique(positions)
    if u.size == 0:
        return []
    k = u // chunk
    cut = np.flatnonzero(np.diff(k) > 1) + 1
    # numpy 1.24's stubs refuse a list beside an array; numpy takes it.
    starts: npt.NDArray[np.intp] = np.concatenate(([0], cut))  # type: ignore[arg-type]
    ends: npt.NDArray[np.intp] = np.concatenate((cut, [u.size]))  # type: ignore[arg-type]
    return [(int(u[s]), int(u[e - 1]) + 1) for s, e in zip(starts, ends)]


def _merge_runs(runs: list[tuple[int, int]], target: int) -> list[tuple[int, int]]:
    """Merge the runs separated by the smallest gaps until ``target`` are
    left: cut only at the ``target - 1`` largest gaps."""
    gaps = np.array([runs[i + 1][0] - runs[i][1] for i in range(len(runs) - 1)])
    cuts: Any = np.sort(np.argsort(gaps, kind="stable")[len(gaps) - (target - 1) :]) if target > 1 else []
    out, start = [], 0
    for c in cuts:
        out.append((runs[start][0], runs[c][1]))
        start = c + 1
    out.append((runs[start][0], runs[-1][1]))
    return out


def _boxes_runs(axes: list[Axis], chunks: Sequence[int]) -> list[list[tuple[int, int]]]:
    runs = [_runs(p, c) for (p, _), c in zip(axes, chunks)]
    while int(np.prod([len(r) for r in runs], dtype=np.float64)) > _MAX_BOXES:
        d = max(range(len(runs)), key=lambda i: len(runs[i]))
        runs[d] = _merge_runs(runs[d], max(1, len(runs[d]) // 2))
    return runs


def _pieces(axes: list[Axis], chunks: Sequence[int]) -> Iterator[tuple[list[int], list[int], list[Any], list[Any]]]:
    """For each box: its offset, its counts, and per axis where the box's
    elements go in the selection and which to pick from it: a slice for a
    slice axis (one box holds it all), positions for an array's."""
    for combo in itertools.product(*_boxes_runs(axes, chunks)):
        inner, outer = [], []  # type: list[Any], list[Any]
        for (p, _), (lo, hi) in zip(axes, combo):
            if isinstance(p, range):
                inner.append(slice(p[0] - lo, None, p.step))
                outer.append(slice(None))
                continue
            where = np.flatnonzero((p >= lo) & (p < hi))
            inner.append(p[where] - lo)
            outer.append(where)
        yield [lo for lo, _ in combo], [hi - lo for lo, hi in combo], inner, outer


def _take(box: npt.NDArray[Any], inner: list[Any]) -> npt.NDArray[Any]:
    for d, pos in enumerate(inner):
        if isinstance(pos, slice):
            box = box[(slice(None),) * d + (pos,)]
        elif not (pos.size == box.shape[d] and (pos.size == 0 or (pos[0] == 0 and np.all(np.diff(pos) == 1)))):
            box = np.take(box, pos, axis=d)
    return box


def _ix(index: Sequence[Any], shape: Sequence[int]) -> tuple[npt.NDArray[Any], ...]:
    """``numpy.ix_`` of positions and slices (made positions over ``shape``)."""
    return np.ix_(*[np.arange(n)[i] if isinstance(i, slice) else i for i, n in zip(index, shape)])


def read_orthogonal(array: Array, key: Any) -> npt.NDArray[Any]:
    axes = orthogonal_axes(key, array.shape)
    full = tuple(len(p) for p, _ in axes)
    out: Any = None
    if 0 not in full:
        for offset, counts, inner, outer in _pieces(axes, array.chunks):
            box = empty(counts, array.dtype)
            array._core.read(offset, counts, box)
            picked = _take(box, inner)
            if out is None and picked.shape == full:
                out = picked
            else:
                out = empty(full, array.dtype) if out is None else out
                out[_ix(outer, full)] = picked
    out = empty(full, array.dtype) if out is None else out
    out = out[tuple(0 if drop else slice(None) for _, drop in axes) + (Ellipsis,)]
    return np.ascontiguousarray(out)


def _covers(pos: slice | npt.NDArray[np.int64], n: int) -> bool:
    """Whether picking ``pos`` from an axis of ``n`` touches every element."""
    return abs(pos.step) == 1 if isinstance(pos, slice) else np.unique(pos).size == n


def write_orthogonal(array: Array, key: Any, values: npt.ArrayLike) -> None:
    """``values``: already checked against the array's dtype."""
    axes = orthogonal_axes(key, array.shape)
    full = tuple(len(p) for p, _ in axes)
    kept = tuple(n for n, (_, drop) in zip(full, axes) if not drop)
    values = np.broadcast_to(values, kept).reshape(full)
    if 0 in full:
        return
    for offset, counts, inner, outer in _pieces(axes, array.chunks):
        box = empty(counts, array.dtype)
        if not all(_covers(pos, n) for pos, n in zip(inner, counts)):
            array._core.read(offset, counts, box)  # elements between the picked ones are kept
        box[_ix(inner, counts)] = values[_ix(outer, full)]
        array._core.write(offset, counts, box)


# ---- coordinates and masks -----------------------------------------------------------


def coordinates(key: Any, shape: Sequence[int]) -> tuple[list[npt.NDArray[np.int64]], tuple[int, ...]]:
    """zarr's coordinate selection: one integer (array) per axis, broadcast
    together. Returns the flat in-bounds coordinates and the result's shape."""
    parts = key if isinstance(key, tuple) else (key,)
    if len(parts) != len(shape) or not all(_is_int(k) or _is_int_array(k) for k in parts):
        raise IndexError("a coordinate selection takes one integer or integer array per axis "
                         f"({len(shape)} for this array), as zarr's vindex; got {key!r}")
    arrays = np.broadcast_arrays(*[np.asarray(k, dtype=np.int64) for k in parts])
    out_shape = arrays[0].shape if arrays else ()
    flat = [_in_bounds(a.reshape(-1), n, d) for d, (a, n) in enumerate(zip(arrays, shape))]
    return flat, out_shape


def mask_coordinates(mask: Any, shape: Sequence[int]) -> tuple[list[npt.NDArray[np.int64]], tuple[int, ...]]:
    """zarr's mask selection: a boolean array of the array's shape."""
    if isinstance(mask, tuple) and len(mask) == 1:
        mask = mask[0]
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise IndexError(f"a mask selection takes a boolean array, not {mask.dtype}")
    if mask.shape != tuple(shape):
        raise IndexError(f"the mask's shape {mask.shape} is not the array's shape {tuple(shape)}")
    flat = [c.astype(np.int64) for c in np.nonzero(mask)]
    return flat, (flat[0].size if flat else int(mask.sum()),)


def _point_groups(flat: list[npt.NDArray[np.int64]], shape: Sequence[int],
                  chunks: Sequence[int]) -> Iterator[tuple[list[int], list[int], npt.NDArray[np.intp]]]:
    """(offset, counts, point indices) of each box to read: the bounding box
    when touched chunks fill at least half of it, else one box per touched
    chunk (the points' bounding box inside it)."""
    n = flat[0].size if flat else 1
    if not flat:
        yield [], [], np.arange(n)
        return
    lo = [int(c.min()) for c in flat]
    hi = [int(c.max()) + 1 for c in flat]
    grid = [-(-n // k) for n, k in zip(shape, chunks)]
    ids = np.ravel_multi_index([c // k for c, k in zip(flat, chunks)], grid)  # a chunk's number
    touched, which = np.unique(ids, return_inverse=True)
    box = np.prod([h - low for low, h in zip(lo, hi)], dtype=np.float64)
    if box <= 2 * len(touched) * np.prod(chunks, dtype=np.float64):
        yield lo, [h - low for low, h in zip(lo, hi)], np.arange(n)
        return
    order = np.argsort(which, kind="stable")
    bounds = np.searchsorted(which[order], np.arange(len(touched) + 1))
    for g in range(len(touched)):
        points = order[bounds[g] : bounds[g + 1]]
        glo = [int(c[points].min()) for c in flat]
        ghi = [int(c[points].max()) + 1 for c in flat]
        yield glo, [h - low for low, h in zip(glo, ghi)], points


def read_points(array: Array, flat: list[npt.NDArray[np.int64]], out_shape: tuple[int, ...]) -> npt.NDArray[Any]:
    if len(flat) == 1:  # one axis: an orthogonal selection, read in a bounded number of boxes
        return read_orthogonal(array, flat[0]).reshape(out_shape)
    out = empty([flat[0].size if flat else 1], array.dtype)
    if out.size:
        for offset, counts, points in _point_groups(flat, array.shape, array.chunks):
            box = empty(counts, array.dtype)
            array._core.read(offset, counts, box)
            out[points] = box[tuple(c[points] - o for c, o in zip(flat, offset))]
    return out.reshape(out_shape)


def write_points(array: Array, flat: list[npt.NDArray[np.int64]], out_shape: tuple[int, ...],
                 values: npt.ArrayLike) -> None:
    values = np.broadcast_to(values, out_shape).reshape(-1)
    if len(flat) == 1:
        return write_orthogonal(array, flat[0], values)
    if not values.size:
        return
    for offset, counts, points in _point_groups(flat, array.shape, array.chunks):
        box = empty(counts, array.dtype)
        array._core.read(offset, counts, box)  # the points rarely cover their box
        box[tuple(c[points] - o for c, o in zip(flat, offset))] = values[points]
        array._core.write(offset, counts, box)


# ---- a.oindex[...] and a.vindex[...] ------------------------------------------------


class OIndex:
    """``a.oindex[sel]`` / ``a.oindex[sel] = v``: orthogonal selection, as
    zarr-python's (each axis indexed on its own: integers, slices of any
    step, integer arrays, boolean arrays).

    >>> a.oindex[[0, 2], :]          # rows 0 and 2
    >>> a.oindex[[True, False, True], [1, 3]] = 0
    """

    def __init__(self, array: Array) -> None:
        self.array = array

    def __getitem__(self, selection: Any) -> npt.NDArray[Any]:
        return self.array.get_orthogonal_selection(selection)

    def __setitem__(self, selection: Any, value: npt.ArrayLike) -> None:
        self.array.set_orthogonal_selection(selection, value)


class VIndex:
    """``a.vindex[sel]`` / ``a.vindex[sel] = v``: coordinate selection (one
    integer array per axis, broadcast together) or mask selection (one
    boolean array of the array's shape), as zarr-python's.

    >>> a.vindex[[0, 2], [1, 3]]      # the elements (0, 1) and (2, 3)
    >>> a.vindex[a[...] > 5] = 5
    """

    def __init__(self, array: Array) -> None:
        self.array = array

    def _is_mask(self, selection: Any) -> bool:
        return kind_of(selection, self.array.ndim) == "mask" or (
            self.array.ndim == 1 and _is_array_like(selection) and _as_index_array(selection).dtype == bool)

    def __getitem__(self, selection: Any) -> npt.NDArray[Any]:
        if self._is_mask(selection):
            return self.array.get_mask_selection(selection)
        return self.array.get_coordinate_selection(selection)

    def __setitem__(self, selection: Any, value: npt.ArrayLike) -> None:
        if self._is_mask(selection):
            self.array.set_mask_selection(selection, value)
        else:
            self.array.set_coordinate_selection(selection, value)
