"""zarr-python's Group API (create_group, create_array, require_*, groups,
arrays, visit, tree), shared by a :class:`~stowage.Store` (its root) and
every :class:`~stowage.Group`, in zarr-python 2.13's names and semantics.

The nodes stay the format plugin's: this module only walks the tree through
``Store.keys``/``describe`` and creates through ``Store._new_array``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from ._errors import InvalidArgumentError

if TYPE_CHECKING:
    from ._nodes import Array, Dims, Group, Node, Store

__all__ = ["Hierarchy", "join", "where"]


def join(parent: str, child: str) -> str:
    """A node path: ``parent/child`` without stray slashes."""
    parent = parent.strip("/")
    child = child.strip("/")
    if not parent:
        return child
    return parent + "/" + child if child else parent


def _guess_chunks(shape: Sequence[int], itemsize: int) -> list[int]:
    """zarr 2's (and h5py's) chunk guess, so that an array made without
    ``chunks`` is chunked as zarr-python would chunk it: a target of 256 KiB
    doubling per tenfold of the array past 1 MiB (128 KiB to 64 MiB), axes
    halved in turn until a chunk is within half of the target."""
    chunks = [max(1, int(n)) for n in shape]
    if not chunks:
        return chunks
    size = float(np.prod(chunks, dtype=np.float64)) * itemsize
    target = min(max(256 * 1024 * 2 ** np.log10(max(size, 1) / 1024.0**2), 128 * 1024), 64 * 1024 * 1024)
    i = 0
    while True:
        chunk_bytes = float(np.prod(chunks, dtype=np.float64)) * itemsize
        if (chunk_bytes < target or abs(chunk_bytes - target) / target < 0.5) and chunk_bytes < 64 * 1024 * 1024:
            break
        if np.prod(chunks, dtype=np.float64) == 1:
            break
        chunks[i % len(chunks)] = -(-chunks[i % len(chunks)] // 2)
        i += 1
    return chunks


def _chunks(chunks: Any, shape: Sequence[int], itemsize: int) -> list[int] | None:
    """zarr's forms of ``chunks``: None, True or "auto" (zarr's guess), False
    (one chunk), an int for every axis, or a shape whose None or -1 entries
    take the whole axis."""
    if chunks is None or chunks is True or (isinstance(chunks, str) and chunks == "auto"):
        return _guess_chunks(shape, itemsize)
    if chunks is False:
        return None
    if isinstance(chunks, (int, np.integer)):
        return [int(chunks)] * len(shape)
    chunks = list(chunks)
    return [n if c is None or c == -1 else int(c) for c, n in zip(chunks, shape)] + chunks[len(shape) :]


_UNSET = object()


def _from_numcodecs(compressor: Any) -> dict[str, Any]:
    """zarr 2's ``compressor`` or zarr 3's ``compressors`` (None, or one
    codec, alone or in a list): a numcodecs codec or its config, or a zarr 3
    codec's ``{"name", "configuration"}`` -> the codec plugin's config (same
    parameters; the plugin refuses ones it lacks)."""
    if isinstance(compressor, (list, tuple)):
        if len(compressor) > 1:
            raise InvalidArgumentError(f"compressors: one codec is taken, not {len(compressor)}")
        compressor = compressor[0] if compressor else None
    if compressor is None:
        return {"type": "raw"}
    if hasattr(compressor, "to_dict"):  # a zarr 3 codec object
        compressor = compressor.to_dict()
    config = dict(compressor.get_config() if hasattr(compressor, "get_config") else compressor)
    if "name" in config and "id" not in config:
        return {"type": config["name"], **dict(config.get("configuration") or {})}
    if "id" not in config:
        raise InvalidArgumentError(f"compressor must be a numcodecs codec or its config with an 'id', "
                                   f"not {compressor!r}")
    return {"type": config.pop("id"), **config}


class Hierarchy:
    """zarr-python's Group methods; ``_hierarchy()`` gives (store, node path)."""

    def _hierarchy(self) -> tuple[Store, str]:
        raise NotImplementedError

    def _child(self, name: str) -> tuple[Store, str]:
        store, node = self._hierarchy()
        return store, join(node, name)

    def _kind(self, path: str) -> str:
        return self._hierarchy()[0].describe(path)["kind"]

    # -- creating
    def create_group(self, name: str, attrs: Mapping[str, Any] | None = None, *, overwrite: bool = False) -> Group:
        """Create a group (its missing ancestors too) and return it, as
        zarr-python's; a node already there is an error (zarr's
        ``ContainsGroupError``; :meth:`require_group` takes an existing one)
        unless ``overwrite``, which removes it first.

        >>> labels = store.create_group("labels", attrs={"source": "manual"})
        >>> labels.create_group("cells/2024")
        """
        store, path = self._child(name)
        if overwrite and path and path in store:
            store.remove(path)
        if path in store:
            raise InvalidArgumentError(
                f"{where(store, path)}: a {self._kind(path)} is already there (require_group takes an existing group)")
        store._core.create(path, {"kind": "group", "attributes": dict(attrs or {})})
        return cast("Group", store[path])

    def require_group(self, name: str) -> Group:
        """The group at ``name``, created if absent, as zarr-python's; an
        array there is an error.

        >>> g = store.require_group("raw")     # twice gives the same group
        """
        store, path = self._child(name)
        if path not in store:
            return self.create_group(name)
        kind = self._kind(path)
        if kind != "group":
            raise InvalidArgumentError(f"{where(store, path)}: is a {kind}, not a group")
        return cast("Group", store[path])

    def create_array(self, name: str, shape: int | Sequence[int] | None = None, dtype: npt.DTypeLike = None,
                     chunks: Any = None, compression: str | Mapping[str, Any] | None = None,
                     attrs: Mapping[str, Any] | None = None, dims: Dims | None = None,
                     shards: Sequence[int] | None = None, *, fill_value: Any = None, data: npt.ArrayLike | None = None,
                     overwrite: bool = False, compressor: Any = _UNSET, compressors: Any = _UNSET) -> Array:
        """Create a dense array and return it, as zarr-python's
        ``create_array``/``create_dataset``.

        ``shape``, ``chunks`` and ``shards`` are in C order; ``data=`` (an
        array-like, a stowage Array included) gives the shape and dtype and
        is written. ``dtype`` defaults to float64 as zarr's does.
        ``chunks=None`` (or True, or zarr 3's "auto") takes zarr 2's guess, so an array is chunked
        as zarr-python would chunk it; False makes one chunk of the whole
        array; an int is every axis, None or -1 in a shape the whole axis.
        Formats without a chunk grid (npy, datg) ignore it. ``fill_value``: what chunks
        never written read as (None: 0); Zarr keeps it, N5 has none and
        refuses any other than 0, and a format that drops it is refused.
        ``compression``: N5's compression object as a dict, or a short form
        such as ``"zstd"`` or ``"gzip:level=9"``; ``None`` for the
        format's default. zarr 2's ``compressor=`` is taken too: a
        numcodecs codec (or its config) whose id names a codec plugin with
        numcodecs' parameters (blosc, zstd, zlib, gzip, lz4), or None for
        none (zarr's "default" is Blosc; stowage's is the format's); zarr
        3's ``compressors=`` takes one such codec, alone or in a list, or a
        zarr 3 codec's ``{"name": ..., "configuration": ...}``.
        ``dims``: dimension names, or ``(name, labels)`` pairs with
        ``labels`` a list of str (kept where the format stores labels,
        otherwise in the ``stowage_labels`` attribute, as ``stowage-convert``
        does). ``shards``: the shard shape, a multiple of ``chunks`` (Zarr
        v3's ``sharding_indexed``; other formats refuse it).
        ``overwrite=True`` removes a node already there first; otherwise the
        format decides (Zarr refuses an existing array).

        >>> a = store.create_array("raw", shape=(64, 64), dtype="uint16", chunks=(32, 32), fill_value=7)
        >>> b = group.create_array("copy", data=numpy.arange(10), compression="zstd")
        """
        store, path = self._child(name)
        if compressors is not _UNSET:  # zarr 3's name
            if compressor is not _UNSET:
                raise InvalidArgumentError(f"{where(store, path)}: give compressor= or compressors=, not both")
            compressor = compressors
        if compressor is not _UNSET:
            if compression is not None:
                raise InvalidArgumentError(f"{where(store, path)}: give compression= or compressor=, not both")
            compression = _from_numcodecs(compressor)
        values = None
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        if data is not None:
            values = data if isinstance(data, np.ndarray) else np.asarray(data)
            if shape is not None and tuple(shape) != values.shape:
                raise InvalidArgumentError(f"{where(store, path)}: shape {tuple(shape)} is not data's {values.shape}")
            shape = values.shape
            dtype = values.dtype if dtype is None else dtype
        if shape is None:
            raise InvalidArgumentError(f"{where(store, path)}: create_array needs shape= (or data=)")
        shape = tuple(shape)
        dtype = np.dtype(dtype)  # None is float64, as zarr's
        if overwrite and path in store:
            store.remove(path)
        array = store._new_array(path, shape, dtype, _chunks(chunks, shape, dtype.itemsize), compression, attrs,
                                 dims, shards, fill_value)
        if values is not None:
            array.write(values)
        return array

    def create_dataset(self, name: str, **kwargs: Any) -> Array:
        """zarr 2's name for :meth:`create_array`.

        >>> store.create_dataset("x", shape=(1000, 1000), dtype="f4")
        """
        return self.create_array(name, **kwargs)

    def require_array(self, name: str, shape: int | Sequence[int], dtype: npt.DTypeLike = None, exact: bool = False,
                      **kwargs: Any) -> Array:
        """The array at ``name`` if it has this shape and a dtype ``dtype``
        casts to safely (``exact=True``: the same dtype), else TypeError, as
        zarr 2's ``require_dataset``; created with ``kwargs`` (those of
        :meth:`create_array`) if absent. ``dtype=None`` is float64, as zarr's.

        >>> a = store.require_array("raw", shape=(64, 64), dtype="uint16", chunks=(32, 32))
        """
        store, path = self._child(name)
        if path not in store:
            return self.create_array(name, shape=shape, dtype=dtype, **kwargs)
        kind = self._kind(path)
        if kind != "array":
            raise InvalidArgumentError(f"{where(store, path)}: is a {kind}, not an array")
        a = cast("Array", store[path])
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        dtype = np.dtype(dtype)
        if shape != a.shape:
            raise TypeError(f"{where(store, path)}: shape do not match existing array; expected {a.shape}, got {shape}")
        if exact and dtype != a.dtype:
            raise TypeError(f"{where(store, path)}: dtypes do not match exactly; expected {a.dtype}, got {dtype}")
        if not np.can_cast(dtype, a.dtype):
            raise TypeError(f"{where(store, path)}: dtypes ({dtype}, {a.dtype}) cannot be safely cast")
        return a

    def require_dataset(self, name: str, shape: int | Sequence[int], dtype: npt.DTypeLike = None, exact: bool = False,
                        **kwargs: Any) -> Array:
        """zarr 2's name for :meth:`require_array`.

        >>> store.require_dataset("x", shape=(1000, 1000), dtype="f4")
        """
        return self.require_array(name, shape, dtype, exact, **kwargs)

    # -- browsing
    def _children(self) -> Iterator[tuple[str, str]]:
        store, node = self._hierarchy()
        for name in sorted(store.keys(node)):
            yield name, join(node, name)

    def items(self) -> list[tuple[str, Node]]:
        """(name, node) of every child, sorted by name, as zarr's Group.

        >>> dict(store.items())
        """
        store = self._hierarchy()[0]
        return [(name, store[path]) for name, path in self._children()]

    def values(self) -> list[Node]:
        """Every child node, sorted by name, as zarr's Group.

        >>> [node.name for node in store.values()]
        """
        return [node for _, node in self.items()]

    def _of_kind(self, kind: str, recurse: bool = False) -> Iterator[tuple[str, Any]]:
        store = self._hierarchy()[0]
        for name, path in self._children():
            node = store[path]
            if node.describe()["kind"] == kind:
                yield name, node
            if recurse and node.describe()["kind"] == "group":
                yield from cast("Group", node)._of_kind(kind, recurse)

    def groups(self) -> Iterator[tuple[str, Group]]:
        """An iterator of (name, Group) of the child groups, sorted, as zarr's.

        >>> for name, g in store.groups(): print(name)
        """
        return self._of_kind("group")

    def group_keys(self) -> Iterator[str]:
        """An iterator of the child groups' names, as zarr's.

        >>> sorted(store.group_keys())
        ['labels', 'raw']
        """
        return (name for name, _ in self.groups())

    def arrays(self, recurse: bool = False) -> Iterator[tuple[str, Array]]:
        """An iterator of (name, Array) of the child arrays (dense arrays;
        sparse matrices, strings and records are not zarr arrays and are only
        in :meth:`items`), sorted; ``recurse=True`` goes into subgroups,
        giving each array's own name, as zarr 2's.

        >>> {name: a.shape for name, a in store.arrays()}
        """
        return self._of_kind("array", recurse)

    def array_keys(self, recurse: bool = False) -> Iterator[str]:
        """An iterator of the child arrays' names, as zarr's.

        >>> list(store["raw"].array_keys())
        ['s0', 's1']
        """
        return (name for name, _ in self.arrays(recurse))

    def visitvalues(self, func: Callable[[Node], Any]) -> Any:
        """Call ``func(node)`` on every node below, depth first in name
        order, as zarr's; a value other than None stops the walk and is
        returned.

        >>> store.visitvalues(lambda node: node if node.name == "s0" else None)
        """

        def walk(parent: Any) -> Iterator[Node]:  # self, then the Groups below
            for _, node in parent.items():
                yield node
                if node.describe()["kind"] == "group":
                    yield from walk(node)

        for node in walk(self):
            value = func(node)
            if value is not None:
                return value
        return None

    def visit(self, func: Callable[[str], Any]) -> Any:
        """Call ``func(path)`` with each node's path relative to this group,
        as zarr's (see :meth:`visitvalues`).

        >>> paths = []; store.visit(paths.append)
        """
        base = self._hierarchy()[1]
        return self.visitvalues(lambda node: func(node.node[len(base) :].lstrip("/")))

    visitkeys = visit

    def visititems(self, func: Callable[[str, Node], Any]) -> Any:
        """Call ``func(path, node)`` on every node below, as zarr's.

        >>> store.visititems(lambda path, node: print(path, node))
        """
        base = self._hierarchy()[1]
        return self.visitvalues(lambda node: func(node.node[len(base) :].lstrip("/"), node))

    @property
    def info(self) -> str:
        """A printable summary, as zarr-python's Group ``info``: path, type,
        format, members, and the child arrays and groups by name.

        >>> print(store.info)
        Name        : /data/v.zarr
        Type        : stowage.Group
        ...
        """
        from ._nodes import _info_text

        store, node = self._hierarchy()
        groups, arrays = list(self.group_keys()), list(self.array_keys())
        items = [("Name", where(store, node)), ("Type", "stowage.Group"), ("Format", store.format),
                 ("Store path", store.path), ("Read-only", str(store.mode == "r")),
                 ("No. members", str(len(store.keys(node)))), ("No. arrays", str(len(arrays))),
                 ("No. groups", str(len(groups)))]
        items += [("Arrays", ", ".join(arrays))] if arrays else []
        items += [("Groups", ", ".join(groups))] if groups else []
        return _info_text(items)

    def tree(self, level: int | None = None) -> str:
        """The hierarchy as text, drawn as zarr's ``tree()`` draws it (arrays
        with shape and dtype); ``level``: how deep to go. A ``str``:
        ``print(store.tree())``.

        >>> print(store.tree())
        /
         ├── labels
         └── raw (64, 64) uint16
        """
        from ._nodes import _Text

        store, node = self._hierarchy()
        lines = [node.rsplit("/", 1)[-1] or "/"]

        def walk(path: str, prefix: str, depth: int) -> None:
            if level is not None and depth >= level:
                return
            names = sorted(store.keys(path))
            for i, name in enumerate(names):
                last = i == len(names) - 1
                info = store.describe(join(path, name))
                lines.append(prefix + ("└── " if last else "├── ") + _label(name, info))
                if info["kind"] == "group":
                    walk(join(path, name), prefix + ("    " if last else "│   "), depth + 1)

        walk(node, " ", 0)
        return _Text("\n".join(lines))


def _label(name: str, info: dict[str, Any]) -> str:
    if "shape" in info and "dtype" in info:
        return f"{name} {tuple(info['shape'])} {np.dtype(info['dtype'])}"
    return name


def where(store: Store, path: str) -> str:
    """A node as errors name it: the store's path as given, then the node."""
    return store.path.rstrip("/") + "/" + path if path else store.path
