"""numcodecs 0.11's array -> array codecs (filters) on chunks made here, for
tests/filters/filters_test.cpp: what it encodes each chunk into and what it
decodes that back to. Zarr v3's transpose, which numcodecs lacks, is numpy's
transpose(chunk, order), as the v3 spec defines it.

  numcodecs_cases.py OUT_DIR

writes OUT_DIR/manifest.json, {"numcodecs": version, "cases": [...]}, each case
{"name", "config" (the numcodecs config, with "id"), "chunk": {"dtype",
"shape"}, "encoded_dtype", "encoded_size" (numcodecs' encoded array)}, and
per case NAME.in (the chunk's bytes), NAME.enc (numcodecs' encode of it) and
NAME.dec (numcodecs' decode of NAME.enc).
"""
import json
import os
import sys

import warnings

import numcodecs
import numpy as np

warnings.simplefilter("ignore", RuntimeWarning)  # NaN cast to integers, on purpose


def special(data):
    """Floats: infinities, NaN and -0.0 among the values."""
    flat = data.reshape(-1)
    for k, v in enumerate([np.inf, -np.inf, np.nan, -0.0, 0.0]):
        if k < flat.size:
            flat[k] = v
    return data


def values(dtype, shape, seed, how):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if how == "walk":
        return np.cumsum(rng.integers(-300, 300, size=shape)).reshape(shape).astype(dtype)
    if how == "halves":  # ties of np.around, both signs
        return (rng.integers(-40, 40, size=shape) / 2).astype(dtype)
    if how == "wild":  # past every integer range: numpy's casts of them (numeric.hpp)
        wild = [np.nan, np.inf, -np.inf, 1e30, -1e30, 2.0**64, 2.0**63, -2.0**63, 2.0**32 + 5, 2.0**31,
                -2.0**31 - 1, 70000.5, -70000.5, 300.7, -300.7, -1.0, 2.0**63 + 2.0**40, 2.0**31 + 2.0**20]
        return np.resize(np.array(wild), shape).astype(dtype)
    if how == "huge":  # near float32's largest: scale * x overflows in float32, not in float64
        return rng.uniform(-3.4e38, 3.4e38, size=shape).astype(dtype)
    if how == "linspace":
        return np.linspace(1000, 1001, int(np.prod(shape))).reshape(shape).astype(dtype)
    if how == "small":
        return rng.integers(0, 200, size=shape).astype(dtype)
    if how == "bytes":  # any byte, for packbits' view(bool)
        return rng.integers(0, 256, size=int(np.prod(shape)) * dtype.itemsize,
                            dtype="u1").view(dtype).reshape(shape)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dtype)
    if dtype.kind == "f":
        data = (rng.standard_normal(size=shape) * 10.0 ** rng.integers(-3, 6, size=shape)).astype(dtype)
        return special(data) if how == "special" else data
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype.newbyteorder("="),
                        endpoint=True).astype(dtype)


# name, numcodecs config, chunk dtype, chunk shape, how the values are made.
CASES = [
    ("delta_i4", {"id": "delta", "dtype": "<i4"}, "<i4", (6, 5), "random"),
    ("delta_u2be", {"id": "delta", "dtype": ">u2"}, ">u2", (17,), "random"),
    ("delta_f8", {"id": "delta", "dtype": "<f8"}, "<f8", (4, 4), "special"),
    ("delta_i8_as_i2", {"id": "delta", "dtype": "<i8", "astype": "<i2"}, "<i8", (30,), "walk"),
    ("delta_f4be", {"id": "delta", "dtype": ">f4"}, ">f4", (3, 7), "random"),
    ("shuffle_f4", {"id": "shuffle", "elementsize": 4}, "<f4", (5, 3), "random"),
    ("shuffle_i8be", {"id": "shuffle", "elementsize": 8}, ">i8", (9,), "random"),
    ("shuffle_u2_es1", {"id": "shuffle", "elementsize": 1}, "<u2", (6,), "random"),
    ("astype_f8_as_f4", {"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}, "<f8", (4, 3), "special"),
    ("astype_i2_as_u1", {"id": "astype", "encode_dtype": "|u1", "decode_dtype": "<i2"}, "<i2", (11,), "small"),
    ("astype_u1_as_i8be", {"id": "astype", "encode_dtype": ">i8", "decode_dtype": "|u1"}, "|u1", (3, 3), "random"),
] + [
    ("astype_%s_as_%s%s_wild" % (src, dst, "be" if prefix == ">" else ""), {"id": "astype", "encode_dtype": prefix + dst, "decode_dtype": "<" + src},
     "<" + src, (36,), "wild")
    for src in ("f8", "f4")
    for prefix, dst in (("|", "i1"), ("|", "u1"), ("<", "i2"), ("<", "u2"), ("<", "i4"), ("<", "u4"), (">", "i4"),
                        ("<", "i8"), ("<", "u8"), (">", "u8"))
] + [
    # fixedscaleoffset: numcodecs' docstring example, then numpy's value-based
    # types: float and int offsets and scales on float, int and bool chunks.
    ("fso_doc_u1", {"id": "fixedscaleoffset", "offset": 1000, "scale": 10, "dtype": "<f8", "astype": "|u1"},
     "<f8", (10,), "linspace"),
    ("fso_doc_u2", {"id": "fixedscaleoffset", "offset": 1000, "scale": 1000, "dtype": "<f8", "astype": "<u2"},
     "<f8", (10,), "linspace"),
    ("fso_halves", {"id": "fixedscaleoffset", "offset": 0, "scale": 1, "dtype": "<f8", "astype": "<i4"},
     "<f8", (40,), "halves"),
    ("fso_f4_float", {"id": "fixedscaleoffset", "offset": 0.1, "scale": 100.5, "dtype": "<f4", "astype": "<i4"},
     "<f4", (6, 4), "random"),
    ("fso_f4_big_scale", {"id": "fixedscaleoffset", "offset": 3, "scale": 70000, "dtype": "<f4", "astype": "<f8"},
     "<f4", (12,), "special"),
    ("fso_f8be_i8be", {"id": "fixedscaleoffset", "offset": -3.25, "scale": 1e3, "dtype": ">f8", "astype": ">i8"},
     ">f8", (5, 3), "random"),
    ("fso_f8_same", {"id": "fixedscaleoffset", "offset": 2.5, "scale": 0.1, "dtype": "<f8", "astype": "<f8"},
     "<f8", (8,), "special"),
    ("fso_u1_int", {"id": "fixedscaleoffset", "offset": 1000, "scale": 3, "dtype": "|u1", "astype": "|u1"},
     "|u1", (20,), "random"),
    ("fso_u1_neg", {"id": "fixedscaleoffset", "offset": -1, "scale": 200, "dtype": "|u1", "astype": "<i2"},
     "|u1", (20,), "random"),
    ("fso_i2_float", {"id": "fixedscaleoffset", "offset": 0.5, "scale": 2, "dtype": "<i2", "astype": "<i2"},
     "<i2", (4, 5), "random"),
    ("fso_i4_int_f8", {"id": "fixedscaleoffset", "offset": 7, "scale": -2, "dtype": "<i4", "astype": "<f8"},
     "<i4", (9,), "random"),
    ("fso_u8_neg", {"id": "fixedscaleoffset", "offset": -1, "scale": 2, "dtype": "<u8", "astype": "<u8"},
     "<u8", (7,), "random"),
    ("fso_i8be_wrap", {"id": "fixedscaleoffset", "offset": 5, "scale": 3, "dtype": ">i8", "astype": ">i4"},
     ">i8", (7,), "random"),
    ("fso_bool", {"id": "fixedscaleoffset", "offset": 1, "scale": 3, "dtype": "|b1", "astype": "|i1"},
     "|b1", (9,), "random"),
    # quantize: the docstring's digits, float32 (scale * x in float32, and
    # in float64 once the scale passes 3.4e38), astype, negative digits.
    ("quantize_f8_d1", {"id": "quantize", "digits": 1, "dtype": "<f8"}, "<f8", (10,), "random"),
    ("quantize_f8_d2", {"id": "quantize", "digits": 2, "dtype": "<f8"}, "<f8", (5, 4), "special"),
    ("quantize_f8_d3_f4", {"id": "quantize", "digits": 3, "dtype": "<f8", "astype": "<f4"}, "<f8", (12,), "random"),
    ("quantize_f4_d2", {"id": "quantize", "digits": 2, "dtype": "<f4"}, "<f4", (16,), "special"),
    ("quantize_f4_huge", {"id": "quantize", "digits": 2, "dtype": "<f4"}, "<f4", (12,), "huge"),
    ("quantize_f4be_d5", {"id": "quantize", "digits": 5, "dtype": ">f4"}, ">f4", (3, 5), "random"),
    ("quantize_f4_d40", {"id": "quantize", "digits": 40, "dtype": "<f4", "astype": "<f8"}, "<f4", (8,), "random"),
    ("quantize_f8_neg", {"id": "quantize", "digits": -1, "dtype": "<f8"}, "<f8", (9,), "random"),
    ("quantize_f8_d0", {"id": "quantize", "digits": 0, "dtype": "<f8"}, "<f8", (9,), "halves"),
    ("quantize_f4_as_f8be", {"id": "quantize", "digits": 4, "dtype": "<f4", "astype": ">f8"}, "<f4", (6,), "random"),
    # bitround: from no mantissa bit to all of them, both byte orders.
    ("bitround_f4_0", {"id": "bitround", "keepbits": 0}, "<f4", (20,), "special"),
    ("bitround_f4_3", {"id": "bitround", "keepbits": 3}, "<f4", (4, 6), "special"),
    ("bitround_f4_10", {"id": "bitround", "keepbits": 10}, "<f4", (25,), "random"),
    ("bitround_f4_23", {"id": "bitround", "keepbits": 23}, "<f4", (7,), "special"),
    ("bitround_f4be_7", {"id": "bitround", "keepbits": 7}, ">f4", (11,), "special"),
    ("bitround_f8_1", {"id": "bitround", "keepbits": 1}, "<f8", (13,), "special"),
    ("bitround_f8_20", {"id": "bitround", "keepbits": 20}, "<f8", (3, 3), "random"),
    ("bitround_f8be_51", {"id": "bitround", "keepbits": 51}, ">f8", (10,), "special"),
    ("bitround_f8_bytes", {"id": "bitround", "keepbits": 12}, "<f8", (16,), "bytes"),
    ("bitround_f2_5", {"id": "bitround", "keepbits": 5}, "<f2", (14,), "special"),
    # ties (halves of integers: the dropped bits are exactly half a step), to even
    ("bitround_f4_ties", {"id": "bitround", "keepbits": 1}, "<f4", (40,), "halves"),
    ("bitround_f8_ties", {"id": "bitround", "keepbits": 2}, "<f8", (40,), "halves"),
    # packbits: padding 0..7, non-bool chunks (any non-zero byte is true).
    ("packbits_9", {"id": "packbits"}, "|b1", (9,), "random"),
    ("packbits_16", {"id": "packbits"}, "|b1", (4, 4), "random"),
    ("packbits_1", {"id": "packbits"}, "|b1", (1,), "random"),
    ("packbits_15", {"id": "packbits"}, "|b1", (3, 5), "random"),
    ("packbits_u1", {"id": "packbits"}, "|u1", (13,), "bytes"),
    ("packbits_i2", {"id": "packbits"}, "<i2", (5,), "bytes"),
    # transpose (Zarr v3): permutations of 2 to 4 dimensions, every element size, "F" as a word.
    ("transpose_i2_120", {"id": "transpose", "order": [1, 2, 0]}, "<i2", (3, 4, 5), "random"),
    ("transpose_f8be_3102", {"id": "transpose", "order": [3, 1, 0, 2]}, ">f8", (2, 3, 4, 5), "random"),
    ("transpose_u1_10", {"id": "transpose", "order": [1, 0]}, "|u1", (7, 3), "random"),
    ("transpose_c16_201", {"id": "transpose", "order": [2, 0, 1]}, "<c16", (2, 3, 4), "bytes"),
    ("transpose_i4_F", {"id": "transpose", "order": "F"}, "<i4", (2, 3, 4), "random"),
    ("transpose_i8_same", {"id": "transpose", "order": [0, 1]}, "<i8", (3, 3), "random"),
    ("transpose_b1_ones", {"id": "transpose", "order": [2, 0, 1]}, "|b1", (1, 5, 1), "random"),
]


class Transpose:
    """numpy's transpose, the codec numcodecs lacks."""

    def __init__(self, order):
        self.order = order

    def axes(self, ndim):
        if self.order in ("C", "F"):
            return list(range(ndim))[:: 1 if self.order == "C" else -1]
        return self.order

    def encode(self, data):
        self.decoded = (data.shape, data.dtype)
        return np.ascontiguousarray(np.transpose(data, self.axes(data.ndim)))

    def decode(self, enc):
        shape, dtype = self.decoded
        stored = np.frombuffer(enc, dtype).reshape([shape[k] for k in self.axes(len(shape))])
        return np.transpose(stored, np.argsort(self.axes(len(shape))))


def main(out):
    cases = []
    assert len(set(c[0] for c in CASES)) == len(CASES), "case names name files: each once"
    for seed, (name, config, dtype, shape, how) in enumerate(CASES, start=300):
        data = values(dtype, shape, seed, how)
        assert data.dtype == np.dtype(dtype), name
        codec = Transpose(config["order"]) if config["id"] == "transpose" else numcodecs.get_codec(dict(config))
        if config["id"] == "bitround" and data.dtype.byteorder == ">":
            # numcodecs 0.11's bitround fails on big-endian floats (it looks up
            # max_bits by str(dtype), ">f4"): its encoding of the same values in
            # little-endian, as big-endian integers.
            le = np.dtype(dtype).newbyteorder("<")
            encoded = np.asarray(codec.encode(data.astype(le)))
            encoded = encoded.astype(encoded.dtype.newbyteorder(">"))
        else:
            encoded = np.asarray(codec.encode(data.copy()))  # bitround rounds its input in place
        enc = encoded.tobytes()
        decoded = np.ascontiguousarray(codec.decode(enc))
        for ext, blob in (("in", data.tobytes()), ("enc", enc), ("dec", decoded.tobytes())):
            with open(os.path.join(out, name + "." + ext), "wb") as f:
                f.write(blob)
        cases.append({"name": name, "config": config, "chunk": {"dtype": dtype, "shape": list(shape)},
                      "encoded_dtype": encoded.dtype.str, "encoded_size": int(encoded.size),
                      "encoded_shape": list(encoded.shape)})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"numcodecs": numcodecs.__version__, "cases": cases}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
