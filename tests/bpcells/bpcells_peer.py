"""Independent BPCells matrix-directory reader and rule checker (numpy only).

Written from the format reference (docs/formats/bpcells.md), sharing no
code with the C++ plugin. Usage:

    bpcells_peer.py DIR OUT.bin

decodes DIR, writes the dense matrix (C order, little-endian, value dtype) to
OUT.bin, checks the rules BPCells' own writer follows, and prints one JSON
object: {"version", "shape", "storage_order", "nnz", "row_names",
"col_names", "violations": [...]}. An empty "violations" list means every
rule held: exact headers, idxptr from 0 to nnz without decreasing, indices
strictly increasing within each major and inside the matrix, BP-128 chunks at
the minimal bit width (raw untransformed input at 32 bits), the last chunk
padded by repeating the last value, idx_offsets [0, nchunks+1], starts equal
to each chunk's first value, and no unexpected files.
"""
import json
import os
import sys

import numpy as np

MAGIC = {"uint32": b"UINT32v1", "uint64": b"UINT64v1", "float32": b"FLOATSv1", "float64": b"DOUBLEv1"}
VALUE_DTYPE = {"uint": "uint32", "ulong": "uint64", "float": "float32", "double": "float64"}


class Reader:
    def __init__(self, path):
        self.path = path
        self.violations = []

    def note(self, message):
        self.violations.append(message)

    def array(self, name, dtype):
        raw = open(os.path.join(self.path, name), "rb").read()
        if raw[:8] != MAGIC[dtype]:
            raise ValueError(f"{name}: header {raw[:8]!r}, expected {MAGIC[dtype]!r}")
        return np.frombuffer(raw[8:], dtype="<" + np.dtype(dtype).str[1:])

    def lines(self, name):
        raw = open(os.path.join(self.path, name), "rb").read()
        if raw and not raw.endswith(b"\n"):
            self.note(f"{name}: last line has no newline")
        parts = raw.split(b"\n")
        if parts and parts[-1] == b"":
            parts.pop()
        return [p[:-1] if p.endswith(b"\r") else p for p in parts]


def unpack_chunk(words, bits):
    """128 transformed values from 4*bits interleaved words (4 lanes)."""
    if bits == 0:
        return np.zeros(128, dtype=np.uint64)
    lanes = words.reshape(bits, 4).astype(np.uint64)            # lanes[w, L]
    lanes = np.vstack([lanes, np.zeros((1, 4), dtype=np.uint64)])
    start = np.arange(32, dtype=np.uint64) * bits                # bit offset of each position
    word, shift = start // 32, start % 32
    joined = lanes[word] | (lanes[word + 1] << np.uint64(32))    # [position, lane]
    values = (joined >> shift[:, None]) & np.uint64((1 << bits) - 1)
    return values.reshape(128)                                   # value k = 4*position + lane


def minimal_bits(t):
    top = int(np.bitwise_or.reduce(t.astype(np.uint64)))
    return top.bit_length()


def decode_bp128(r, name, variant, count, version):
    data = r.array(name + "_data", "uint32")
    idx = r.array(name + "_idx", "uint32").astype(np.uint64)
    nchunks = (count + 127) // 128
    if len(idx) != nchunks + 1:
        raise ValueError(f"{name}_idx: {len(idx)} entries for {count} values")
    if version >= 2:
        offsets = r.array(name + "_idx_offsets", "uint64")
        if list(offsets) != [0, nchunks + 1]:
            r.note(f"{name}_idx_offsets: {list(offsets)} instead of [0, {nchunks + 1}]")
        true_idx = idx.copy()
        for seg in range(len(offsets) - 1):
            true_idx[offsets[seg]:offsets[seg + 1]] += np.uint64(seg << 32)
    else:
        true_idx = idx
    starts = r.array(name + "_starts", "uint32") if variant in ("d1", "d1z") else None
    if int(true_idx[-1]) != len(data):
        raise ValueError(f"{name}_data: {len(data)} words, idx ends at {int(true_idx[-1])}")
    out = np.zeros(nchunks * 128, dtype=np.uint32)
    for c in range(nchunks):
        span = int(true_idx[c + 1] - true_idx[c])
        if span % 4 or span > 128:
            raise ValueError(f"{name}_idx: chunk {c} spans {span} words")
        bits = span // 4
        words = data[int(true_idx[c]):int(true_idx[c + 1])]
        if bits == 32:
            x = words.astype(np.uint32)
        else:
            t = unpack_chunk(words, bits).astype(np.uint32)
            if variant == "m1":
                x = t + np.uint32(1)
            elif variant == "d1z":
                delta = (t >> np.uint32(1)) ^ (np.uint32(0) - (t & np.uint32(1)))
                x = np.cumsum(delta, dtype=np.uint32) + starts[c]
            else:
                raise ValueError(variant)
        out[c * 128:(c + 1) * 128] = x
        # The encoder's choice: minimal width of the transformed chunk; 32 means raw.
        if variant == "m1":
            t_check = x - np.uint32(1)
        else:
            d = np.diff(x.astype(np.uint32), prepend=x[:1]).astype(np.uint32)
            t_check = (d << np.uint32(1)) ^ (d.view(np.int32) >> 31).view(np.uint32)
        if minimal_bits(t_check) != bits:
            r.note(f"{name}: chunk {c} stored at {bits} bits, minimal is {minimal_bits(t_check)}")
        if starts is not None and starts[c] != x[0]:
            r.note(f"{name}_starts: chunk {c} start {starts[c]} but first value {x[0]}")
    if count % 128 and np.any(out[count:] != out[count - 1]):
        r.note(f"{name}: last chunk is not padded with the last value")
    return out[:count]


def read_matrix(path):
    r = Reader(path)
    version_lines = r.lines("version")
    assert len(version_lines) == 1, "version must be one line"
    version = version_lines[0].decode()
    packing, value_word, _, v = version.split("-")
    fmt = int(v[1:])
    value_dtype = VALUE_DTYPE[value_word]
    order = r.lines("storage_order")[0].decode()
    nrow, ncol = (int(x) for x in r.array("shape", "uint32"))
    majors, minors = (nrow, ncol) if order == "row" else (ncol, nrow)
    idxptr = r.array("idxptr", "uint64" if fmt == 2 else "uint32").astype(np.uint64)
    if len(idxptr) != majors + 1 or idxptr[0] != 0 or np.any(np.diff(idxptr.astype(np.int64)) < 0):
        r.note("idxptr: wrong length, start or order")
    nnz = int(idxptr[-1])
    expected_files = {"version", "storage_order", "shape", "idxptr", "row_names", "col_names"}
    if packing == "packed":
        index = decode_bp128(r, "index", "d1z", nnz, fmt)
        expected_files |= {"index_data", "index_idx", "index_starts"} | ({"index_idx_offsets"} if fmt >= 2 else set())
        if value_dtype == "uint32":
            val = decode_bp128(r, "val", "m1", nnz, fmt)
            expected_files |= {"val_data", "val_idx"} | ({"val_idx_offsets"} if fmt >= 2 else set())
        else:
            val = r.array("val", value_dtype)
            expected_files.add("val")
    else:
        index = r.array("index", "uint32")
        val = r.array("val", value_dtype)
        expected_files |= {"index", "val"}
    if len(index) != nnz or len(val) != nnz:
        raise ValueError("index/val length differs from idxptr")
    extra = set(os.listdir(path)) - expected_files
    if extra:
        r.note(f"unexpected files {sorted(extra)}")
    dense = np.zeros((nrow, ncol), dtype=value_dtype)
    for m in range(majors):
        b, e = int(idxptr[m]), int(idxptr[m + 1])
        ix = index[b:e].astype(np.int64)
        if len(ix) and (np.any(np.diff(ix) <= 0) or ix[-1] >= minors):
            r.note(f"major {m}: indices not strictly increasing or out of range")
            continue
        if order == "row":
            dense[m, ix] = val[b:e]
        else:
            dense[ix, m] = val[b:e]
    names = {}
    for key, n in (("row_names", nrow), ("col_names", ncol)):
        lines = [x.decode("utf-8") for x in r.lines(key)]
        if lines and len(lines) != n:
            r.note(f"{key}: {len(lines)} names for {n}")
        names[key] = lines or None
    return dense, {"version": version, "shape": [nrow, ncol], "storage_order": order, "nnz": nnz,
                   **names, "violations": r.violations}


def main():
    dense, report = read_matrix(sys.argv[1])
    with open(sys.argv[2], "wb") as out:
        out.write(dense.astype(dense.dtype.newbyteorder("<")).tobytes())
    print(json.dumps(report))


if __name__ == "__main__":
    main()
