"""zarr-python's module-level functions (open_group, open_array, group,
create_array, array, zeros, ones, full, empty) with zarr's modes, so that a
zarr-python script runs with ``import stowage as zarr``-style changes only.

Unlike :func:`stowage.open`'s mode ``"w"`` (a transaction published at
close), these follow zarr: ``"w"`` replaces what is at the path when the
call returns (an empty dataset is published at once, atomically), and every
write after it is published when it returns, with no close to call. That
needs a format whose writes are published as they return (N5, Zarr); npy,
datg and the other single-file formats hold writes until close and are
refused here: use ``with stowage.open(path, "w") as store`` for them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias, cast

import numpy.typing as npt

from ._errors import InvalidArgumentError, NotFoundError
from ._hierarchy import join
from ._nodes import Array, Group, PathLike, Store
from ._nodes import open as _open

__all__ = ["open_group", "open_array", "group", "create_array", "array", "zeros", "ones", "full", "empty"]

_MODES = ("r", "r+", "a", "w", "w-", "x")
ZarrMode: TypeAlias = Literal["r", "r+", "a", "w", "w-", "x"]
# zarr's store argument: a Store, a path, or None (a new in-memory Zarr).
StoreLike: TypeAlias = "Store | PathLike | None"


def _exists(path: str, storage_options: Mapping[str, Any] | None) -> bool:
    try:
        _open(path, "r", storage_options=storage_options).close()
        return True
    except NotFoundError:
        return False


def _writable(store: Store) -> Store:
    """``store`` if its writes are published as they return; else refused."""
    if not store._shared_writes:
        store.discard()
        raise InvalidArgumentError(
            f"{store.path}: {store.format} holds writes until its store is closed, so it cannot be written with "
            f"zarr's modes; use `with stowage.open(path, 'w') as store:`")
    return store


def _store(store: StoreLike, mode: ZarrMode, node: str, format: str | None, storage_options: Mapping[str, Any] | None,
           zarr_format: int | None) -> Store:
    """The open Store for zarr's ``store`` argument, ``mode`` and node path:
    a Store as it is; a path (None: a new in-memory Zarr) opened for
    reading, or for writing in place after creating an empty dataset where
    there is none (``"w"`` without a node: replacing the one there)."""
    if isinstance(store, Store):
        return store
    if mode not in _MODES:
        raise InvalidArgumentError(f"mode must be one of {', '.join(map(repr, _MODES))}, not {mode!r}")
    path = f"mem://stowage-{uuid.uuid4().hex}.zarr" if store is None else os.fsdecode(os.fspath(store))
    if mode == "r":
        return _open(path, "r", format, storage_options=storage_options)
    exists = store is not None and mode != "a" and _exists(path, storage_options)
    if mode in ("w-", "x") and exists and not node:
        raise InvalidArgumentError(f"{path}: already exists (mode {mode!r} creates only)")
    if mode == "r+" and not exists:
        raise NotFoundError(f"{path}: not found (mode 'r+' opens an existing dataset)")
    options = None if zarr_format is None else {"zarr_version": int(zarr_format)}
    if mode == "w" and not node and exists:
        # Published empty at once: zarr's "w" has replaced the old data when open returns.
        with _writable(_open(path, "w", format, options=options, storage_options=storage_options)):
            pass
    # stowage's "a" is zarr's: in place, created empty and published at once where absent
    return _writable(_open(path, "a", format, options=options, storage_options=storage_options))


def _version(zarr_format: int | None, zarr_version: int | None) -> int | None:
    return zarr_format if zarr_format is not None else zarr_version


def open_group(store: StoreLike = None, mode: ZarrMode = "a", *, path: str | None = None, format: str | None = None,
               storage_options: Mapping[str, Any] | None = None, attrs: Mapping[str, Any] | None = None,
               zarr_format: Literal[2, 3] | None = None, zarr_version: Literal[2, 3] | None = None) -> Store | Group:
    """Open (or create, as ``mode`` says) a group, as ``zarr.open_group``:
    the store's root, or the group at ``path`` inside it. Modes are zarr's:
    ``"r"``, ``"r+"``, ``"a"`` (read and write, created if absent), ``"w"``
    (replace now), ``"w-"``/``"x"`` (create, fail if present). Writes are
    published as they return (see the module's docstring). A new Zarr is
    v3 unless ``zarr_format=2`` (zarr-python 2's ``zarr_version=2``).

    >>> root = stowage.open_group("data.zarr", mode="w")
    >>> raw = root.create_group("raw")
    """
    node = (path or "").strip("/")
    s = _store(store, mode, node, format, storage_options, _version(zarr_format, zarr_version))
    g: Store | Group
    if not node:
        g = s
    elif mode in ("r", "r+"):
        g = cast(Group, s[node])
    elif mode == "w":
        g = s.create_group(node, overwrite=True)
    elif mode in ("w-", "x"):
        g = s.create_group(node)
    else:
        g = s.require_group(node)
    if attrs:
        g.attrs.update(attrs)
    return g


def group(store: StoreLike = None, *, path: str | None = None, overwrite: bool = False, format: str | None = None,
          storage_options: Mapping[str, Any] | None = None, attrs: Mapping[str, Any] | None = None,
          zarr_format: Literal[2, 3] | None = None, zarr_version: Literal[2, 3] | None = None) -> Store | Group:
    """``zarr.group``: a group to write in, replacing what is there when
    ``overwrite`` is true (a new in-memory Zarr when ``store`` is None).

    >>> g = stowage.group("data.zarr")
    """
    return open_group(store, "w" if overwrite else "a", path=path, format=format, storage_options=storage_options,
                      attrs=attrs, zarr_format=zarr_format, zarr_version=zarr_version)


def open_array(store: StoreLike = None, mode: ZarrMode = "a", *, path: str | None = None,
               shape: int | tuple[int, ...] | list[int] | None = None, format: str | None = None,
               storage_options: Mapping[str, Any] | None = None, zarr_format: Literal[2, 3] | None = None,
               zarr_version: Literal[2, 3] | None = None, **kwargs: Any) -> Array:
    """Open (or create, as ``mode`` says) an array, as ``zarr.open_array``:
    the dataset's root array (N5 and Zarr allow one), or the one at
    ``path``. Modes as :func:`open_group`'s; with ``path``, ``"w"``
    replaces only that node, as zarr's. An absent array is created from
    ``shape`` and the keyword arguments of :meth:`Group.create_array`
    (``dtype``, ``chunks``, ``fill_value``, ``compressor``, ``data``...).

    >>> z = stowage.open_array("a.zarr", mode="w", shape=(1000, 1000), chunks=(100, 100), dtype="i4")
    >>> z[0, :] = 7
    """
    node = (path or "").strip("/")
    s = _store(store, mode, node, format, storage_options, _version(zarr_format, zarr_version))
    present = node in s and (node or s.describe("")["kind"] != "group")
    if mode in ("r", "r+") or (mode == "a" and present):
        return cast(Array, s[node])
    if present and mode in ("w-", "x"):
        raise InvalidArgumentError(f"{join(s.path, node)}: an array is already there (mode {mode!r} creates only)")
    if shape is None and kwargs.get("data") is None:
        raise InvalidArgumentError(f"{join(s.path, node)}: creating an array needs shape= (or data=)")
    return s.create_array(node, shape=shape, overwrite=mode == "w" and bool(node), **kwargs)


def create_array(store: StoreLike = None, *, name: str | None = None,
                 shape: int | tuple[int, ...] | list[int] | None = None, overwrite: bool = False,
                 **kwargs: Any) -> Array:
    """zarr-python 3's ``zarr.create_array``: a new array at ``name`` in
    ``store`` (None: in memory); an array already there is an error unless
    ``overwrite``. ``data=`` gives the shape and dtype and is written.

    >>> z = stowage.create_array("a.zarr", shape=(100, 100), chunks=(10, 10), dtype="f4", fill_value=-1)
    """
    return open_array(store, "w" if overwrite else "w-", path=name, shape=shape, **kwargs)


def array(data: npt.ArrayLike, store: StoreLike = None, *, path: str | None = None, overwrite: bool = False,
          **kwargs: Any) -> Array:
    """``zarr.array``: a new array holding ``data`` (in memory when
    ``store`` is None); an array already there is an error unless
    ``overwrite``, as zarr's.

    >>> z = stowage.array(numpy.arange(100).reshape(10, 10), chunks=(5, 5))
    """
    return create_array(store, name=path, overwrite=overwrite, data=data, **kwargs)


def full(shape: int | tuple[int, ...] | list[int], fill_value: Any, store: StoreLike = None, *, path: str | None = None,
         overwrite: bool = False, **kwargs: Any) -> Array:
    """``zarr.full``: a new array of ``shape`` that reads ``fill_value``
    until written (nothing is written; N5 refuses a nonzero fill value).

    >>> z = stowage.full((100, 100), 42, chunks=(10, 10), dtype="i4", store="a.zarr")
    """
    return create_array(store, name=path, shape=shape, overwrite=overwrite, fill_value=fill_value, **kwargs)


def zeros(shape: int | tuple[int, ...] | list[int], store: StoreLike = None, *, path: str | None = None,
          overwrite: bool = False, **kwargs: Any) -> Array:
    """``zarr.zeros``: a new array reading 0 until written.

    >>> z = stowage.zeros((10000, 10000), chunks=(1000, 1000), dtype="i4", store="a.zarr")
    """
    return full(shape, 0, store, path=path, overwrite=overwrite, **kwargs)


def ones(shape: int | tuple[int, ...] | list[int], store: StoreLike = None, *, path: str | None = None,
         overwrite: bool = False, **kwargs: Any) -> Array:
    """``zarr.ones``: a new array reading 1 until written.

    >>> z = stowage.ones((100, 100), chunks=(10, 10), store="a.zarr")
    """
    return full(shape, 1, store, path=path, overwrite=overwrite, **kwargs)


def empty(shape: int | tuple[int, ...] | list[int], store: StoreLike = None, *, path: str | None = None,
          overwrite: bool = False, **kwargs: Any) -> Array:
    """``zarr.empty``: a new array whose unwritten values are the format's
    fill value (0 here; zarr leaves them undefined).

    >>> z = stowage.empty((100, 100), chunks=(10, 10), dtype="f8", store="a.zarr")
    """
    return create_array(store, name=path, shape=shape, overwrite=overwrite, **kwargs)
