#!/usr/bin/python3
"""Writes a FilesDaf repository the way docs/formats/daf.md describes
(independently of the plugin), with a sparse vector and a sparse matrix for
every integer index type, v1.0 and v1.1 descriptors, and Bool sparse data
with and without .nzval. Prints the dense values a reader must see, as JSON.

    daf_peer_writer.py <repository>
"""
import json
import os
import sys

import numpy as np

INDEX_TYPES = {"Int8": "<i1", "UInt8": "<u1", "Int16": "<i2", "UInt16": "<u2",
               "Int32": "<i4", "UInt32": "<u4", "Int64": "<i8", "UInt64": "<u8"}


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def main(root):
    cells, genes = ["c%d" % i for i in range(6)], ["g%d" % i for i in range(4)]
    write(os.path.join(root, "daf.json"), b'{"version":[1,1]}\n')
    write(os.path.join(root, "axes", "cell.txt"), "".join(c + "\n" for c in cells).encode())
    write(os.path.join(root, "axes", "gene.txt"), "".join(g + "\n" for g in genes).encode())
    expected = {"vectors": {}, "matrices": {}}
    vec = np.array([0, 2.5, 0, 0, -1, 7], dtype="<f8")
    mat = np.array([[0, 1, 0, 0], [2, 0, 0, 3], [0, 0, 0, 0], [4, 0, 5, 0], [0, 0, 0, 6], [7, 0, 0, 0]], dtype="<f8")
    for k, (name, dt) in enumerate(INDEX_TYPES.items()):
        v11 = k % 2 == 1
        nz = np.nonzero(vec)[0]
        base = os.path.join(root, "vectors", "cell", "v_" + name)
        write(base + ".nzind", (nz + 1).astype(dt).tobytes())
        write(base + ".nzval", vec[nz].tobytes())
        desc = ({"format": "sparse", "nzind": {"format": "dense", "eltype": name, "n_elements": len(nz)},
                 "nzval": {"format": "dense", "eltype": "Float64", "n_elements": len(nz)}} if v11 else
                {"format": "sparse", "eltype": "Float64", "indtype": name})
        write(base + ".json", (json.dumps(desc, separators=(",", ":")) + "\n").encode())
        expected["vectors"]["v_" + name] = vec.tolist()

        cols = [np.nonzero(mat[:, c])[0] for c in range(mat.shape[1])]
        colptr = np.cumsum([0] + [len(c) for c in cols]) + 1
        rowval = np.concatenate(cols) + 1
        nzval = np.concatenate([mat[c, j] for j, c in enumerate(cols)])
        base = os.path.join(root, "matrices", "cell", "gene", "m_" + name)
        write(base + ".colptr", colptr.astype(dt).tobytes())
        write(base + ".rowval", rowval.astype(dt).tobytes())
        write(base + ".nzval", nzval.astype("<f8").tobytes())
        desc = ({"format": "sparse", "colptr": {"format": "dense", "eltype": name, "n_elements": len(colptr)},
                 "rowval": {"format": "dense", "eltype": name, "n_elements": len(rowval)},
                 "nzval": {"format": "dense", "eltype": "Float64", "n_elements": len(rowval)}} if v11 else
                {"format": "sparse", "eltype": "Float64", "indtype": name})
        write(base + ".json", (json.dumps(desc, separators=(",", ":")) + "\n").encode())
        expected["matrices"]["m_" + name] = mat.tolist()

    # Bool sparse: v1.1 without nzval (all true); v1.0 with a .nzval holding a false.
    mask = mat != 0
    cols = [np.nonzero(mask[:, c])[0] for c in range(4)]
    colptr = (np.cumsum([0] + [len(c) for c in cols]) + 1).astype("<i8")
    rowval = (np.concatenate(cols) + 1).astype("<i8")
    base = os.path.join(root, "matrices", "cell", "gene", "mask_all_true")
    write(base + ".colptr", colptr.tobytes())
    write(base + ".rowval", rowval.tobytes())
    write(base + ".json", json.dumps({"format": "sparse",
          "colptr": {"format": "dense", "eltype": "Int64", "n_elements": len(colptr)},
          "rowval": {"format": "dense", "eltype": "Int64", "n_elements": len(rowval)}}, separators=(",", ":")).encode() + b"\n")
    expected["matrices"]["mask_all_true"] = mask.tolist()
    nzval = np.ones(len(rowval), dtype="u1")
    nzval[0] = 0  # an explicit false, as 0.2.0 and dafr would read it
    base = os.path.join(root, "matrices", "cell", "gene", "mask_with_false")
    write(base + ".colptr", colptr.tobytes())
    write(base + ".rowval", rowval.tobytes())
    write(base + ".nzval", nzval.tobytes())
    write(base + ".json", b'{"format":"sparse","eltype":"Bool","indtype":"Int64"}\n')
    with_false = mask.copy()
    with_false[cols[0][0], 0] = False
    expected["matrices"]["mask_with_false"] = with_false.tolist()
    json.dump(expected, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
