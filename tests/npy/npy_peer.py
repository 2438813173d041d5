"""NumPy peer for the npy tests (Debian's python3-numpy).

  npy_peer.py write DIR   writes .npy files of every dtype, byte order, memory
                          order and shape kind, each with <name>.raw holding the
                          expected values (little-endian, C order) and a
                          manifest.json listing them.
  npy_peer.py check DIR   numpy.load()s every <name>.npy that stowage wrote and
                          compares it bit for bit with <name>.raw, using the
                          dtype and shape in manifest.json.
  npy_peer.py unsupported DIR   writes valid .npy files stowage must refuse.
"""
import json
import os
import sys

import numpy as np

DTYPES = {"bool": "b1", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8",
          "uint8": "u1", "uint16": "u2", "uint32": "u4", "uint64": "u8",
          "float32": "f4", "float64": "f8", "float16": "f2", "complex64": "c8", "complex128": "c16"}
SHAPES = [(3, 4, 5), (), (0, 3), (7,), (2, 0, 4), (37, 11, 3)]


def values(rng, code, shape):
    """Random values covering the whole range; floats are random bit patterns
    (NaNs with payloads, infinities, subnormals, negative zero)."""
    dt = np.dtype(code)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "b":
        flat = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "fc":  # a complex value is two floats' bit patterns
        parts = 2 if dt.kind == "c" else 1
        bits = np.dtype("u%d" % (dt.itemsize // parts))
        flat = rng.integers(0, np.iinfo(bits).max, n * parts, dtype=bits, endpoint=True).view(dt.newbyteorder("="))
    else:
        info = np.iinfo(dt)
        flat = rng.integers(info.min, info.max, n, dtype=dt.newbyteorder("="), endpoint=True)
    # Same values, stored in the requested byte order.
    return flat.astype(dt).reshape(shape)


def expected_bytes(a):
    """Values as little-endian C-order bytes (what stowage hands its caller)."""
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes(order="C")


def write(out):
    rng = np.random.default_rng(9)
    manifest = []
    for name, code in DTYPES.items():
        orders = ["|"] if code[1:] == "1" else ["<", ">"]
        for bo in orders:
            for fortran in (False, True):
                for si, shape in enumerate(SHAPES):
                    a = values(rng, bo + code, shape)
                    if fortran and a.ndim > 1:  # (asfortranarray makes 0-d arrays 1-d)
                        a = np.asfortranarray(a)
                    stem = "%s_%s_%s_%d" % (name, {"<": "le", ">": "be", "|": "na"}[bo],
                                            "F" if fortran else "C", si)
                    np.save(os.path.join(out, stem + ".npy"), a)
                    with open(os.path.join(out, stem + ".raw"), "wb") as f:
                        f.write(expected_bytes(a))
                    manifest.append({"name": stem, "dtype": name, "shape": list(shape),
                                     # numpy's rule for fortran_order in the header
                                     "fortran": bool(a.flags.f_contiguous and not a.flags.c_contiguous)})
    # Format versions 2.0 and 3.0 (numpy picks them for huge headers only).
    for version in ((2, 0), (3, 0)):
        a = values(rng, ">f8", (5, 6))
        stem = "version_%d_%d" % version
        with open(os.path.join(out, stem + ".npy"), "wb") as f:
            np.lib.format.write_array(f, a, version=version)
        with open(os.path.join(out, stem + ".raw"), "wb") as f:
            f.write(expected_bytes(a))
        manifest.append({"name": stem, "dtype": "float64", "shape": [5, 6], "fortran": False})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    print("wrote", len(manifest))


def check(out):
    with open(os.path.join(out, "manifest.json")) as f:
        manifest = json.load(f)
    for entry in manifest:
        path = os.path.join(out, entry["name"] + ".npy")
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            header = f.read(4 if version[0] > 1 else 2)
            data_offset = f.tell() + int.from_bytes(header, "little")
        a = np.load(path, allow_pickle=False)
        want = np.dtype(DTYPES[entry["dtype"]]).newbyteorder("<")
        assert a.dtype == want, (path, a.dtype, want)
        assert a.shape == tuple(entry["shape"]), (path, a.shape, entry["shape"])
        assert data_offset % 64 == 0, (path, data_offset)
        with open(os.path.join(out, entry["name"] + ".raw"), "rb") as f:
            raw = f.read()
        assert expected_bytes(a) == raw, (path, "values differ")
    print("checked", len(manifest))


def unsupported(out):
    arrays = {
        "float128": np.arange(4, dtype=np.longdouble),
        "complex256": np.arange(4, dtype=np.clongdouble),
        "unicode": np.array(["ab", "cde"]),
        "bytes": np.array([b"ab", b"cde"]),
        "structured": np.zeros(3, dtype=[("x", "<i4"), ("y", "<f8")]),
        "datetime": np.array(["2020-01-01"], dtype="datetime64[D]"),
        "object": np.array([1, "a", None], dtype=object),
    }
    for name, a in arrays.items():
        np.save(os.path.join(out, name + ".npy"), a, allow_pickle=True)
    print("wrote", len(arrays))


if __name__ == "__main__":
    {"write": write, "check": check, "unsupported": unsupported}[sys.argv[1]](sys.argv[2])
