"""The exceptions stowage raises.

Each is a :class:`stowage.Error` and also the builtin exception a Python
program would catch for the same problem, so ``except FileNotFoundError``
and ``except KeyError`` work as they do with files and dicts.
The message is the library's own and names the file.
"""

import builtins

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
    """

    # One positional argument only: OSError's constructor would read a
    # second one as errno and strerror.
    def __init__(self, message, *, code="", path="", plugin=""):
        super().__init__(message)
        self.message = message
        self.code = code
        self.path = path
        self.plugin = plugin

    @classmethod
    def _from_core(cls, message, code, path, plugin):
        """Made by the extension when the C++ library throws."""
        return cls(message, code=code, path=path, plugin=plugin)

    def __str__(self):
        # KeyError's own __str__ would quote the message as a repr.
        return self.message

    def __reduce__(self):
        return (_rebuild, (type(self), self.message, self.code, self.path, self.plugin))


def _rebuild(cls, message, code, path, plugin):
    return cls(message, code=code, path=path, plugin=plugin)


class NotFoundError(Error, builtins.FileNotFoundError):
    """A file, dataset or plugin that does not exist."""


class NodeNotFoundError(Error, builtins.KeyError):
    """A node (group, array, ...) that does not exist inside an open store."""


class InvalidArgumentError(Error, builtins.ValueError):
    """A bad argument: a wrong shape, dtype, mode, option or region."""


class CorruptError(Error, builtins.ValueError):
    """Data that cannot be decoded: damaged or not what its format says."""


class UnsupportedError(Error, builtins.ValueError):
    """Something the format or plugin cannot do (e.g. write, or a dtype it lacks)."""


class PermissionDeniedError(Error, builtins.PermissionError):
    """The operating system refused access to a file."""


class StorageIOError(Error, builtins.OSError):
    """Any other input/output failure (disk full, read error, ...)."""


class PluginError(Error, builtins.ImportError):
    """A plugin that was built for another plugin ABI."""


class InternalError(Error, builtins.RuntimeError):
    """A bug in stowage or a plugin."""
