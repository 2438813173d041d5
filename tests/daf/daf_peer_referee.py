#!/usr/bin/python3
"""Checks daf_peer.py against a fixture written by someone else (Julia's
DataAxesFormats.jl, or daf_gen.py): the peer must read exactly what the
fixture's .expected.json and .expected/*.bin say, so that when it judges the
repositories stowage writes it is a referee and not a mirror of the plugin.

    daf_peer_referee.py <fixture dir> <expected.json>
prints {"compared": <values compared>, "mismatches": [...]} as JSON.
"""
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daf_peer  # noqa: E402

FLOAT_WORDS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def same_values(got, want_bin, dtype):
    """The peer's values (a list, or a list of rows) against a dense .bin file."""
    want = np.frombuffer(open(want_bin, "rb").read(), dtype=dtype)
    have = np.array(got, dtype=dtype).reshape(-1)
    if have.shape != want.shape:
        return False
    if np.dtype(dtype).kind == "f":
        return bool(np.array_equal(have, want, equal_nan=True))
    return bool(np.array_equal(have, want))


def unwords(v):
    if isinstance(v, list):
        return [unwords(x) for x in v]
    return FLOAT_WORDS.get(v, v) if isinstance(v, str) else v


def main(fixture, expected_path):
    expected = json.load(open(expected_path, encoding="utf-8"))
    base = os.path.dirname(os.path.abspath(expected_path))
    peer = daf_peer.read_repository(fixture)
    bad = []
    compared = 0

    def check(ok, what):
        nonlocal compared
        compared += 1
        if not ok:
            bad.append(what)

    check(peer["version"] == expected["daf_json_version"], "version %r" % (peer["version"],))
    # Julia creates an empty directory per axis and axis pair; git drops empty
    # directories (the fixtures' notes), so only those may be missing.
    for p in peer["problems"]:
        check(p.startswith("missing directory "), "peer problem: " + p)
    check(set(peer["scalars"]) == set(expected["scalars"]), "scalar names")
    for name, s in expected["scalars"].items():
        got = peer["scalars"].get(name, {})
        check(got.get("type") == s["type"] and unwords(got.get("value")) == unwords(s["value"])
              or (isinstance(s["value"], str) and s["value"] == "NaN" and got.get("value") != got.get("value")),
              "scalar %s: %r, expected %r" % (name, got, s))
    check(set(peer["axes"]) == set(expected["axes"]), "axis names")
    for axis, a in expected["axes"].items():
        check(peer["axes"].get(axis) == a["entries"], "axis %s entries" % axis)

    want_vectors = {(a, n) for a, ps in expected["vectors"].items() for n in ps}
    got_vectors = {(a, n) for a, ps in peer["vectors"].items() for n in ps}
    check(got_vectors == want_vectors, "vectors: peer %s, expected %s" % (sorted(got_vectors), sorted(want_vectors)))
    for (axis, name) in sorted(want_vectors & got_vectors):
        want, got = expected["vectors"][axis][name], peer["vectors"][axis][name]
        where = "vectors/%s/%s" % (axis, name)
        check(got["eltype"] == want["eltype"], where + ": eltype " + got["eltype"])
        check(got["storage"] == want["storage"], where + ": storage " + got["storage"])
        if want["eltype"] == "String":
            check(got["values"] == want["values"], where + ": strings differ")
        else:
            check(same_values(got["values"], os.path.join(base, want["bin"]), want["bin_dtype"]), where + ": values differ")

    want_m = {(r, c, n) for r, cs in expected["matrices"].items() for c, ps in cs.items() for n in ps}
    got_m = {(r, c, n) for r, cs in peer["matrices"].items() for c, ps in cs.items() for n in ps}
    check(got_m == want_m, "matrices: peer %s, expected %s" % (sorted(got_m), sorted(want_m)))
    for (r, c, name) in sorted(want_m & got_m):
        want, got = expected["matrices"][r][c][name], peer["matrices"][r][c][name]
        where = "matrices/%s/%s/%s" % (r, c, name)
        check(got["eltype"] == want["eltype"], where + ": eltype " + got["eltype"])
        check(got["storage"] == want["storage"], where + ": storage " + got["storage"])
        check(got["shape"] == want["shape"], where + ": shape %r" % (got["shape"],))
        if want["eltype"] == "String":
            check(got["values_row_major"] == want["values_row_major"], where + ": strings differ")
        else:
            check(same_values(got["values_row_major"], os.path.join(base, want["bin"]), want["bin_dtype"]),
                  where + ": values differ")
    return {"compared": compared, "mismatches": bad}


if __name__ == "__main__":
    json.dump(main(sys.argv[1], sys.argv[2]), sys.stdout)
