#!/usr/bin/python3
"""An independent FilesDaf reader, written from docs/formats/daf.md (not
from the plugin), used to check the repositories stowage writes.

    daf_peer.py <repository>   prints the decoded content as JSON:
      {"version": [1,0], "scalars": {name: {"type", "value"}}, "axes": {axis: [entries]},
       "vectors": {axis: {name: {"eltype", "storage", "values"}}},
       "matrices": {rows: {cols: {name: {"eltype", "storage", "shape", "values_row_major"}}}},
       "problems": [...]}
Checks Julia relies on (the full directory grid, metadata.json agreeing with
the descriptors) are reported in "problems" rather than raised.
"""
import json
import os
import sys

import numpy as np

DTYPES = {"Bool": "u1", "Int8": "<i1", "Int16": "<i2", "Int32": "<i4", "Int64": "<i8",
          "UInt8": "<u1", "UInt16": "<u2", "UInt32": "<u4", "UInt64": "<u8",
          "Float32": "<f4", "Float64": "<f8"}


def read_lines(path):
    data = open(path, "rb").read().decode("utf-8")
    if data == "":
        return []
    assert data.endswith("\n"), path + ": no final newline"
    return data[:-1].split("\n")


def read_binary(path, eltype):
    return np.fromfile(path, dtype=DTYPES[eltype])


def plain(values, eltype):
    if eltype == "Bool":
        return [bool(v) for v in values]
    if eltype.startswith("Float"):
        return [float(v) for v in values]
    return [int(v) for v in values]


def sparse_parts(desc, matrix):
    """(eltype, indtype, values_present) from either descriptor schema."""
    index_key = "rowval" if matrix else "nzind"
    if "eltype" in desc:  # v1.0
        return desc["eltype"], desc["indtype"], None
    eltype = desc["nzval"]["eltype"] if "nzval" in desc else "Bool"
    return eltype, desc[index_key]["eltype"], "nzval" in desc


def read_vector(base, desc, n):
    fmt = desc["format"]
    if fmt == "dense":
        eltype = desc["eltype"]
        if eltype == "String":
            values = read_lines(base + ".txt")
        else:
            values = plain(read_binary(base + ".data", eltype), eltype)
        assert len(values) == n, base + ": length does not match the axis"
        return eltype, "dense", values
    eltype, indtype, present = sparse_parts(desc, False)
    nzind = read_binary(base + ".nzind", indtype).astype(np.int64) - 1
    assert all(0 <= i < n for i in nzind), base + ": index out of range"
    if eltype == "String":
        stored = read_lines(base + ".nztxt")
        values = [""] * n
    else:
        if present is None:
            present = eltype != "Bool" or os.path.exists(base + ".nzval")
        stored = plain(read_binary(base + ".nzval", eltype), eltype) if present else [True] * len(nzind)
        values = plain(np.zeros(n, dtype=DTYPES[eltype]), eltype)
    assert len(stored) == len(nzind), base + ": nzval/nztxt length differs from nzind"
    for i, v in zip(nzind, stored):
        values[i] = v
    return eltype, "sparse", values


def read_matrix(base, desc, nrows, ncols):
    fmt = desc["format"]
    if fmt == "dense":
        eltype = desc["eltype"]
        if eltype == "String":
            flat = read_lines(base + ".txt")
            assert len(flat) == nrows * ncols, base + ": wrong number of lines"
            cols = [flat[c * nrows:(c + 1) * nrows] for c in range(ncols)]
            return eltype, "dense", [[cols[c][r] for c in range(ncols)] for r in range(nrows)]
        data = read_binary(base + ".data", eltype)
        assert data.size == nrows * ncols, base + ": size does not match the axes"
        m = data.reshape((ncols, nrows)).T  # column-major on disk
        return eltype, "dense", [plain(row, eltype) for row in m]
    eltype, indtype, present = sparse_parts(desc, True)
    colptr = read_binary(base + ".colptr", indtype).astype(np.int64)
    rowval = read_binary(base + ".rowval", indtype).astype(np.int64)
    assert colptr.size == ncols + 1 and colptr[0] == 1 and colptr[-1] == rowval.size + 1, base + ": bad colptr"
    if eltype == "String":
        stored = read_lines(base + ".nztxt")
        m = [[""] * ncols for _ in range(nrows)]
    else:
        if present is None:
            present = eltype != "Bool" or os.path.exists(base + ".nzval")
        stored = plain(read_binary(base + ".nzval", eltype), eltype) if present else [True] * rowval.size
        m = [plain(np.zeros(ncols, dtype=DTYPES[eltype]), eltype) for _ in range(nrows)]
    assert len(stored) == rowval.size, base + ": nzval length differs from rowval"
    for c in range(ncols):
        for k in range(colptr[c] - 1, colptr[c + 1] - 1):
            r = rowval[k] - 1
            assert 0 <= r < nrows, base + ": row index out of range"
            m[r][c] = stored[k]
    return eltype, "sparse", m


def names(directory, suffix):
    if not os.path.isdir(directory):
        return []
    return sorted(f[:-len(suffix)] for f in os.listdir(directory) if f.endswith(suffix) and ".stowage-tmp" not in f)


def load_json(path):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    assert text.endswith("\n"), path + ": no final newline"
    return json.loads(text)


def read_repository(root):
    out = {"problems": []}
    out["version"] = load_json(os.path.join(root, "daf.json"))["version"]
    assert out["version"][0] == 1 and out["version"][1] in (0, 1), "unsupported version"
    out["scalars"] = {n: load_json(os.path.join(root, "scalars", n + ".json")) for n in names(os.path.join(root, "scalars"), ".json")}
    out["axes"] = {a: read_lines(os.path.join(root, "axes", a + ".txt")) for a in names(os.path.join(root, "axes"), ".txt")}
    axes = out["axes"]
    out["vectors"], out["matrices"] = {}, {}
    meta = {}
    for a in axes:
        d = os.path.join(root, "vectors", a)
        if not os.path.isdir(d):
            out["problems"].append("missing directory vectors/" + a)
        for n in names(d, ".json"):
            desc = load_json(os.path.join(d, n + ".json"))
            meta["vectors/%s/%s" % (a, n)] = desc
            eltype, storage, values = read_vector(os.path.join(d, n), desc, len(axes[a]))
            out["vectors"].setdefault(a, {})[n] = {"eltype": eltype, "storage": storage, "values": values}
        for b in axes:
            d = os.path.join(root, "matrices", a, b)
            if not os.path.isdir(d):
                out["problems"].append("missing directory matrices/%s/%s" % (a, b))
            for n in names(d, ".json"):
                desc = load_json(os.path.join(d, n + ".json"))
                meta["matrices/%s/%s/%s" % (a, b, n)] = desc
                eltype, storage, m = read_matrix(os.path.join(d, n), desc, len(axes[a]), len(axes[b]))
                out["matrices"].setdefault(a, {}).setdefault(b, {})[n] = {
                    "eltype": eltype, "storage": storage, "shape": [len(axes[a]), len(axes[b])], "values_row_major": m}
    for a in axes:
        meta["axes/" + a] = {"format": "axis", "n_entries": len(axes[a])}
    for n, s in out["scalars"].items():
        meta["scalars/" + n] = s
    metadata_path = os.path.join(root, "metadata.json")
    out["has_metadata"] = os.path.exists(metadata_path)
    if out["has_metadata"]:
        recorded = json.load(open(metadata_path, encoding="utf-8"))
        if recorded != meta:
            out["problems"].append("metadata.json does not match the descriptors")
    elif out["version"][1] >= 1:
        out["problems"].append("a [1,1] repository without metadata.json")
    return out


if __name__ == "__main__":
    json.dump(read_repository(sys.argv[1]), sys.stdout, ensure_ascii=False)
