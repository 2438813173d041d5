"""stowage.convert and stowage.plugins: the library calls behind
stowage-convert and stowage-plugin-list, with the same results (their
--json documents, built by the same C++ functions)."""

from __future__ import annotations

import os
from typing import Any, Callable, Sequence

from . import _core

__all__ = ["convert", "plugins", "plugin_detail"]


def convert(source: str | os.PathLike[str], destination: str | os.PathLike[str], *,
            progress: Callable[[dict[str, Any]], None] | None = None,
            plugin_path: Sequence[str | os.PathLike[str]] | None = None, threads: int | None = None,
            **options: Any) -> dict[str, Any]:
    """Convert a dataset, or a node of one (``"PATH::inner/node"``), into any
    format, as ``stowage-convert SOURCE DESTINATION`` does; returns its
    ``--json`` summary as a dict (``source``, ``destination``, ``from``,
    ``to``, ``nodes``, ``chunks``, ``bytes_in``, ``bytes_out``, ``ratio``,
    ``seconds``, ``mb_per_s``, ``notes``).

    Options (the tool's, with ``_`` for ``-``): ``from_`` and ``to`` (format
    ids), ``compression`` (a dict or a short form such as ``"zstd:level=5"``),
    ``chunks`` (a list or ``"64,64,64"``), ``cast`` (``"float32"`` or
    ``"bool=uint8,uint32=float64"``), ``cast_overflow`` (``"error"``,
    ``"clip"``, ``"wrap"``), ``axes`` (a list or ``"gene,cell"``),
    ``overwrite``, ``drop_metadata``, ``create_only``, ``part=(i, n)``,
    ``zarr_version`` (2 or 3, shorthand for ``open_options={"zarr_version":
    N}``; a new Zarr store is 3 by default), ``shards`` (the shard shape, a
    multiple of the chunks, for a format that writes shards such as Zarr v3:
    a list or ``"256,256,256"``), ``open_options`` (a dict the destination
    store is opened with, the options its format declares, e.g.
    ``{"zarr_version": 2}``), ``source_storage_options`` and
    ``destination_storage_options`` (dicts of the storage options of each
    side's backend, as :func:`open`'s ``storage_options``). The summary also
    has ``open_options`` and ``shards`` as used (never the storage options).
    ``progress``: called with a dict (``bytes_done``, ``bytes_total``,
    ``chunks``, ``seconds``) after each chunk, from a worker thread; an
    exception it raises stops the conversion (nothing is written) and is
    raised here. ``threads``: worker threads (default: all cores).
    Errors raise :class:`stowage.Error` subclasses, and nothing is written.

    For example, an N5 volume into a sharded Zarr v3 store, then one node of
    it back with another codec::

        summary = stowage.convert("volume.n5", "volume.zarr", to="zarr", shards=[256, 256, 256],
                                  compression="zstd:level=5")
        print(summary["ratio"], summary["mb_per_s"])
        stowage.convert("volume.zarr::raw/s0", "s0.n5", compression="gzip")
    """
    if threads is not None:
        _core.set_threads(int(threads))
    if "from" in options:  # convert(src, dst, **{"from": "n5"})
        options["from_"] = options.pop("from")
    path = None if plugin_path is None else [os.fsdecode(os.fspath(p)) for p in plugin_path]
    return _core.convert(os.fsdecode(os.fspath(source)), os.fsdecode(os.fspath(destination)), options,
                         progress, path)


def plugins(*, plugin_path: Sequence[str | os.PathLike[str]] | None = None,
            load: bool = True) -> list[dict[str, Any]]:
    """Every plugin found, as the entries of ``stowage-plugin-list --json``
    (dicts with ``id``, ``kind``, ``state``, ``path``, ``version``, ``abi``,
    ``capabilities``, ``description``, ``aliases``, ``extensions`` and
    ``reason`` or ``shadowed_by`` when they apply). ``load=False`` lists the
    files without loading them.

    >>> sorted({p["kind"] for p in stowage.plugins()})
    ['codec', 'format', 'storage']
    """
    path = None if plugin_path is None else [os.fsdecode(os.fspath(p)) for p in plugin_path]
    return _core.plugins(path, load)["plugins"]


def plugin_detail(id: str, *, plugin_path: Sequence[str | os.PathLike[str]] | None = None
                  ) -> dict[str, Any] | None:  # noqa: A002 (the tool's --detail ID)
    """One plugin's entry with ``build_info`` and ``params_schema``
    (``stowage-plugin-list --detail ID --json``), or None.

    >>> stowage.plugin_detail("zstd")["kind"]
    'codec'
    >>> stowage.plugin_detail("no-such-plugin") is None
    True
    """
    path = None if plugin_path is None else [os.fsdecode(os.fspath(p)) for p in plugin_path]
    return _core.plugin_detail(id, path)
