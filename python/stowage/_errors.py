"""The exceptions stowage raises.

Each is a :class:`stowage.Error` and also the builtin exception a Python
program would catch for the same problem, so ``except FileNotFoundError``
and ``except KeyError`` work as they do with files and dicts.
The message is the library's own and names the file.
"""

from __future__ import annotations

import builtins
from typing import Any

__all__ = [
    "Error",
    "NotFoundError",
    "NodeNotFoundError",
    "InvalidArgumentError",
    "CorruptError",
    "UnsupportedError",
    "PermissionDeniedError",
    "StorageIOError",
    "PluginError",
    "InternalError",
]


class Error(Exception):
    """Base class of every stowage error.

    Attributes: ``code`` (the library's error code name, e.g. ``"corrupt"``),
    ``path`` (the file or dataset, as given) and ``plugin`` (e.g.
    ``"format n5"``; empty when the core raised it).

    >>> try:
    ...     stowage.open("/no/such/volume.n5")
    ... except stowage.Error as e:
    ...     print(type(e).__name__, e.code, e.path)
    NotFoundError not found /no/such/volume.n5
    """

    message: str
    code: str
    path: str
    plugin: str

    # One positional argument only: OSError's constructor would read a
    # second one as errno and strerror.
    def __init__(self, message: str, *, code: str = "", path: str = "", plugin: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.path = path
        self.plugin = plugin

    @classmethod
    def _from_core(cls, message: str, code: str, path: str, plugin: str) -> Error:
        """Made by the extension when the C++ library throws."""
        return cls(message, code=code, path=path, plugin=plugin)

    def __str__(self) -> str:
        # KeyError's own __str__ would quote the message as a repr.
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.message, self.code, self.path, self.plugin))


def _rebuild(cls: type[Error], message: str, code: str, path: str, plugin: str) -> Error:
    return cls(message, code=code, path=path, plugin=plugin)


class NotFoundError(Error, builtins.FileNotFoundError):
    """A file, dataset or plugin that does not exist; a ``FileNotFoundError``.

    >>> try:
    ...     stowage.open("/no/such/volume.n5")
    ... except FileNotFoundError as e:
    ...     print(e)
    /no/such/volume.n5: no such file or directory
    """


class NodeNotFoundError(Error, builtins.KeyError):
    """A node (group, array, ...) that does not exist inside an open store;
    a ``KeyError``, as a missing key of zarr-python's ``Group`` is::

        try:
            a = store["raw/s9"]
        except KeyError as e:
            print(e)             # volume.n5/raw/s9: no group or dataset 'raw/s9'
    """


class InvalidArgumentError(Error, builtins.ValueError):
    """A bad argument: a wrong shape, dtype, mode, option or region; a ``ValueError``.

    >>> try:
    ...     stowage.open("volume.n5", mode="x")
    ... except ValueError as e:
    ...     print(e)
    mode must be 'r', 'r+', 'w' or 'w+' ('a'), not 'x'
    """


class CorruptError(Error, builtins.ValueError):
    """Data that cannot be decoded: damaged or not what its format says; a ``ValueError``::

        try:
            block = store["raw/s0"][0:64, 0:64, 0:64]
        except stowage.CorruptError as e:
            print(e.path, e.plugin, e)     # e.g. the chunk file and "codec zstd"
    """


class UnsupportedError(Error, builtins.ValueError):
    """Something the format or plugin cannot do (e.g. write, or a dtype it lacks);
    a ``ValueError``::

        try:
            stowage.open("matrix.npy", "r+").attrs["unit"] = "um"
        except stowage.UnsupportedError:
            ...                            # .npy keeps no attributes
    """


class PermissionDeniedError(Error, builtins.PermissionError):
    """The operating system refused access to a file; a ``PermissionError``::

        try:
            stowage.open("/root/volume.n5")
        except PermissionError as e:
            print(e.path)
    """


class StorageIOError(Error, builtins.OSError):
    """Any other input/output failure (disk full, read error, ...); an ``OSError``::

        try:
            store.close()                  # publishes what was written
        except OSError as e:               # stowage.StorageIOError, e.g. disk full
            print(e)
    """


# ImportError's path may be None, Error's is always a str: mypy sees the two
# declarations disagree, though the value here is always a str.
class PluginError(Error, builtins.ImportError):  # type: ignore[misc]
    """A plugin that was built for another plugin ABI; an ``ImportError``::

        try:
            stowage.open("volume.n5", plugin_path=["old-plugins/"])
        except ImportError as e:           # stowage.PluginError
            print(e.plugin, e)
    """


class InternalError(Error, builtins.RuntimeError):
    """A bug in stowage or a plugin; a ``RuntimeError``. Please report it
    with the message, which names the plugin::

        except stowage.InternalError as e:
            print(e.plugin, e)
    """
