"""stowage.to_store: a dask array written into a new or existing array of any
format, in parallel on whatever dask scheduler is active (imported only when
used: dask is not a dependency of the package)."""

from __future__ import annotations

import operator
import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

import numpy as np
import numpy.typing as npt

from ._errors import InvalidArgumentError
from ._hierarchy import _guess_chunks, where
from ._nodes import Array, Dims, Group, PathLike, Store, _join, _reopen_node
from ._nodes import open as _open

__all__ = ["to_store"]

_MODES = ("w", "w+", "r+", "a")


def to_store(x: Any, url: PathLike, node: str = "", *, format: str | None = None,  # noqa: A002
             compression: str | Mapping[str, Any] | None = None, chunks: Sequence[int] | None = None,
             shards: Sequence[int] | None = None, mode: Literal["w", "w+", "r+", "a"] = "w",
             storage_options: Mapping[str, Any] | None = None, attrs: Mapping[str, Any] | None = None,
             dims: Dims | None = None, compute: bool = True, zarr_version: Literal[2, 3] | None = None,
             options: Mapping[str, Any] | None = None,
             plugin_path: Sequence[PathLike] | None = None) -> Any:  # the Array; dask's Delayed if not compute
    """Write a dask array (or a numpy array) into the array ``node`` of the
    dataset at ``url``, creating it, in parallel on the active dask scheduler
    (threads, processes or a ``dask.distributed`` client), as
    ``dask.array.to_zarr`` does for zarr-python::

        x = dask.array.random.random((256, 1024, 1024), chunks=(64, 256, 256)).astype("float32")
        stowage.to_store(x, "volume.n5", "raw/s0", compression="blosc")
        stowage.to_store(x, "s3://bucket/volume.zarr", "raw", chunks=(64, 64, 64), shards=(128, 256, 256),
                         storage_options={"endpoint": "http://127.0.0.1:7480"})

    The new array takes ``x``'s shape and dtype; ``chunks`` (C order)
    defaults to ``x``'s chunks when they are regular (as ``to_zarr``), else
    to zarr-python's ``guess_chunks``, as :meth:`Store.create_array`'s.
    ``shards``: the shard shape
    (Zarr v3's ``sharding_indexed``, a multiple of ``chunks``).
    ``compression``, ``attrs``, ``dims``: as :meth:`Store.create_array`.
    ``format`` (``None``: from the extension), ``options``,
    ``storage_options``, ``plugin_path``: as :func:`stowage.open`;
    ``zarr_version=2`` is ``options={"zarr_version": 2}``.

    ``x`` is rechunked so that each task writes whole chunks (whole shards
    when sharded): no two tasks ever write one chunk or shard, so workers
    in several processes or machines need no lock (blocks already on those
    boundaries are kept as they are).

    ``mode``: ``"w"`` (default) creates the dataset, replacing one of its
    format at ``url``, as a transaction: the workers write where it is
    built and ``to_store`` publishes it (:meth:`Store.close`) once every
    task has returned; a failed task publishes nothing and the old dataset
    stays. ``"r+"`` (``"a"``, ``"w+"``: the same on an existing dataset)
    writes into the existing array ``node`` (its shape must be ``x``'s; its
    chunks, shards and codec are its own) or creates it in the dataset.
    Values are cast by numpy's ``"same_kind"`` rule with each checked to
    fit (:meth:`Array.set`). Returns the written :class:`Array`, opened for
    reading (``to_zarr`` returns None).

    ``compute=False`` returns a ``dask.delayed.Delayed`` that writes the
    values when computed (``dask.array.store``'s); as ``to_zarr``, the array
    is created now, published and holding its fill value until then (so
    only formats whose writes are published as they return, N5 and Zarr).

    The lower-level way, into an array that exists: ``dask.array.store(x,
    array, lock=False)`` with ``x`` chunked on the array's chunks (or
    shards); blocks that cut across chunks are merged with what is stored,
    which is safe within one process and on local disk, and refused
    (naming the shape to align to) from several processes on S3.
    """
    import dask.array

    if mode not in _MODES:
        raise InvalidArgumentError(f"to_store's mode is one of {', '.join(_MODES)}, not {mode!r}")
    if not isinstance(x, dask.array.Array):
        x = np.asarray(x)
    if any(np.isnan(n) for n in x.shape):
        raise InvalidArgumentError(f"{url}: to_store needs known chunk sizes (x.compute_chunk_sizes() first)")
    if zarr_version is not None:
        options = {**(options or {}), "zarr_version": operator.index(zarr_version)}
    store = _open(url, mode, format, plugin_path=plugin_path, options=options, storage_options=storage_options)
    try:
        array = _destination(store, node, x, chunks, shards, compression, attrs, dims)
        blocks = _task_blocks(x, array)
        if not compute:
            return _delayed_write(store, array, blocks)
        # dask types a target as array-like; it takes anything with __setitem__.
        writer = _BlockWriter(array, store._core.staging_location)
        dask.array.store(blocks, writer, lock=False)  # type: ignore[arg-type]
    except BaseException:  # KeyboardInterrupt included: a "w" store publishes nothing
        store.discard()
        raise
    store.close()
    return _open(url, "r", store.format, plugin_path=plugin_path, options=options,
                 storage_options=storage_options)[node]


def _delayed_write(store: Store, array: Array, blocks: Any) -> Any:
    """dask.array.store's Delayed over the published array: the store that
    created it cannot be closed from a task (a task may run in another
    process), so it is closed now and the tasks write into what it published."""
    import dask.array

    if not store._shared_writes:
        raise InvalidArgumentError(
            f"{store.path}: compute=False needs a format whose writes are published as they return "
            f"(n5, zarr); {store.format} publishes at close, which a Delayed cannot do. Use compute=True")
    store.close()
    target = _open(store.path, "r+", store.format, plugin_path=store.plugin_path, options=store._options)[array.node]
    writer = _BlockWriter(cast(Array, target))
    return dask.array.store(blocks, writer, lock=False, compute=False)  # type: ignore[arg-type]


def _destination(store: Store, node: str, x: Any, chunks: Sequence[int] | None, shards: Sequence[int] | None,
                 compression: str | Mapping[str, Any] | None, attrs: Mapping[str, Any] | None,
                 dims: Dims | None) -> Array:
    """The array ``node`` of ``store``: made for ``x``, or the existing one,
    checked to take ``x``."""
    node = _join("", node)
    if node in store and not _empty_root(store, node):
        return _existing(store, node, x, chunks, shards, compression, attrs, dims)
    if chunks is None:
        chunks = _default_chunks(x, shards, where(store, node))
    return store.create_array(node, x.shape, x.dtype, chunks=chunks, compression=compression, attrs=attrs,
                              dims=dims, shards=shards)


def _empty_root(store: Store, node: str) -> bool:
    """A new dataset's root: an empty group, which an array at "" replaces."""
    return not node and isinstance(store[""], Group) and not store.keys()


def _existing(store: Store, node: str, x: Any, chunks: Sequence[int] | None, shards: Sequence[int] | None,
              compression: str | Mapping[str, Any] | None, attrs: Mapping[str, Any] | None,
              dims: Dims | None) -> Array:
    at = where(store, node)
    array = store[node]
    if not isinstance(array, Array):
        raise InvalidArgumentError(f"{at}: is a {type(array).__name__.lower()}, not an array to write into")
    if tuple(array.shape) != tuple(x.shape):
        raise InvalidArgumentError(f"{at}: the array has shape {array.shape}, the values to write {x.shape}; "
                                   "write a region with dask.array.store(..., regions=), or use mode 'w'")
    if not np.can_cast(x.dtype, array.dtype, "same_kind"):
        raise InvalidArgumentError(f"{at}: cannot write {x.dtype} values into a {array.dtype} array under "
                                   "casting='same_kind' (numpy's rule); nothing was written")
    given = {"chunks": (chunks, array.chunks), "shards": (shards, array._info.get("shards"))}
    for name, (want, have) in given.items():
        if want is not None and (have is None or tuple(want) != tuple(have)):
            raise InvalidArgumentError(f"{at}: the array exists with {name} {have}, not {tuple(want)}; "
                                       f"leave {name}= out, or use mode 'w' to make it anew")
    for name, value in (("compression", compression), ("dims", dims)):
        if value is not None:
            raise InvalidArgumentError(f"{at}: the array exists, its {name} are set; leave {name}= out, "
                                       "or use mode 'w' to make it anew")
    if attrs:
        array.attrs.update(attrs)
    return array


def _regular(chunks: tuple[tuple[int, ...], ...]) -> bool:
    """dask's rule (to_zarr's): every block of an axis the same size but the last, which may be smaller."""
    return all(len(c) == 1 or (len(set(c[:-1])) == 1 and c[-1] <= c[0]) for c in chunks)


def _default_chunks(x: Any, shards: Sequence[int] | None, at: str) -> tuple[int, ...]:
    own = getattr(x, "chunks", None)
    if own is not None and _regular(own):
        chunks = tuple(max(1, c[0]) for c in own)
    else:
        chunks = tuple(_guess_chunks(x.shape, x.dtype.itemsize))
    if shards is not None and any(s % c for s, c in zip(shards, chunks)):
        raise InvalidArgumentError(f"{at}: the chunks {chunks} (x's own or the default) do not divide the "
                                   f"shards {tuple(shards)}; give chunks=")
    return chunks


def _task_blocks(x: Any, array: Array) -> Any:  # a dask.array.Array
    """``x`` as a dask array whose blocks cover whole units (the array's
    shards, or chunks): each unit is written by one task. Blocks already on
    unit boundaries are kept; others become the multiple of the unit
    nearest to x's typical block."""
    import dask.array

    unit = tuple(array._info.get("shards") or array.chunks)
    if not isinstance(x, dask.array.Array):
        return dask.array.from_array(x, chunks=_multiples(x.shape, x.dtype, unit))
    if all(_on_boundaries(c, u) for c, u in zip(x.chunks, unit)):
        return x
    typical = tuple(max(c) if c else 1 for c in x.chunks)
    return x.rechunk(tuple(max(1, round(t / u)) * u for t, u in zip(typical, unit)))


def _on_boundaries(blocks: tuple[int, ...], unit: int) -> bool:
    edge = 0
    for b in blocks[:-1]:
        edge += b
        if edge % unit:
            return False
    return True


def _multiples(shape: tuple[int, ...], dtype: np.dtype[Any], unit: tuple[int, ...]) -> tuple[int, ...]:
    """Blocks of a numpy array: dask's "auto" size (array.chunk-size), rounded
    down to a multiple of the unit."""
    from dask.array.core import normalize_chunks

    blocks = normalize_chunks("auto", shape, dtype=dtype, previous_chunks=unit)
    return tuple(max(1, b[0] // u) * u for b, u in zip(blocks, unit))


class _BlockWriter:
    """dask.array.store's target: each block goes to :meth:`Array.write` at
    its offset, so a C-contiguous block of the array's dtype is written
    without the copy ``Array.__setitem__`` makes.

    It pickles as its array's store arguments and reopens the store at its
    first write, not when unpickled: when a task fails, to_store discards
    the dataset being built while tasks are still sent to workers, and an
    unpickling error there closes the worker's connection (distributed
    2022.12 drops the worker) where a task's error is only reported."""

    def __init__(self, array: Array, staging: str = "") -> None:
        self._array: Array | None = array
        self._reopen_args: Any = None  # (store arguments, node) once pickled
        self.shape = array.shape
        self.dtype = array.dtype
        self.ndim = array.ndim
        self.path = array.store.path
        # A local dataset being built by several processes (n5, zarr): tasks still running
        # when to_store discarded it must not make its directory again.
        shared = staging and "://" not in staging and array.store._shared_writes
        self.staging = staging if shared else ""

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        if self._array is not None:  # in the client: the store's pickle arguments (checked now)
            state["_reopen_args"] = (self._array.store._args(), self._array.node)
        state["_array"] = None
        return state

    def __setitem__(self, region: tuple[slice, ...], values: npt.ArrayLike) -> None:
        if self.staging and not os.path.exists(self.staging):
            raise InvalidArgumentError(f"{self.path}: the dataset being written was discarded "
                                       "(another task failed); this block was not written")
        if self._array is None:
            self._array = cast(Array, _reopen_node(*self._reopen_args))
        self._array.write(values, [s.start or 0 for s in region])
