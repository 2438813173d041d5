"""Stores and the nodes inside them: Group, Array, Sparse, Strings, Records.

Every object here is a view on a node of an open store (``_core.Store``,
the C++ ``stowage::Store``); the values stay on disk until indexed.
Objects pickle as (path, format, mode, node, plugin_path) and reopen the
store where they are unpickled, so dask workers and DataLoader workers can
receive them; a store opened with ``mode="w"`` reopens as ``"r+"`` (a worker
must not truncate what the client made), on its staging directory while it
is being created. A writable store of a format that takes one writer at a
time (every format but N5 and Zarr) does not pickle.
"""

from __future__ import annotations

import contextlib
import json
import operator
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast, overload

import numpy as np
import numpy.typing as npt

from . import _core, _indexing
from ._errors import CorruptError, InvalidArgumentError, NodeNotFoundError, NotFoundError, UnsupportedError
from ._hierarchy import Hierarchy, where
from ._hierarchy import join as _join

__all__ = ["open", "Store", "Group", "Array", "Sparse", "Strings", "Records", "Attributes"]

_KINDS: dict[str, type[Node]] = {}  # node kind ("array", ...) -> the class showing it

if TYPE_CHECKING:
    import os

# The types of the public API (py.typed: these annotations are the stubs).
PathLike: TypeAlias = "str | os.PathLike[str]"
Mode: TypeAlias = Literal["r", "r+", "w", "w+", "a"]
Casting: TypeAlias = Literal["no", "equiv", "safe", "same_kind", "unsafe"]
Node: TypeAlias = "Group | Array | Sparse | Strings | Records"
# A dimension: its name, or (name, labels).
Dims: TypeAlias = "Sequence[str | None | tuple[str | None, Iterable[Any] | None]]"




# ---- opening and reopening ------------------------------------------------------


def open(path: PathLike, mode: Mode = "r", format: str | None = None, *,  # noqa: A001 (as builtins.open)
         plugin_path: Sequence[PathLike] | None = None, options: Mapping[str, Any] | None = None,
         storage_options: Mapping[str, Any] | None = None) -> Store:
    """Open a dataset and return its :class:`Store`.

    ``path``: a file or directory (``os.PathLike`` accepted). ``mode``:
    ``"r"`` read, ``"r+"`` read and write an existing dataset, ``"w"``
    create (replacing what is there), ``"w+"`` create if absent, ``"a"``
    zarr-python's: read and write, created if absent, in place (see below).
    ``format``: a format id (``"n5"``, ``"datg"``, ``"daf"``, ``"bpcells"``,
    ``"datadings"``, ``"npy"``); ``None`` detects it (when reading) or takes
    it from the extension (when creating). ``plugin_path``: directories
    searched for plugins before ``STOWAGE_PLUGIN_PATH`` and the installed
    ones. ``options``: a dict passed to the format plugin.
    ``storage_options``: a dict for the storage backend of the path, as
    fsspec's (``{"timeout_ms": 5000, "retries": 1}`` for http;
    ``stowage.plugin_detail("http")["params_schema"]`` lists a backend's): an
    unknown key or a bad value raises naming the valid ones. They travel with
    the store when it is pickled (into dask workers), secrets included.

    >>> store = stowage.open("volume.n5")
    >>> with stowage.open("copy.zarr", "w") as out:
    ...     out.create_array("raw", data=store["raw/s0"][...])
    """
    path = _fspath(path)
    if mode == "a":
        return _open_in_place(path, format, plugin_path, options, storage_options)
    if storage_options:
        options = dict(options or {})
        options["storage"] = dict(storage_options)
    paths = None if plugin_path is None else [_fspath(p) for p in plugin_path]
    try:
        core = _core.Store.open(path, mode, format, options, paths)
    except NotFoundError as e:
        building = _building.get(path)
        if building is None or building.closed:
            raise
        raise NotFoundError(f"{path}: not published yet: a store opened in mode 'w' in this process is "
                            f"building it; close it (or end its with block) to publish it") from e
    store = Store(core, mode, paths, options)
    if core.staging_location:
        _building[path] = store
    return store


def _open_in_place(path: str, format: str | None, plugin_path: Sequence[PathLike] | None,
                   options: Mapping[str, Any] | None, storage_options: Mapping[str, Any] | None) -> Store:
    """Mode "a", as zarr-python's: the dataset opened "r+", or, where there
    is none, created empty and published at once, then opened "r+", so each
    write is published when it returns and nothing waits for a close. A
    format that publishes only at close (npy, datg) stays a "w+" store."""
    kw: dict[str, Any] = {"plugin_path": plugin_path, "storage_options": storage_options}
    try:
        return open(path, "r+", format, options=options, **kw)
    except NotFoundError:
        pass
    new = open(path, "w+", format, options=options, **kw)
    if not new._shared_writes:
        return new
    new.close()
    return open(path, "r+", format, options=options, **kw)


# Stores of this process being built ("w"), by path: a read of that path
# finds nothing until close, and is told why (zarr-python writes in place,
# so its users read before closing).
_building: weakref.WeakValueDictionary[str, Store] = weakref.WeakValueDictionary()


def _fspath(p: PathLike) -> str:
    import os

    return os.fsdecode(os.fspath(p))


# Stores reopened by unpickling, per process: each task of a dask graph
# unpickles its Array, and reopening the dataset for every task would read
# its metadata again and again.
_reopened: dict[tuple[Any, ...], Store] = {}
_reopened_lock = threading.Lock()


def _reopen(path: str, format: str, mode: Mode, plugin_path: list[str] | None, options: Mapping[str, Any] | None,
            staging: str | None = None) -> Store:
    key = (path, format, mode, tuple(plugin_path or ()), repr(options), staging)
    if mode != "r":  # one of several writing processes: the core refuses what would undo another's part
        options = {**(options or {}), "shared_writers": True}
    with _reopened_lock:
        store = _reopened.get(key)
        if store is None:
            if staging:  # a "w" store still being created: its writers write where it is built
                core = _core.Store.open_staged(path, staging, format, options, plugin_path)
                store = Store(core, mode, plugin_path, options)
            else:
                store = open(path, mode, format, plugin_path=plugin_path, options=options)
            _reopened[key] = store
        return store


def _reopen_node(store_args: tuple[Any, ...], node: str) -> Node:
    return _reopen(*store_args)[node]


class Store(Hierarchy):
    """An open dataset: a tree of nodes with JSON attributes.

    ``store["a/b"]`` is the node at that path (a :class:`Group`,
    :class:`Array`, :class:`Sparse`, :class:`Strings` or :class:`Records`);
    ``store[""]`` is the root, which for a single-array dataset (datg,
    BPCells, npy) is that array. Iterating gives the root's child names.
    Use it as a context manager, or call :meth:`close`, when writing.

    Mode ``"w"`` (and ``"w+"`` of a new path) is a transaction: the dataset
    is built in a hidden directory beside the path and replaces what was
    there only when :meth:`close` (or the end of a ``with`` block) completes.
    An exception in the block (``KeyboardInterrupt`` included), a failed
    close, :meth:`discard`, or a store garbage-collected or left at exit
    unclosed publish nothing: the old dataset stays as it was.

    >>> with stowage.open("cells.zarr", "w") as store:
    ...     store.create_array("counts", data=numpy.eye(3))
    >>> stowage.open("cells.zarr")["counts"][0]
    """

    def __init__(self, core: _core.Store, mode: Mode, plugin_path: list[str] | None = None,
                 options: Mapping[str, Any] | None = None) -> None:
        self._core = core
        # Kept here so that a closed store still pickles and prints.
        self._path = core.path
        self._format = core.format
        self._shared_writes = core.shared_writes
        self.mode = mode
        self.plugin_path = plugin_path
        self._options = options

    # -- what it is
    @property
    def path(self) -> str:
        """The path as given to :func:`open`.

        >>> stowage.open("volume.n5").path
        'volume.n5'
        """
        return self._path

    @property
    def format(self) -> str:
        """The format id (``"n5"``, ``"datg"``, ...).

        >>> stowage.open("volume.n5").format
        'n5'
        """
        return self._format

    @property
    def attrs(self) -> Attributes:
        """The root's attributes, a live mapping (:class:`Attributes`): each
        change is written at once; assign a dict to replace them all.

        >>> store.attrs["units"] = "um"   # written at once
        >>> dict(store.attrs)
        {'units': 'um'}
        """
        return Attributes(self, "")

    @attrs.setter
    def attrs(self, value: Mapping[str, Any]) -> None:
        Attributes(self, "").replace(value)

    @property
    def root(self) -> Node:
        """The root node (``store[""]``).

        >>> stowage.open("matrix.bpcells").root   # the Sparse matrix itself
        """
        return self[""]

    # -- the tree
    def keys(self, node: str = "") -> list[str]:
        """Names of the children of ``node`` (default: the root).

        >>> stowage.open("volume.n5").keys("raw")
        ['s0', 's1']
        """
        return list(self._core.list(node))

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def __contains__(self, node: str) -> bool:
        try:
            self._core.describe(node)
        except NodeNotFoundError:
            return False
        return True

    def __getitem__(self, node: str) -> Node:
        if not isinstance(node, str):
            raise TypeError(f"a node path is a str, not {type(node).__name__}")
        info = self._core.describe(node)
        return _KINDS[info["kind"]](self, node.strip("/"), info)

    def describe(self, node: str = "") -> dict[str, Any]:
        """The format plugin's description of a node, as a dict.

        >>> stowage.open("volume.n5").describe("raw/s0")["chunks"]
        [64, 64, 64]
        """
        return self._core.describe(node)

    def command(self, node: str, name: str, args: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A format-specific command (e.g. datadings ``"verify"``); returns a dict.

        >>> stowage.open("train.msgpack").command("", "verify")
        """
        return self._core.command(node, name, args)

    # -- writing (zarr-python's create_group, create_array, ... are Hierarchy's)
    def _hierarchy(self) -> tuple[Store, str]:
        return self, ""

    def _new_array(self, node: str, shape: Sequence[int], dtype: npt.DTypeLike, chunks: Sequence[int] | None,
                   compression: str | Mapping[str, Any] | None, attrs: Mapping[str, Any] | None, dims: Dims | None,
                   shards: Sequence[int] | None, fill_value: Any) -> Array:
        """Create a dense array (Hierarchy.create_array has taken zarr's
        forms of the arguments) and return it."""
        shape = [operator.index(n) for n in shape]
        desc: dict[str, Any] = {"kind": "array", "dtype": _dtype_name(dtype), "shape": shape}
        desc["chunks"] = [operator.index(n) for n in chunks] if chunks is not None else shape
        if shards is not None:
            desc["shards"] = [operator.index(n) for n in shards]
        if compression is not None:
            desc["codec"] = _core.parse_compression_spec(compression) if isinstance(compression, str) else compression
        if fill_value is not None:
            desc["fill_value"] = _fill_json(np.dtype(dtype).type(fill_value))
        array = cast(Array, self._create(node, desc, attrs, dims))
        if fill_value is not None and not _same_value(array.fill_value, np.dtype(dtype).type(fill_value)):
            with contextlib.suppress(UnsupportedError):  # npy's root cannot be removed: a "w" store discards it
                self.remove(node)  # a format that keeps no fill value (npy) would read it as its own
            raise UnsupportedError(f"{where(self, node)}: {self.format} keeps no fill value (never-written "
                                   f"elements read as {array.fill_value}); create it without fill_value")
        return array

    def write_sparse(self, node: str, matrix: Any, attrs: Mapping[str, Any] | None = None,
                     dims: Dims | None = None) -> Sparse:
        """Write a ``scipy.sparse`` matrix (CSR stays CSR, anything else is
        stored CSC) where the format holds sparse matrices (BPCells, Daf).

        >>> with stowage.open("counts.bpcells", "w") as store:
        ...     store.write_sparse("", scipy.sparse.random(100, 50, format="csc"))
        """
        import scipy.sparse

        if not scipy.sparse.issparse(matrix):
            raise InvalidArgumentError("write_sparse takes a scipy.sparse matrix, not " + type(matrix).__name__)
        layout = "csr" if matrix.format == "csr" else "csc"
        m = matrix.tocsr() if layout == "csr" else matrix.tocsc()
        m.sort_indices()
        desc = {"kind": "sparse", "dtype": _dtype_name(m.dtype), "shape": list(m.shape), "layout": layout}
        sparse = cast(Sparse, self._create(node, desc, attrs, dims))
        n_major = m.shape[0] if layout == "csr" else m.shape[1]
        sparse._core.append(m.indptr.astype(np.uint64), m.indices.astype(np.uint32),
                            np.ascontiguousarray(m.data), n_major)
        return cast(Sparse, self[node])

    def write_strings(self, node: str, values: Iterable[Any]) -> Strings:
        """Create (or replace) a strings node holding ``values``.

        >>> store.write_strings("gene_names", ["CD3E", "MS4A1"])
        """
        values = [str(v) for v in values]
        if node not in self:
            self._core.create(node, {"kind": "strings", "shape": [len(values)]})
        self._core.write_strings(node, values)
        return cast(Strings, self[node])

    def write_records(self, node: str, samples: Iterable[Mapping[str, Any] | bytes | bytearray | memoryview],
                      batch: int = 4096) -> Records:
        """Append samples to a record set (datadings), creating it if needed.

        Each sample is a dict (encoded as datadings does: msgpack with
        msgpack-numpy for numpy arrays; datadings needs a str ``"key"``) or
        ``bytes`` already encoded. Returns the :class:`Records`.

        >>> with stowage.open("train.msgpack", "w") as store:
        ...     store.write_records("", [{"key": "a", "image": numpy.zeros((8, 8))}])
        """
        if node not in self:
            self._core.create(node, {"kind": "records"})
        records = self._core.records(node)
        pending: list[bytes | bytearray | memoryview] = []
        for sample in samples:
            pending.append(sample if isinstance(sample, (bytes, bytearray, memoryview)) else _pack_sample(sample))
            if len(pending) >= batch:
                records.append([bytes(s) for s in pending])  # type: ignore[misc]  # std::string takes bytes
                pending = []
        if pending:
            records.append([bytes(s) for s in pending])  # type: ignore[misc]
        return cast(Records, self[node])

    def remove(self, node: str) -> None:
        """Remove a node and everything under it.

        >>> store.remove("raw/s2")
        """
        self._core.remove(node)

    def close(self) -> None:
        """Commit what was written and close. Errors are raised here; a
        ``"w"`` store whose close fails publishes nothing.

        >>> store = stowage.open("new.n5", "w")
        >>> store.create_array("x", data=numpy.arange(4))
        >>> store.close()   # now "new.n5" holds it
        """
        self._core.close()

    def discard(self) -> None:
        """Close without publishing: a store being created (``"w"``) leaves
        nothing and the old dataset stays; another drops what the format
        holds until close (writes already published stay).

        >>> store = stowage.open("new.n5", "w")
        >>> store.discard()   # nothing is published
        """
        self._core.discard()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` or :meth:`discard` has run.

        >>> store.close(); store.closed
        True
        """
        return self._core.closed

    def __enter__(self) -> Store:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:  # KeyboardInterrupt included: what was half written is not published
            self.discard()

    def __del__(self) -> None:
        core = getattr(self, "_core", None)
        if core is not None:
            try:
                core.discard()
            except Exception:  # noqa: S110 (interpreter shutdown)
                pass

    def _create(self, node: str, desc: dict[str, Any], attrs: Mapping[str, Any] | None, dims: Dims | None) -> Node:
        desc["attributes"] = dict(attrs or {})
        names, labels = _split_dims(dims, len(desc["shape"]))
        if names is not None:
            desc["dims"] = [{"name": n or ""} for n in names]
        self._core.create(node, desc)
        if names is not None and labels is not None and any(lab is not None for lab in labels):
            self._write_labels(node, labels, desc["attributes"], names)
        return self[node]

    def _write_labels(self, node: str, labels: list[list[Any] | None], attrs: dict[str, Any],
                      names: list[str | None]) -> None:
        made = self._core.describe(node).get("dims") or []
        kept = []
        for d, lab in enumerate(labels):
            path = made[d].get("labels") if d < len(made) else None
            entry: dict[str, Any] = {"name": names[d] or ""}
            if lab is not None and path:
                self._core.write_strings(path, [str(x) for x in lab])
            elif lab is not None:
                entry["labels"] = [str(x) for x in lab]
            kept.append(entry)
        if any("labels" in e for e in kept):
            self._core.set_attributes(node, {**attrs, "stowage_labels": kept})

    # -- pickling
    def _args(self) -> tuple[str, str, Mode, list[str] | None, Mapping[str, Any] | None, str | None]:
        mode: Mode = "r+" if self.mode in ("w", "w+", "a") else self.mode
        if mode != "r" and not self._shared_writes:
            if not self._core.closed:
                raise InvalidArgumentError(
                    f"{self.path}: a {self.format} store open for writing cannot be sent to another process: "
                    f"{self.format} publishes the whole dataset at close, so writers in several processes would "
                    "lose each other's writes. Write it from this process (or use n5 or zarr, whose writes are "
                    "published as they return); to read it in workers, close it and open it with mode 'r'")
            mode = "r"  # written and closed: workers read it
        staging = "" if self._core.closed else self._core.staging_location
        if mode != "r" and not self._core.closed:
            self._core.publish_held_metadata()  # storage without rename: the workers must find it
        return (self.path, self.format, mode, self.plugin_path, self._options, staging or None)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_reopen, self._args())

    def __repr__(self) -> str:
        return f"<stowage.Store {self.path!r} ({self.format}, mode {self.mode!r})>"


def _split_dims(dims: Dims | None, ndim: int) -> tuple[list[str | None] | None, list[list[Any] | None] | None]:
    if dims is None:
        return None, None
    dims = list(dims)
    if len(dims) != ndim:
        raise InvalidArgumentError(f"dims names {len(dims)} dimensions, the shape has {ndim}")
    names, labels = [], []
    for d in dims:
        if isinstance(d, (tuple, list)):
            names.append(d[0])
            labels.append(None if d[1] is None else list(d[1]))
        else:
            names.append(d)
            labels.append(None)
    return names, labels


def _fill_json(value: np.generic) -> Any:
    """A fill value as the description's JSON takes it (Zarr's strings for
    NaN and the infinities, [re, im] for complex)."""
    if isinstance(value, np.complexfloating):
        return [_fill_json(value.real), _fill_json(value.imag)]
    if isinstance(value, np.floating) and not np.isfinite(value):
        return "NaN" if np.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value.item()


def _same_value(a: np.generic, b: np.generic) -> bool:
    return bool(a == b) or bool(np.isnan(a) and np.isnan(b)) if a.dtype.kind in "fc" else bool(a == b)


def _dtype_name(dtype: npt.DTypeLike) -> str:
    dt = np.dtype(dtype)
    if dt.byteorder == ">" or (dt.byteorder == "=" and np.little_endian is False):
        dt = dt.newbyteorder("<")
    return "bool" if dt == np.bool_ else dt.name


def _pack_sample(sample: Mapping[str, Any]) -> bytes:
    import msgpack
    import msgpack_numpy

    return msgpack.packb(sample, default=msgpack_numpy.encode, use_bin_type=True)


# ---- attributes -------------------------------------------------------------------------


class Attributes(MutableMapping[str, Any]):
    """A node's attributes, live: reading asks the store (the format's
    description), and every change (``a["unit"] = "um"``, ``update``,
    ``del``, ``pop``, ``clear``...) is written at once through the format's
    ``set_attributes``, as zarr-python's ``Attributes`` does. A format that
    keeps no attributes (.npy, datadings) raises instead of dropping them.
    ``dict(attrs)`` is a plain copy. Unlike zarr-python 2.13's, it keeps no
    cache: each read asks the store::

        a = store["raw/s0"]
        a.attrs["resolution"] = [4, 4, 40]     # written now
        a.attrs.update(unit="nm", offset=[0, 0, 0])
        del a.attrs["offset"]
        a.attrs = {"unit": "um"}               # replaces them all
    """

    def __init__(self, store: Store, node: str, written: Callable[[], None] | None = None) -> None:
        self._store = store
        self._node = node
        self._written = written  # called after each write (a node refreshes its description)

    def asdict(self) -> dict[str, Any]:
        """The attributes now, as a new dict (zarr-python's ``asdict``)::

            snapshot = store["raw/s0"].attrs.asdict()
        """
        return dict(self._store._core.describe(self._node).get("attributes") or {})

    def _write(self, attributes: dict[str, Any]) -> None:
        self._store._core.set_attributes(self._node, attributes)
        if self._written is not None:
            self._written()

    def replace(self, attributes: Mapping[str, Any]) -> None:
        """Replace every attribute with those of ``attributes`` (one write),
        as zarr-python's ``put``::

            store["raw/s0"].attrs.replace({"unit": "nm"})
        """
        self._write(dict(attributes))

    def __getitem__(self, key: str) -> Any:
        return self.asdict()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        attributes = self.asdict()
        attributes[key] = value
        self._write(attributes)

    def __delitem__(self, key: str) -> None:
        attributes = self.asdict()
        del attributes[key]  # KeyError, as a dict's
        self._write(attributes)

    def __iter__(self) -> Iterator[str]:
        return iter(self.asdict())

    def __len__(self) -> int:
        return len(self.asdict())

    def __contains__(self, key: object) -> bool:
        return key in self.asdict()

    def update(self, other: Any = (), /, **more: Any) -> None:
        """Set several attributes in one write (``dict.update``'s arguments)::

            store["raw/s0"].attrs.update({"unit": "nm"}, resolution=[4, 4, 40])
        """
        attributes = self.asdict()
        attributes.update(other, **more)
        self._write(attributes)

    def clear(self) -> None:
        """Remove every attribute, in one write::

            store["raw/s0"].attrs.clear()
        """
        self._write({})

    def __repr__(self) -> str:
        return repr(self.asdict())


# ---- nodes ------------------------------------------------------------------------------


class _Node:
    """What every node has: its store, path, attributes and description."""

    def __init__(self, store: Store, node: str, info: dict[str, Any]) -> None:
        self.store = store
        self.node = node
        self._info = info

    @property
    def attrs(self) -> Attributes:
        """The node's attributes, a live mapping (:class:`Attributes`): each
        change is written at once; assign a dict to replace them all.

        >>> a = stowage.open("volume.n5", "r+")["raw/s0"]
        >>> a.attrs["resolution"] = [4, 4, 40]
        """
        return Attributes(self.store, self.node, self._refresh)

    @attrs.setter
    def attrs(self, value: Mapping[str, Any]) -> None:
        Attributes(self.store, self.node, self._refresh).replace(value)

    def _refresh(self) -> None:
        self._info = self.store._core.describe(self.node)

    @property
    def storage(self) -> dict[str, Any]:
        """How the format stores this node, beside its meaning (a new dict):
        BPCells' ``version``/``packed``, Daf's ``daf_eltype``... Empty where
        the format reports none. Not attributes: conversions keep it only
        within the same format.

        >>> stowage.open("volume.n5")["raw/s0"].storage["compression"]
        """
        return dict(self._info.get("storage") or {})

    @property
    def name(self) -> str:
        """The last component of the node path ("" for the root).

        >>> stowage.open("volume.n5")["raw/s0"].name
        's0'
        """
        return self.node.rsplit("/", 1)[-1]

    def describe(self) -> dict[str, Any]:
        """The format plugin's description of the node, as a dict.

        >>> stowage.open("volume.n5")["raw/s0"].describe()["dtype"]
        'uint8'
        """
        return dict(self._info)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_reopen_node, (self.store._args(), self.node))

    def __repr__(self) -> str:
        return f"<stowage.{type(self).__name__} {self.node or '/'!r} of {self.store.path!r}>"


class Group(Hierarchy, _Node):
    """A group: named children and attributes. ``group["child/x"]`` is a node
    below it; ``"child/x" in group`` asks whether there is one. zarr-python's
    Group methods (create_group, create_array, require_group, require_array,
    groups, arrays, visit, tree, ...) are :class:`~stowage._hierarchy.Hierarchy`'s.

    >>> g = store["labels"]
    >>> g.create_array("cells", data=numpy.zeros((4, 4), "uint32"))
    >>> print(g.tree())
    """

    def _hierarchy(self) -> tuple[Store, str]:
        return self.store, self.node

    def keys(self) -> list[str]:
        """Names of the children.

        >>> stowage.open("volume.n5")["raw"].keys()
        ['s0', 's1']
        """
        return self.store.keys(self.node)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def __contains__(self, child: str) -> bool:
        return _join(self.node, child) in self.store

    def __getitem__(self, child: str) -> Node:
        return self.store[_join(self.node, child)]


class _Dimensioned(_Node):
    """Nodes with a shape, a dtype and dimension names/labels."""

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, C order (slowest dimension first).

        >>> stowage.open("volume.n5")["raw/s0"].shape
        (128, 256, 256)
        """
        return tuple(self._info["shape"])

    @property
    def ndim(self) -> int:
        """Number of dimensions.

        >>> stowage.open("volume.n5")["raw/s0"].ndim
        3
        """
        return len(self._info["shape"])

    @property
    def size(self) -> int:
        """Number of elements.

        >>> stowage.open("volume.n5")["raw/s0"].size
        8388608
        """
        return int(np.prod(self.shape, dtype=np.uint64))

    @property
    def dtype(self) -> np.dtype[Any]:
        """The element type as a ``numpy.dtype`` (native byte order).

        >>> stowage.open("volume.n5")["raw/s0"].dtype
        dtype('uint8')
        """
        return np.dtype(self._info["dtype"])

    @property
    def nbytes(self) -> int:
        """Bytes of the values, uncompressed (``size * dtype.itemsize``).

        >>> stowage.open("volume.n5")["raw/s0"].nbytes
        8388608
        """
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 1

    @property
    def dims(self) -> list[tuple[str | None, list[str] | None]]:
        """One ``(name, labels)`` per dimension: the name (or None) and the
        labels as a list of str (or None). Labels are read when asked for.

        >>> stowage.open("counts.bpcells")[""].dims[0][0]
        'gene'
        """
        stored = (self._info.get("attributes") or {}).get("stowage_labels") or []
        out = []
        dims = self._info.get("dims") or [{} for _ in self.shape]
        for d, dim in enumerate(dims):
            name = dim.get("name") or None
            labels = None
            if dim.get("labels"):
                labels = self.store._core.read_strings(dim["labels"], 0, 2**64 - 1)
            elif d < len(stored):
                name = name or stored[d].get("name") or None
                labels = stored[d].get("labels")
            out.append((name, labels))
        return out


def _normalize_index(key: Any, shape: tuple[int, ...]) -> list[tuple[int, int, int, int, bool]]:
    """An index -> (offset, count, step, dropped axis flags) for each dimension."""
    if not isinstance(key, tuple):
        key = (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in key:
        i = key.index(Ellipsis)
        fill = len(shape) - (len(key) - 1)
        if fill < 0:
            raise IndexError(f"too many indices for an array of {len(shape)} dimensions")
        key = key[:i] + (slice(None),) * fill + key[i + 1 :]
    if len(key) > len(shape):
        raise IndexError(f"too many indices for an array of {len(shape)} dimensions")
    key = key + (slice(None),) * (len(shape) - len(key))
    out = []
    for d, (k, n) in enumerate(zip(key, shape)):
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            r = range(start, stop, step)
            if len(r) == 0:
                out.append((0, 0, 1, 0, False))
            else:
                lo, hi = min(r[0], r[-1]), max(r[0], r[-1]) + 1
                out.append((lo, hi - lo, step, r[0] - lo, False))
            continue
        try:
            i = operator.index(k)
        except TypeError:
            raise IndexError(
                f"stowage arrays take integers, slices, '...', integer arrays and boolean arrays as indices, "
                f"not {type(k).__name__}"
            ) from None
        if i < -n or i >= n:
            raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
        out.append((i % n, 1, 1, 0, True))
    return out


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _first_index(bad: npt.NDArray[np.bool_]) -> tuple[int, ...]:
    """The index of the first True in ``bad``, as a tuple (or () for a scalar)."""
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), bad.shape)) if bad.ndim else ()


def _refuse_value(values: npt.NDArray[Any], bad: npt.NDArray[np.bool_], dtype: np.dtype[Any], why: str) -> None:
    where = _first_index(bad)
    value = values[where] if values.ndim else values[()]
    value = value.item() if isinstance(value, np.generic) else value
    place = f" at index {where}" if where else ""
    raise InvalidArgumentError(
        f"value {value!r}{place} {why} {dtype}; nothing was written "
        "(write with casting='unsafe' to cast as numpy's astype does)")


def _checked_values(value: npt.ArrayLike, dtype: np.dtype[Any], casting: Casting) -> npt.NDArray[Any]:
    """``value`` as an array to assign to elements of ``dtype`` under numpy's
    ``casting`` rule, checked: a cast the rule refuses, or a value the dtype
    cannot hold (300 into uint8, 1e300 into float32), is an error naming the
    first such value and its index. Python numbers (and lists of them) are
    judged by value, as numpy does for Python scalars: 7 goes into uint8,
    300 does not, 1.5 never goes into an integer array."""
    if casting not in _CASTINGS:
        raise InvalidArgumentError(f"casting must be one of {', '.join(_CASTINGS)}, not {casting!r}")
    if casting == "unsafe":
        values = np.asarray(value)
        return values if values.dtype == object else values.astype(dtype)  # numpy's wrap, without its warning
    python = not isinstance(value, (np.ndarray, np.generic))
    try:
        values = np.asarray(value)
    except OverflowError:
        raise InvalidArgumentError(f"value {value!r} does not fit {dtype}; nothing was written") from None
    if values.dtype == object:
        if python and values.size and all(isinstance(v, int) for v in values.flat):
            bad = np.array([not (_int_range(dtype)[0] <= v <= _int_range(dtype)[1]) if dtype.kind in "biu"
                            else False for v in values.flat]).reshape(values.shape)
            if bad.any():
                _refuse_value(values, bad, dtype, "does not fit")
            return values.astype(dtype)
        raise InvalidArgumentError(f"cannot write values of type {type(value).__name__} ({values.dtype}) "
                                   f"into a {dtype} array")
    src = values.dtype
    if src == dtype:
        return values
    # Python ints (and bools) are "weak": they go into any integer or float
    # dtype whose range holds them; Python floats into any float dtype.
    weak = python and ((src.kind in "biu" and dtype.kind in "biufc") or (src.kind == "f" and dtype.kind in "fc")
                       or (src.kind == "c" and dtype.kind == "c"))
    if not weak and not np.can_cast(src, dtype, casting):
        raise InvalidArgumentError(
            f"cannot write {src} values into a {dtype} array under casting={casting!r} (numpy's rule); "
            "nothing was written (write with casting='unsafe' to cast anyway)")
    if dtype.kind in "biu" and src.kind in "biu":
        lo, hi = _int_range(dtype)
        slo, shi = _int_range(src)
        if slo < lo or shi > hi:  # a narrowing: each value must fit
            bad = (values < lo) | (values > hi) if slo < lo and shi > hi else (values < lo if slo < lo else values > hi)
            if bad.any():
                _refuse_value(values, bad, dtype, "does not fit")
        return values.astype(dtype)
    if dtype.kind in "fc" and src.kind == dtype.kind and dtype.itemsize < src.itemsize:
        with np.errstate(over="ignore"):
            cast = values.astype(dtype)
        bad = np.isinf(cast) & np.isfinite(values)
        if bad.any():
            _refuse_value(values, bad, dtype, "overflows (to inf)")
        return cast
    return values


def _int_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    if dtype.kind == "b":
        return 0, 1
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _picks(dims: list[tuple[int, int, int, int, bool]]) -> tuple[int | slice, ...]:
    """What to take from the bounding box of an index: each step, and 0 on
    integer-indexed axes (which drops them)."""
    return tuple(0 if drop else slice(first, None, step) if count else slice(0, 0)
                 for _, count, step, first, drop in dims)


class Array(_Dimensioned):
    """A dense n-d array.

    ``a[index]`` (integers, slices with any step, ``...``) reads the chunks
    the region touches, in parallel with the GIL released, into a new
    C-ordered ``numpy.ndarray``; ``a[index] = values`` writes (reading and
    rewriting chunks the region covers only partly), casting by numpy's
    ``"same_kind"`` rule with every value checked to fit (see :meth:`set`;
    ``a.set(index, values, casting="unsafe")`` casts as ``astype``).
    ``numpy.asarray(a)`` reads it all.

    >>> a = stowage.open("volume.n5")["raw/s0"]
    >>> a[0:64, :, 100].mean()
    >>> a.oindex[[3, 9], :, 0:5]

    It is a target of ``dask.array.store`` (it pickles by path into
    workers); blocks on its chunks (or shards) take no lock::

        dask.array.store(x.rechunk(a.chunks), a, lock=False)

    :func:`stowage.to_store` creates the array from ``x`` and does this.
    """

    def __init__(self, store: Store, node: str, info: dict[str, Any]) -> None:
        super().__init__(store, node, info)
        self._core = store._core.array(node)

    @property
    def chunks(self) -> tuple[int, ...]:
        """The chunk shape, C order.

        >>> stowage.open("volume.n5")["raw/s0"].chunks
        (64, 64, 64)
        """
        return tuple(self._info.get("chunks") or self.shape)

    @property
    def codec(self) -> dict[str, Any] | None:
        """The codec as N5's compression object (``{"type": "zstd", ...}``), or None.

        >>> stowage.open("volume.n5")["raw/s0"].codec
        {'type': 'gzip', 'level': -1}
        """
        return self._info.get("codec")

    @property
    def fill_value(self) -> np.generic:
        """What a chunk never written reads as: a scalar of the array's dtype
        (``numpy.float32(nan)``, ``numpy.uint16(7)``).

        >>> stowage.open("data.zarr")["labels"].fill_value
        0
        """
        value = self._info.get("fill_value", 0)
        if isinstance(value, list):  # complex: [re, im]
            return self.dtype.type(complex(float(value[0]), float(value[1])))
        if isinstance(value, str):  # JSON has no NaN: "NaN", "Infinity", "-Infinity"
            value = float(value)
        return self.dtype.type(value)

    @property
    def chunk_grid(self) -> tuple[int, ...]:
        """Number of chunks along each dimension.

        >>> stowage.open("volume.n5")["raw/s0"].chunk_grid
        (2, 4, 4)
        """
        return tuple(self._core.chunk_grid())

    def chunk_exists(self, index: Sequence[int]) -> bool:
        """Whether the chunk at grid position ``index`` was written.

        >>> stowage.open("volume.n5")["raw/s0"].chunk_exists((0, 0, 0))
        True
        """
        return self._core.chunk_exists(list(index))

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape (Zarr v3's ``sharding_indexed``), or None, as
        zarr-python 3's ``shards``.

        >>> a.chunks, a.shards
        ((32, 32), (128, 128))
        """
        shards = self._info.get("shards")
        return tuple(shards) if shards else None

    @property
    def nchunks(self) -> int:
        """The number of chunks in the grid, as zarr-python's ``nchunks``.

        >>> a.shape, a.chunks, a.nchunks
        ((100, 100), (10, 50), 20)
        """
        return int(np.prod(self.chunk_grid, dtype=np.uint64))

    @property
    def nchunks_initialized(self) -> int:
        """The number of chunks written, as zarr-python's: one
        :meth:`chunk_exists` per chunk (a stat each on a filesystem, a
        request each over HTTP or S3).

        >>> a.nchunks_initialized
        3
        """
        return sum(bool(self._core.chunk_exists(list(i))) for i in np.ndindex(*self.chunk_grid))

    @property
    def info(self) -> str:
        """A printable summary, as zarr-python's ``info``: path, type, dtype,
        shape, chunks, shards, fill value, codec, format, storage, size, and
        the chunks written where counting them is cheap (a local store of at
        most 10000 chunks). A ``str``: ``print(a.info)``.

        >>> print(a.info)
        Name               : /data/v.zarr/raw
        Type               : stowage.Array
        ...
        """
        return _info_text(self._info_items())

    def _info_items(self) -> list[tuple[str, str]]:
        items = [("Name", self._where), ("Type", "stowage.Array"), ("Data type", str(self.dtype)),
                 ("Shape", str(self.shape)), ("Chunk shape", str(self.chunks))]
        if self.shards:
            items.append(("Shard shape", str(self.shards)))
        items += [("Fill value", repr(self.fill_value.item())), ("Codec", json.dumps(self.codec)),
                  ("Format", self.store.format + _format_version(self._info)), ("Store path", self.store.path),
                  ("Read-only", str(self.store.mode == "r")), ("No. bytes", _human_bytes(self.nbytes))]
        if self.nchunks <= 10000 and "://" not in self.store.path:
            items.append(("Chunks initialized", f"{self.nchunks_initialized}/{self.nchunks}"))
        else:
            items.append(("No. chunks", str(self.nchunks)))
        return items

    def read(self, out: npt.NDArray[Any] | None = None, offset: Sequence[int] | None = None) -> npt.NDArray[Any]:
        """Read a region into ``out`` (a C-contiguous array of this dtype; no
        copy is made) starting at ``offset`` (default: the origin), and return
        ``out``. Without ``out``, read the whole array.

        >>> out = numpy.empty((64, 64, 64), "uint8")
        >>> a.read(out, offset=(0, 64, 0))
        """
        if out is None:
            out = _indexing.empty(self.shape, self.dtype)
        offset = [0] * self.ndim if offset is None else [operator.index(o) for o in offset]
        if len(offset) != self.ndim or out.ndim != self.ndim:
            raise InvalidArgumentError(f"offset and out must have {self.ndim} dimensions")
        if out.size:
            self._core.read(offset, list(out.shape), out)
        return out

    @property
    def _where(self) -> str:
        """The array as errors name it: the store's path as given, then the node."""
        return where(self.store, self.node)

    def __getitem__(self, key: Any) -> npt.NDArray[Any]:
        kind = _indexing.kind_of(key, self.ndim)
        if kind == "orthogonal":
            return self.get_orthogonal_selection(key)
        if kind == "coordinate":
            return self.get_coordinate_selection(key)
        if kind == "mask":
            return self.get_mask_selection(key)
        with _indexing.named_index_errors(self._where):
            dims = _normalize_index(key, self.shape)
        counts = [c for _, c, _, _, _ in dims]
        box = _indexing.empty(counts, self.dtype)
        if box.size:
            self._core.read([o for o, _, _, _, _ in dims], counts, box)
        # Steps other than 1 read the bounding box and pick from it (fast for
        # small steps; a step of k reads k times what it returns). Without
        # steps the picks only drop the integer-indexed axes: no copy.
        out = box[_picks(dims) + (Ellipsis,)]  # the Ellipsis keeps a 0-d array an array
        return out if out.flags.c_contiguous else out.copy()

    def __setitem__(self, key: Any, value: npt.ArrayLike) -> None:
        self.set(key, value)

    def set(self, key: Any, value: npt.ArrayLike, casting: Casting = "same_kind") -> None:
        """``a[key] = value`` with numpy's ``casting`` rule: ``"same_kind"``
        (the default, as ``a[key] = value``) refuses float values into an
        integer array, and any value the array's dtype cannot hold (300 into
        uint8, 1e20 into int32, 1e300 into float32) is an error naming the
        first one and its index, with nothing written. ``casting="unsafe"``
        casts as numpy's ``astype`` (wrapping integers, truncating floats).
        ``key`` takes what ``a[key]`` takes (integer arrays, masks).

        >>> a.set((slice(0, 2), 0), numpy.array([1.5, 2.5]), casting="unsafe")
        """
        kind = _indexing.kind_of(key, self.ndim)
        if kind != "basic":
            return self._set_selection(kind, key, value, casting)
        with _indexing.named_index_errors(self._where):
            dims = _normalize_index(key, self.shape)
        offset = [o for o, _, _, _, _ in dims]
        counts = [c for _, c, _, _, _ in dims]
        value = _checked_values(value, self.dtype, casting)
        if 0 in counts:
            return
        box = _indexing.empty(counts, self.dtype)
        if any(step != 1 for _, _, step, _, _ in dims):
            self._core.read(offset, counts, box)  # the elements between the steps are kept
        box[_picks(dims)] = value  # numpy's broadcasting (the values were checked above)
        self._core.write(offset, counts, box)

    # -- zarr-python's selections (the work is in _indexing.py)
    @property
    def oindex(self) -> _indexing.OIndex:
        """Orthogonal selection, as zarr-python's ``oindex``: each axis takes
        an integer, a slice (any step, negative too, where zarr takes
        positive ones only), an integer array or a boolean array, on its own.

        >>> a.oindex[[0, 2], 1:3]            # rows 0 and 2, columns 1 and 2
        >>> a.oindex[:, a[0] > 0] = 0        # get and set
        """
        return _indexing.OIndex(self)

    @property
    def vindex(self) -> _indexing.VIndex:
        """Coordinate or mask selection, as zarr-python's ``vindex``: one
        integer array per axis (broadcast together, the result has their
        shape), or one boolean array of the array's shape (the result is 1-d).

        >>> a.vindex[[0, 1, 2], [2, 1, 0]]   # three elements
        >>> a.vindex[mask] = 7
        """
        return _indexing.VIndex(self)

    def get_orthogonal_selection(self, selection: Any) -> npt.NDArray[Any]:
        """zarr 2's name for ``a.oindex[selection]``.

        >>> a.get_orthogonal_selection(([0, 2], slice(None)))
        """
        with _indexing.named_index_errors(self._where):
            return _indexing.read_orthogonal(self, selection)

    def set_orthogonal_selection(self, selection: Any, value: npt.ArrayLike, casting: Casting = "same_kind") -> None:
        """zarr 2's name for ``a.oindex[selection] = value`` (``casting`` as
        in :meth:`set`).

        >>> a.set_orthogonal_selection(([0, 2], slice(None)), 1)
        """
        self._set_selection("orthogonal", selection, value, casting)

    def get_coordinate_selection(self, selection: Any) -> npt.NDArray[Any]:
        """zarr 2's name for ``a.vindex[selection]`` with integer arrays.

        >>> a.get_coordinate_selection(([0, 1], [5, 6]))   # a[0, 5], a[1, 6]
        """
        with _indexing.named_index_errors(self._where):
            return _indexing.read_points(self, *_indexing.coordinates(selection, self.shape))

    def set_coordinate_selection(self, selection: Any, value: npt.ArrayLike, casting: Casting = "same_kind") -> None:
        """zarr 2's name for ``a.vindex[selection] = value`` with integer arrays.

        >>> a.set_coordinate_selection(([0, 1], [5, 6]), [10, 11])
        """
        self._set_selection("coordinate", selection, value, casting)

    def get_mask_selection(self, selection: npt.ArrayLike) -> npt.NDArray[Any]:
        """zarr 2's mask selection: the elements where ``selection`` (a
        boolean array of the array's shape) is True, in C order, as a 1-d array.

        >>> a.get_mask_selection(a[...] > 5)
        """
        with _indexing.named_index_errors(self._where):
            return _indexing.read_points(self, *_indexing.mask_coordinates(selection, self.shape))

    def set_mask_selection(self, selection: npt.ArrayLike, value: npt.ArrayLike,
                           casting: Casting = "same_kind") -> None:
        """zarr 2's name for ``a.vindex[mask] = value``.

        >>> a.set_mask_selection(a[...] > 5, 5)
        """
        self._set_selection("mask", selection, value, casting)

    def _set_selection(self, kind: str, selection: Any, value: npt.ArrayLike, casting: Casting) -> None:
        value = _checked_values(value, self.dtype, casting)
        with _indexing.named_index_errors(self._where):
            if kind == "orthogonal":
                return _indexing.write_orthogonal(self, selection, value)
            if kind == "coordinate":
                where = _indexing.coordinates(selection, self.shape)
            else:
                where = _indexing.mask_coordinates(selection, self.shape)
            _indexing.write_points(self, *where, value)

    def write(self, values: npt.ArrayLike, offset: Sequence[int] | None = None, casting: Casting = "same_kind") -> None:
        """Write ``values`` (an array of this array's number of dimensions)
        at ``offset`` (default: the origin): the region is ``values.shape``.
        ``casting`` as in :meth:`set`; a C-contiguous array of this dtype is
        written without a copy.

        >>> a.write(numpy.ones((64, 64, 64), a.dtype), offset=(64, 0, 0))
        """
        values = _checked_values(values, self.dtype, casting)
        values = np.ascontiguousarray(values, dtype=self.dtype)
        offset = [0] * self.ndim if offset is None else [operator.index(o) for o in offset]
        if len(offset) != self.ndim or values.ndim != self.ndim:
            raise InvalidArgumentError(f"offset and values must have {self.ndim} dimensions")
        if values.size:
            self._core.write(offset, list(values.shape), values)

    def __array__(self, dtype: npt.DTypeLike = None) -> npt.NDArray[Any]:
        a = self.read()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __repr__(self) -> str:
        return (f"<stowage.Array {self.node or '/'!r} of {self.store.path!r}: "
                f"shape {self.shape}, {self.dtype}, chunks {self.chunks}>")

    # -- growing and shrinking: zarr-python's resize and append --------------

    def resize(self, *args: Any) -> None:  # (20, 5), ((20, 5),), (None, 5)
        """Change the shape, as zarr-python's ``Array.resize``: ``a.resize(20, 5)``
        or ``a.resize((20, 5))``; ``None`` keeps a dimension. The rank stays.
        Values inside the new shape stay; chunks wholly outside it are
        deleted; a region grown back reads the fill value, except within an
        edge chunk the smaller shape still reached, which keeps what it held
        (zarr-python keeps those chunks whole too, and reads the same).
        Differs on purpose: stowage writes an edge chunk with the fill value
        outside the shape, where zarr-python keeps the old values there, so
        after shrink, write into that chunk, grow, stowage reads the fill
        value in its regrown part and zarr-python the values from before.

        N5, Zarr v2 and v3 (sharded too: whole shards go) and ``.npy``
        (rewritten; published at ``close()``, like its other writes); other
        formats raise :class:`UnsupportedError`. The metadata is written
        before the chunks go, so a process killed midway leaves only files
        no reader sees. This object takes the new shape; another ``Array`` of
        the same node opened earlier keeps the old one (index the store again).

        >>> a = stowage.open("x.zarr", "r+")["a"]     # shape (10, 4)
        >>> a.resize(20, 4)
        >>> a.shape
        (20, 4)
        """
        shape = self.shape
        new = args[0] if len(args) == 1 else args
        new = (new,) if isinstance(new, (int, np.integer)) else tuple(new)
        if len(new) != len(shape):
            raise InvalidArgumentError(f"{self.store.path}::{self.node}: new shape {new} must have "
                                       f"{len(shape)} dimensions, as the array")
        new = [int(s) if n is None else operator.index(n) for s, n in zip(shape, new)]
        try:
            self.store._core.command(self.node, "resize", {"shape": new})
        except UnsupportedError as e:
            if "unknown command" not in e.message:
                raise
            raise UnsupportedError(f"{self.store.path}::{self.node}: format {self.store.format} cannot resize "
                                   f"an array (N5, Zarr and npy can)", code=e.code, path=e.path,
                                   plugin=e.plugin) from e
        self._info = self.store._core.describe(self.node)
        self._core = self.store._core.array(self.node)  # a handle of the new shape

    def append(self, data: npt.ArrayLike, axis: int = 0) -> tuple[int, ...]:
        """Append ``data`` along ``axis`` and return the new shape, as
        zarr-python's ``Array.append``: every other dimension of ``data``
        must match the array's. The values are checked as in :meth:`set`
        (nothing changes when one does not fit), the array resized, then
        written: a process killed in between leaves the grown part at the fill
        value. Unlike zarr-python, a negative ``axis`` counts from the end.

        >>> a = stowage.open("x.n5", "r+")["a"]       # shape (10, 4)
        >>> a.append(np.ones((5, 4), a.dtype))
        (15, 4)
        """
        data = _checked_values(data, self.dtype, "same_kind")
        shape = self.shape
        axis = operator.index(axis)
        if not -len(shape) <= axis < len(shape):
            raise InvalidArgumentError(f"axis {axis} is out of range for {len(shape)} dimensions")
        axis %= len(shape)
        kept = [s for i, s in enumerate(shape) if i != axis]
        if len(data.shape) != len(shape) or kept != [s for i, s in enumerate(data.shape) if i != axis]:
            raise InvalidArgumentError(
                f"{self.store.path}::{self.node}: data of shape {tuple(data.shape)} cannot be appended "
                f"to shape {shape} along axis {axis}; every other dimension must match")
        new = tuple(s + data.shape[axis] if i == axis else s for i, s in enumerate(shape))
        self.resize(new)
        self.write(data, offset=[shape[i] if i == axis else 0 for i in range(len(shape))])
        return new


class _Text(str):
    """A str that shows as itself in a REPL (``a.info``, ``g.tree()``), as
    zarr's InfoReporter and TreeViewer do."""

    def __repr__(self) -> str:
        return str(self)


def _info_text(items: list[tuple[str, str]]) -> _Text:
    width = max(len(k) for k, _ in items)
    return _Text("\n".join(f"{k:<{width}} : {v}" for k, v in items) + "\n")


def _format_version(info: dict[str, Any]) -> str:
    version = (info.get("storage") or {}).get("zarr_format")
    return f" v{version}" if version else ""


def _human_bytes(n: int) -> str:
    size, unit = float(n), ""
    for unit in ("", "K", "M", "G", "T", "P"):
        if size < 1024 or unit == "P":
            break
        size /= 1024
    return f"{n}" if not unit else f"{n} ({size:.1f}{unit})"


class Sparse(_Dimensioned):
    """A CSC or CSR sparse matrix (BPCells, Daf). ``to_scipy()`` reads it
    (or a range of its columns/rows); ``numpy.asarray`` reads it dense.

    ``m[rows, cols]`` reads a selection into a ``scipy.sparse`` matrix of the
    storage's layout (:meth:`__getitem__`)::

        m = stowage.open("counts.bpcells")[""]   # genes x cells, CSC
        m[:, [3, 7, 9]]                          # three cells: only those columns are read
        m[m_genes_mask, 100:200]                 # a boolean mask and a slice
    """

    def __init__(self, store: Store, node: str, info: dict[str, Any]) -> None:
        super().__init__(store, node, info)
        self._core = store._core.sparse(node)

    @property
    def format(self) -> Literal["csc", "csr"]:
        """``"csc"`` (columns are the major axis) or ``"csr"``.

        >>> stowage.open("counts.bpcells")[""].format
        'csc'
        """
        return self._info.get("layout", "csc")

    @property
    def nnz(self) -> int:
        """Number of stored values.

        >>> stowage.open("counts.bpcells")[""].nnz
        """
        return int(self._info.get("nnz", 0))

    @property
    def majors(self) -> int:
        """Number of columns (CSC) or rows (CSR).

        >>> stowage.open("counts.bpcells")[""].majors   # columns of a CSC matrix
        """
        return self.shape[1] if self.format == "csc" else self.shape[0]

    def to_scipy(self, major: slice | None = None) -> Any:  # scipy.sparse.csc_matrix | csr_matrix
        """The matrix as a ``scipy.sparse.csc_matrix`` / ``csr_matrix``.

        ``major=slice(a, b)``: only columns (CSC) or rows (CSR) a..b-1.

        >>> m = stowage.open("counts.bpcells")[""].to_scipy()   # scipy.sparse.csc_matrix
        """
        import scipy.sparse

        if major is None:
            major = slice(None)
        begin, end, step = major.indices(self.majors)
        if step != 1:
            raise InvalidArgumentError("to_scipy takes a slice of step 1")
        end = max(begin, end)
        indptr, indices, values = self._core.read(begin, end)
        minor = self.shape[0] if self.format == "csc" else self.shape[1]
        if minor > np.iinfo(np.int32).max:  # the indices were uint32, seen as int32
            indices = indices.view(np.uint32).astype(np.int64)
        if self.format == "csc":
            return scipy.sparse.csc_matrix((values, indices, indptr), shape=(minor, end - begin), copy=False)
        return scipy.sparse.csr_matrix((values, indices, indptr), shape=(end - begin, minor), copy=False)

    def __getitem__(self, key: Any) -> Any:  # a scipy.sparse matrix, or a numpy scalar for two ints
        """``m[rows, cols]``: the selection as a ``scipy.sparse`` matrix, CSR
        or CSC as the storage's :attr:`format`. Each index is an int, a slice
        (any step), a list or numpy array of ints (any order, repeats
        allowed, negative from the end) or a boolean mask; ``m[rows]`` keeps
        every column. Only the majors selected (rows of CSR, columns of CSC)
        are read, in runs of neighbouring ones: ``m[5:9]`` of a CSR matrix
        reads 4 rows, ``m[:, 5:9]`` reads all of them (each row holds part of
        those columns).

        As scipy's indexing, an int keeps its axis (a 1 x n matrix) and two
        ints give the value. Unlike scipy's (and like zarr-python's
        ``oindex`` and ``AnnData[rows, cols]``), two arrays select
        orthogonally, rows x columns, not coordinate pairs::

            >>> m[[0, 2], [1, 3]].shape        # scipy's csr[[0, 2], [1, 3]] is 1 x 2
            (2, 2)
            >>> m[1:3, 0].toarray()            # equal to m.to_scipy()[1:3, 0]
        """
        rows, cols = self._key(key, self.shape)
        csr = self.format == "csr"
        major, minor = (rows, cols) if csr else (cols, rows)
        picked = self._read_majors(major)
        picked = picked[:, minor] if csr else picked[minor, :]
        if isinstance(rows, int) and isinstance(cols, int):
            return picked.toarray()[0, 0]  # a numpy scalar of the dtype, as scipy's m[i, j]
        return picked.asformat(self.format)

    # Neighbouring majors closer than this are read in one call, the ones
    # between included: a call costs more than reading a few empty majors.
    _major_gap = 64

    def _read_majors(self, index: int | slice | npt.NDArray[np.int64]) -> Any:
        """The majors ``index`` selects (an int, a slice or an int array), in
        its order, as CSR (rows of CSR storage) or CSC."""
        import scipy.sparse

        if isinstance(index, int):
            index = slice(index, index + 1)
        if isinstance(index, slice) and index.step in (None, 1):
            return self.to_scipy(index)
        wanted = np.arange(*index.indices(self.majors)) if isinstance(index, slice) else index
        if wanted.size == 0:
            return self.to_scipy(slice(0, 0))
        unique = np.unique(wanted)
        breaks = np.flatnonzero(np.diff(unique) > self._major_gap) + 1
        firsts = unique[np.r_[0, breaks]]
        lasts = unique[np.r_[breaks - 1, unique.size - 1]]
        parts = [self.to_scipy(slice(int(a), int(b) + 1)) for a, b in zip(firsts, lasts)]
        stack = scipy.sparse.vstack if self.format == "csr" else scipy.sparse.hstack
        read = parts[0] if len(parts) == 1 else stack(parts, format=self.format)
        offsets = np.cumsum(np.r_[0, lasts[:-1] - firsts[:-1] + 1])
        run = np.searchsorted(firsts, wanted, side="right") - 1
        at = offsets[run] + (wanted - firsts[run])  # each wanted major's place in `read`
        return read[at] if self.format == "csr" else read[:, at]

    @staticmethod
    def _key(key: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
        """``m[key]``'s index -> (rows, cols), each an int, a slice or an int64 array."""
        if not isinstance(key, tuple):
            key = (key,)
        if any(k is Ellipsis for k in key):
            i = next(i for i, k in enumerate(key) if k is Ellipsis)
            key = key[:i] + (slice(None),) * (3 - len(key)) + key[i + 1 :]
        if len(key) > 2:
            raise IndexError(f"too many indices for a sparse matrix: {len(key)}")
        key = tuple(key) + (slice(None),) * (2 - len(key))
        return tuple(Sparse._axis_index(k, n, axis) for k, n, axis in zip(key, shape, ("row", "column")))

    @staticmethod
    def _axis_index(k: Any, n: int, axis: str) -> int | slice | npt.NDArray[np.int64]:
        if isinstance(k, slice):
            return k
        if isinstance(k, (int, np.integer)):
            i = operator.index(k)
            if not -n <= i < n:
                raise IndexError(f"{axis} {i} is out of range for {n} {axis}s")
            return i % n
        k = np.asarray(k)
        if k.dtype == bool:
            if k.shape != (n,):
                raise IndexError(f"a boolean {axis} mask must have {n} elements, not {k.shape}")
            return np.flatnonzero(k)
        if k.ndim != 1 or (k.size and k.dtype.kind not in "iu"):
            raise IndexError(f"a {axis} index is an int, a slice, a 1-d int array or a boolean mask, "
                             f"not {k.dtype} of shape {k.shape}")
        k = k.astype(np.int64)
        bad = (k < -n) | (k >= n)
        if bad.any():
            raise IndexError(f"{axis} {k[bad][0]} is out of range for {n} {axis}s")
        return np.where(k < 0, k + n, k)

    def read_dense(self, row0: int = 0, col0: int = 0, rows: int | None = None,
                   cols: int | None = None) -> npt.NDArray[Any]:
        """A dense C-order window of the matrix as a numpy array.

        >>> block = stowage.open("counts.bpcells")[""].read_dense(0, 0, 10, 10)
        """
        rows = self.shape[0] - row0 if rows is None else rows
        cols = self.shape[1] - col0 if cols is None else cols
        out = _indexing.empty((rows, cols), self.dtype)
        if out.size:
            self._core.read_dense(row0, col0, rows, cols, out)
        return out

    def __array__(self, dtype: npt.DTypeLike = None) -> npt.NDArray[Any]:
        a = self.read_dense()
        return a if dtype is None else a.astype(dtype, copy=False)


class Strings(_Node):
    """An array of str (names, axes; a Daf string matrix reads in C order).

    ``s[i]`` -> str, ``s[a:b]`` -> list of str, ``len(s)`` the number of strings::

        genes = stowage.open("cells.daf")["axes/gene"]
        genes[0], genes[-3:], len(genes)
    """

    def __len__(self) -> int:
        return int(np.prod(self.shape, dtype=np.uint64))

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, C order: ``(n,)``, or a Daf string matrix's two axes::

            store["axes/gene"].shape           # (36601,)
        """
        return tuple(self._info.get("shape") or (0,))

    @overload
    def __getitem__(self, key: int) -> str: ...

    @overload
    def __getitem__(self, key: slice) -> list[str]: ...

    def __getitem__(self, key: int | slice) -> str | list[str]:
        n = len(self)
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            r = range(start, stop, step)
            if not r:
                return []
            lo, hi = min(r[0], r[-1]), max(r[0], r[-1]) + 1
            return self.store._core.read_strings(self.node, lo, hi)[r[0] - lo :: step]
        i = operator.index(key)
        if i < -n or i >= n:
            raise IndexError(f"index {i} is out of range for {n} strings")
        i %= n
        return self.store._core.read_strings(self.node, i, i + 1)[0]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_list())

    def to_list(self) -> list[str]:
        """Every string, in order (one read)::

            names = store["axes/gene"].to_list()
        """
        return self.store._core.read_strings(self.node, 0, len(self))


def _sample_decoder() -> Any:
    """stowage._records' decoder, imported when a sample is first decoded:
    _core knows no record format, and raw bytes need no decoder."""
    try:
        from . import _records
    except ImportError as e:
        raise UnsupportedError("decoding datadings samples needs stowage._records, which this build lacks "
                               "(it needs msgpack-cxx); Records.raw(i) gives a sample's bytes") from e
    return _records.decoder


class Records(_Node):
    """A record set (datadings): ordered samples, each with a str key.

    ``r[i]`` is the decoded sample (a dict, with numpy arrays where
    msgpack-numpy stored them, as datadings' reader returns it), ``r.raw(i)``
    its msgpack bytes; ``r.find(key)`` its index, ``r.get(key)`` the sample,
    ``key in r``; iteration decodes in order, in batches::

        r = stowage.open("train.msgpack")[""]
        first = r[0]                          # {"key": ..., "image": ..., ...}
        some = r[10:20]                       # a list of samples
        sample = r.get("img_00042")
    """

    batch = 256  # samples per call into the library while iterating

    def __init__(self, store: Store, node: str, info: dict[str, Any]) -> None:
        super().__init__(store, node, info)
        self._core = store._core.records(node)

    def __len__(self) -> int:
        return len(self._core)

    def _read(self, begin: int, end: int, decode: bool = True) -> list[Any]:
        try:
            return self._core.read_range(begin, end, _sample_decoder() if decode else None)
        except CorruptError as e:  # the decoder names the sample; add the dataset
            raise CorruptError(f"{self.store.path}: {e}", code=e.code, path=self.store.path, plugin=e.plugin) from None

    def _index(self, i: int) -> int:
        n = len(self)
        i = operator.index(i)
        if i < -n or i >= n:
            raise IndexError(f"sample {i} is out of range for {n} samples")
        return i % n

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step == 1:
                return self._read(start, max(start, stop))
            return [self[j] for j in range(start, stop, step)]
        i = self._index(i)
        return self._read(i, i + 1)[0]

    def raw(self, i: int) -> bytes:
        """The sample's msgpack bytes, unchanged::

            msgpack.unpackb(r.raw(0))
        """
        return self._core.read(self._index(i))

    def key(self, i: int) -> str:
        """The key of sample ``i``::

            r.key(0)                          # "img_00000"
        """
        return self._core.key(self._index(i))

    def keys(self) -> list[str]:
        """Every key, in order::

            index = {k: i for i, k in enumerate(r.keys())}
        """
        return [self._core.key(i) for i in range(len(self))]

    def find(self, key: str) -> int | None:
        """The index of the sample with this key, or None::

            i = r.find("img_00042")
        """
        return self._core.find(key)

    def get(self, key: str, default: Any = None) -> Any:
        """The decoded sample with this key, or ``default`` (as ``dict.get``)::

            sample = r.get("img_00042", {})
        """
        i = self._core.find(key)
        return default if i is None else self[i]

    def __contains__(self, key: str) -> bool:
        return self._core.contains(key)

    def __iter__(self) -> Iterator[Any]:
        n = len(self)
        for begin in range(0, n, self.batch):
            yield from self._read(begin, min(n, begin + self.batch))

    def iter_raw(self) -> Iterator[bytes]:
        """The msgpack bytes of every sample, in order, read in batches::

            total = sum(len(b) for b in r.iter_raw())
        """
        n = len(self)
        for begin in range(0, n, self.batch):
            yield from self._read(begin, min(n, begin + self.batch), False)


_KINDS.update(group=Group, array=Array, sparse=Sparse, strings=Strings, records=Records)
