"""Stores and the nodes inside them: Group, Array, Sparse, Strings, Records.

Every object here is a view on a node of an open store (``_core.Store``,
the C++ ``stowage::Store``); the values stay on disk until indexed.
Objects pickle as (path, format, mode, node, plugin_path) and reopen the
store where they are unpickled, so dask workers and DataLoader workers can
receive them; a store opened with ``mode="w"`` reopens as ``"r+"`` (a worker
must not truncate what the client made).
"""

import operator
import threading

import numpy as np

from . import _core
from ._errors import CorruptError, InvalidArgumentError, NodeNotFoundError

__all__ = ["open", "Store", "Group", "Array", "Sparse", "Strings", "Records"]

_KINDS = {}  # node kind ("array", ...) -> the class showing it


def _join(parent, child):
    parent = parent.strip("/")
    child = child.strip("/")
    if not parent:
        return child
    return parent + "/" + child if child else parent


# ---- opening and reopening ------------------------------------------------------


def open(path, mode="r", format=None, *, plugin_path=None, options=None):  # noqa: A001 (as builtins.open)
    """Open a dataset and return its :class:`Store`.

    ``path``: a file or directory (``os.PathLike`` accepted). ``mode``:
    ``"r"`` read, ``"r+"`` read and write an existing dataset, ``"w"``
    create (replacing what is there), ``"w+"`` create if absent.
    ``format``: a format id (``"n5"``, ``"datg"``, ``"daf"``, ``"bpcells"``,
    ``"datadings"``, ``"npy"``); ``None`` detects it (when reading) or takes
    it from the extension (when creating). ``plugin_path``: directories
    searched for plugins before ``STOWAGE_PLUGIN_PATH`` and the installed
    ones. ``options``: a dict passed to the format plugin.
    """
    path = _fspath(path)
    plugin_path = None if plugin_path is None else [_fspath(p) for p in plugin_path]
    core = _core.Store.open(path, mode, format, options, plugin_path)
    return Store(core, mode, plugin_path, options)


def _fspath(p):
    import os

    return os.fsdecode(os.fspath(p))


# Stores reopened by unpickling, per process: each task of a dask graph
# unpickles its Array, and reopening the dataset for every task would read
# its metadata again and again.
_reopened = {}
_reopened_lock = threading.Lock()


def _reopen(path, format, mode, plugin_path, options):
    key = (path, format, mode, tuple(plugin_path or ()), repr(options))
    with _reopened_lock:
        store = _reopened.get(key)
        if store is None:
            store = open(path, mode, format, plugin_path=plugin_path, options=options)
            _reopened[key] = store
        return store


def _reopen_node(store_args, node):
    return _reopen(*store_args)[node]


class Store:
    """An open dataset: a tree of nodes with JSON attributes.

    ``store["a/b"]`` is the node at that path (a :class:`Group`,
    :class:`Array`, :class:`Sparse`, :class:`Strings` or :class:`Records`);
    ``store[""]`` is the root, which for a single-array dataset (datg,
    BPCells, npy) is that array. Iterating gives the root's child names.
    Use it as a context manager, or call :meth:`close`, when writing.
    """

    def __init__(self, core, mode, plugin_path=None, options=None):
        self._core = core
        # Kept here so that a closed store still pickles and prints.
        self._path = core.path
        self._format = core.format
        self.mode = mode
        self.plugin_path = plugin_path
        self._options = options

    # -- what it is
    @property
    def path(self):
        """The path as given to :func:`open`."""
        return self._path

    @property
    def format(self):
        """The format id (``"n5"``, ``"datg"``, ...)."""
        return self._format

    @property
    def attrs(self):
        """The root's attributes (a new dict; assign to replace them)."""
        return self._core.describe("").get("attributes", {})

    @attrs.setter
    def attrs(self, value):
        self._core.set_attributes("", dict(value))

    @property
    def root(self):
        """The root node (``store[""]``)."""
        return self[""]

    # -- the tree
    def keys(self, node=""):
        """Names of the children of ``node`` (default: the root)."""
        return list(self._core.list(node))

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self.keys())

    def __contains__(self, node):
        try:
            self._core.describe(node)
        except NodeNotFoundError:
            return False
        return True

    def __getitem__(self, node):
        if not isinstance(node, str):
            raise TypeError(f"a node path is a str, not {type(node).__name__}")
        info = self._core.describe(node)
        return _KINDS[info["kind"]](self, node.strip("/"), info)

    def describe(self, node=""):
        """The format plugin's description of a node, as a dict."""
        return self._core.describe(node)

    def command(self, node, name, args=None):
        """A format-specific command (e.g. datadings ``"verify"``); returns a dict."""
        return self._core.command(node, name, args)

    # -- writing
    def create_group(self, node, attrs=None):
        """Create a group at ``node`` and return it."""
        self._core.create(node, {"kind": "group", "attributes": dict(attrs or {})})
        return self[node]

    def create_array(self, node, shape, dtype, chunks=None, compression=None, attrs=None, dims=None, shards=None):
        """Create a dense array and return it (its values are the fill value, 0).

        ``shape`` and ``chunks`` are in C order (``chunks=None``: the format's
        default, or the whole array). ``compression``: N5's compression
        object as a dict, or a short form such as ``"zstd"`` or
        ``"gzip:level=9"``; ``None`` for the format's default.
        ``dims``: dimension names, or ``(name, labels)`` pairs with ``labels``
        a list of str (kept where the format stores labels, otherwise in the
        ``stowage_labels`` attribute, as ``stowage-convert`` does).
        ``shards``: the shard shape, a multiple of ``chunks`` (Zarr v3's
        ``sharding_indexed``; other formats refuse it).
        """
        shape = [operator.index(n) for n in shape]
        desc = {"kind": "array", "dtype": _dtype_name(dtype), "shape": shape}
        desc["chunks"] = [operator.index(n) for n in chunks] if chunks is not None else shape
        if shards is not None:
            desc["shards"] = [operator.index(n) for n in shards]
        if compression is not None:
            desc["codec"] = _core.parse_compression_spec(compression) if isinstance(compression, str) else compression
        return self._create(node, desc, attrs, dims)

    def write_sparse(self, node, matrix, attrs=None, dims=None):
        """Write a ``scipy.sparse`` matrix (CSR stays CSR, anything else is
        stored CSC) where the format holds sparse matrices (BPCells, Daf)."""
        import scipy.sparse

        if not scipy.sparse.issparse(matrix):
            raise InvalidArgumentError("write_sparse takes a scipy.sparse matrix, not " + type(matrix).__name__)
        layout = "csr" if matrix.format == "csr" else "csc"
        m = matrix.tocsr() if layout == "csr" else matrix.tocsc()
        m.sort_indices()
        desc = {"kind": "sparse", "dtype": _dtype_name(m.dtype), "shape": list(m.shape), "layout": layout}
        sparse = self._create(node, desc, attrs, dims)
        n_major = m.shape[0] if layout == "csr" else m.shape[1]
        sparse._core.append(m.indptr.astype(np.uint64), m.indices.astype(np.uint32),
                            np.ascontiguousarray(m.data), n_major)
        return self[node]

    def write_strings(self, node, values):
        """Create (or replace) a strings node holding ``values``."""
        values = [str(v) for v in values]
        if node not in self:
            self._core.create(node, {"kind": "strings", "shape": [len(values)]})
        self._core.write_strings(node, values)
        return self[node]

    def write_records(self, node, samples, batch=4096):
        """Append samples to a record set (datadings), creating it if needed.

        Each sample is a dict (encoded as datadings does: msgpack with
        msgpack-numpy for numpy arrays; datadings needs a str ``"key"``) or
        ``bytes`` already encoded. Returns the :class:`Records`.
        """
        if node not in self:
            self._core.create(node, {"kind": "records"})
        records = self._core.records(node)
        pending = []
        for sample in samples:
            pending.append(sample if isinstance(sample, (bytes, bytearray, memoryview)) else _pack_sample(sample))
            if len(pending) >= batch:
                records.append([bytes(s) for s in pending])
                pending = []
        if pending:
            records.append([bytes(s) for s in pending])
        return self[node]

    def remove(self, node):
        """Remove a node and everything under it."""
        self._core.remove(node)

    def close(self):
        """Commit what was written and close. Errors are raised here."""
        self._core.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _create(self, node, desc, attrs, dims):
        desc["attributes"] = dict(attrs or {})
        names, labels = _split_dims(dims, len(desc["shape"]))
        if names is not None:
            desc["dims"] = [{"name": n or ""} for n in names]
        self._core.create(node, desc)
        if labels is not None and any(lab is not None for lab in labels):
            self._write_labels(node, labels, desc["attributes"], names)
        return self[node]

    def _write_labels(self, node, labels, attrs, names):
        made = self._core.describe(node).get("dims") or []
        kept = []
        for d, lab in enumerate(labels):
            path = made[d].get("labels") if d < len(made) else None
            entry = {"name": names[d] or ""}
            if lab is not None and path:
                self._core.write_strings(path, [str(x) for x in lab])
            elif lab is not None:
                entry["labels"] = [str(x) for x in lab]
            kept.append(entry)
        if any("labels" in e for e in kept):
            self._core.set_attributes(node, {**attrs, "stowage_labels": kept})

    # -- pickling
    def _args(self):
        mode = "r+" if self.mode in ("w", "w+", "a") else self.mode
        return (self.path, self.format, mode, self.plugin_path, self._options)

    def __reduce__(self):
        return (_reopen, self._args())

    def __repr__(self):
        return f"<stowage.Store {self.path!r} ({self.format}, mode {self.mode!r})>"


def _split_dims(dims, ndim):
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


def _dtype_name(dtype):
    dt = np.dtype(dtype)
    if dt.byteorder == ">" or (dt.byteorder == "=" and np.little_endian is False):
        dt = dt.newbyteorder("<")
    return "bool" if dt == np.bool_ else dt.name


def _pack_sample(sample):
    import msgpack
    import msgpack_numpy

    return msgpack.packb(sample, default=msgpack_numpy.encode, use_bin_type=True)


# ---- nodes ------------------------------------------------------------------------------


class _Node:
    """What every node has: its store, path, attributes and description."""

    def __init__(self, store, node, info):
        self.store = store
        self.node = node
        self._info = info

    @property
    def attrs(self):
        """The node's attributes (a new dict; assign to replace them)."""
        return dict(self._info.get("attributes") or {})

    @attrs.setter
    def attrs(self, value):
        self.store._core.set_attributes(self.node, dict(value))
        self._info = self.store._core.describe(self.node)

    @property
    def storage(self):
        """How the format stores this node, beside its meaning (a new dict):
        BPCells' ``version``/``packed``, Daf's ``daf_eltype``... Empty where
        the format reports none. Not attributes: conversions keep it only
        within the same format."""
        return dict(self._info.get("storage") or {})

    @property
    def name(self):
        """The last component of the node path ("" for the root)."""
        return self.node.rsplit("/", 1)[-1]

    def describe(self):
        """The format plugin's description of the node, as a dict."""
        return dict(self._info)

    def __reduce__(self):
        return (_reopen_node, (self.store._args(), self.node))

    def __repr__(self):
        return f"<stowage.{type(self).__name__} {self.node or '/'!r} of {self.store.path!r}>"


class Group(_Node):
    """A group: named children and attributes. ``group["child/x"]`` is a node below it."""

    def keys(self):
        """Names of the children."""
        return self.store.keys(self.node)

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self.keys())

    def __contains__(self, child):
        return _join(self.node, child) in self.store

    def __getitem__(self, child):
        return self.store[_join(self.node, child)]


class _Dimensioned(_Node):
    """Nodes with a shape, a dtype and dimension names/labels."""

    @property
    def shape(self):
        """The shape, C order (slowest dimension first)."""
        return tuple(self._info["shape"])

    @property
    def ndim(self):
        return len(self._info["shape"])

    @property
    def size(self):
        """Number of elements."""
        return int(np.prod(self.shape, dtype=np.uint64))

    @property
    def dtype(self):
        """The element type as a ``numpy.dtype`` (native byte order)."""
        return np.dtype(self._info["dtype"])

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    def __len__(self):
        return self.shape[0] if self.shape else 1

    @property
    def dims(self):
        """One ``(name, labels)`` per dimension: the name (or None) and the
        labels as a list of str (or None). Labels are read when asked for."""
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


def _normalize_index(key, shape):
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
                f"stowage arrays take integers, slices and '...' as indices, not {type(k).__name__}"
            ) from None
        if i < -n or i >= n:
            raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
        out.append((i % n, 1, 1, 0, True))
    return out


def _picks(dims):
    """What to take from the bounding box of an index: each step, and 0 on
    integer-indexed axes (which drops them)."""
    return tuple(0 if drop else slice(first, None, step) if count else slice(0, 0)
                 for _, count, step, first, drop in dims)


class Array(_Dimensioned):
    """A dense n-d array.

    ``a[index]`` (integers, slices with any step, ``...``) reads the chunks
    the region touches, in parallel with the GIL released, into a new
    C-ordered ``numpy.ndarray``; ``a[index] = values`` writes (reading and
    rewriting chunks the region covers only partly). ``numpy.asarray(a)``
    reads it all.
    """

    def __init__(self, store, node, info):
        super().__init__(store, node, info)
        self._core = store._core.array(node)

    @property
    def chunks(self):
        """The chunk shape, C order."""
        return tuple(self._info.get("chunks") or self.shape)

    @property
    def codec(self):
        """The codec as N5's compression object (``{"type": "zstd", ...}``), or None."""
        return self._info.get("codec")

    @property
    def fill_value(self):
        """What a chunk never written reads as: a scalar of the array's dtype
        (``numpy.float32(nan)``, ``numpy.uint16(7)``)."""
        value = self._info.get("fill_value", 0)
        if isinstance(value, str):  # JSON has no NaN: "NaN", "Infinity", "-Infinity"
            value = float(value)
        return self.dtype.type(value)

    @property
    def chunk_grid(self):
        """Number of chunks along each dimension."""
        return tuple(self._core.chunk_grid())

    def chunk_exists(self, index):
        """Whether the chunk at grid position ``index`` was written."""
        return self._core.chunk_exists(list(index))

    def read(self, out=None, offset=None):
        """Read a region into ``out`` (a C-contiguous array of this dtype; no
        copy is made) starting at ``offset`` (default: the origin), and return
        ``out``. Without ``out``, read the whole array."""
        if out is None:
            out = np.empty(self.shape, self.dtype)
        offset = [0] * self.ndim if offset is None else [operator.index(o) for o in offset]
        if len(offset) != self.ndim or out.ndim != self.ndim:
            raise InvalidArgumentError(f"offset and out must have {self.ndim} dimensions")
        if out.size:
            self._core.read(offset, list(out.shape), out)
        return out

    def __getitem__(self, key):
        dims = _normalize_index(key, self.shape)
        counts = [c for _, c, _, _, _ in dims]
        box = np.empty(counts, self.dtype)
        if box.size:
            self._core.read([o for o, _, _, _, _ in dims], counts, box)
        # Steps other than 1 read the bounding box and pick from it (fast for
        # small steps; a step of k reads k times what it returns). Without
        # steps the picks only drop the integer-indexed axes: no copy.
        out = box[_picks(dims) + (Ellipsis,)]  # the Ellipsis keeps a 0-d array an array
        return out if out.flags.c_contiguous else out.copy()

    def __setitem__(self, key, value):
        dims = _normalize_index(key, self.shape)
        offset = [o for o, _, _, _, _ in dims]
        counts = [c for _, c, _, _, _ in dims]
        if 0 in counts:
            return
        box = np.empty(counts, self.dtype)
        if any(step != 1 for _, _, step, _, _ in dims):
            self._core.read(offset, counts, box)  # the elements between the steps are kept
        box[_picks(dims)] = value  # numpy's broadcasting and casting
        self._core.write(offset, counts, box)

    def __array__(self, dtype=None):
        a = self.read()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __repr__(self):
        return (f"<stowage.Array {self.node or '/'!r} of {self.store.path!r}: "
                f"shape {self.shape}, {self.dtype}, chunks {self.chunks}>")


class Sparse(_Dimensioned):
    """A CSC or CSR sparse matrix (BPCells, Daf). ``to_scipy()`` reads it
    (or a range of its columns/rows); ``numpy.asarray`` reads it dense."""

    def __init__(self, store, node, info):
        super().__init__(store, node, info)
        self._core = store._core.sparse(node)

    @property
    def format(self):
        """``"csc"`` (columns are the major axis) or ``"csr"``."""
        return self._info.get("layout", "csc")

    @property
    def nnz(self):
        """Number of stored values."""
        return int(self._info.get("nnz", 0))

    @property
    def majors(self):
        """Number of columns (CSC) or rows (CSR)."""
        return self.shape[1] if self.format == "csc" else self.shape[0]

    def to_scipy(self, major=None):
        """The matrix as a ``scipy.sparse.csc_matrix`` / ``csr_matrix``.

        ``major=slice(a, b)``: only columns (CSC) or rows (CSR) a..b-1."""
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

    def read_dense(self, row0=0, col0=0, rows=None, cols=None):
        """A dense C-order window of the matrix as a numpy array."""
        rows = self.shape[0] - row0 if rows is None else rows
        cols = self.shape[1] - col0 if cols is None else cols
        out = np.empty((rows, cols), self.dtype)
        if out.size:
            self._core.read_dense(row0, col0, rows, cols, out)
        return out

    def __array__(self, dtype=None):
        a = self.read_dense()
        return a if dtype is None else a.astype(dtype, copy=False)


class Strings(_Node):
    """An array of str (names, axes; a Daf string matrix reads in C order).

    ``s[i]`` -> str, ``s[a:b]`` -> list of str, ``len(s)`` the number of strings."""

    def __len__(self):
        return int(np.prod(self.shape, dtype=np.uint64))

    @property
    def shape(self):
        return tuple(self._info.get("shape") or (0,))

    def __getitem__(self, key):
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

    def __iter__(self):
        return iter(self.to_list())

    def to_list(self):
        """Every string, in order."""
        return self.store._core.read_strings(self.node, 0, len(self))


class Records(_Node):
    """A record set (datadings): ordered samples, each with a str key.

    ``r[i]`` is the decoded sample (a dict, with numpy arrays where
    msgpack-numpy stored them, as datadings' reader returns it), ``r.raw(i)``
    its msgpack bytes; ``r.find(key)`` its index, ``r.get(key)`` the sample,
    ``key in r``; iteration decodes in order, in batches.
    """

    batch = 256  # samples per call into the library while iterating

    def __init__(self, store, node, info):
        super().__init__(store, node, info)
        self._core = store._core.records(node)

    def __len__(self):
        return len(self._core)

    def _read(self, begin, end, decode=True):
        try:
            return self._core.read_range(begin, end, decode)
        except CorruptError as e:  # the decoder names the sample; add the dataset
            raise CorruptError(f"{self.store.path}: {e}", code=e.code, path=self.store.path, plugin=e.plugin) from None

    def _index(self, i):
        n = len(self)
        i = operator.index(i)
        if i < -n or i >= n:
            raise IndexError(f"sample {i} is out of range for {n} samples")
        return i % n

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step == 1:
                return self._read(start, max(start, stop))
            return [self[j] for j in range(start, stop, step)]
        i = self._index(i)
        return self._read(i, i + 1)[0]

    def raw(self, i):
        """The sample's msgpack bytes, unchanged."""
        return self._core.read(self._index(i))

    def key(self, i):
        """The key of sample ``i``."""
        return self._core.key(self._index(i))

    def keys(self):
        """Every key, in order."""
        return [self._core.key(i) for i in range(len(self))]

    def find(self, key):
        """The index of the sample with this key, or None."""
        return self._core.find(key)

    def get(self, key, default=None):
        """The decoded sample with this key, or ``default``."""
        i = self._core.find(key)
        return default if i is None else self[i]

    def __contains__(self, key):
        return self._core.contains(key)

    def __iter__(self):
        n = len(self)
        for begin in range(0, n, self.batch):
            yield from self._read(begin, min(n, begin + self.batch))

    def iter_raw(self):
        """The msgpack bytes of every sample, in order."""
        n = len(self)
        for begin in range(0, n, self.batch):
            yield from self._read(begin, min(n, begin + self.batch), False)


_KINDS.update(group=Group, array=Array, sparse=Sparse, strings=Strings, records=Records)
