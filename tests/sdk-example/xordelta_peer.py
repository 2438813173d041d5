"""zarr-python 2.13 (Debian's python3-zarr, numcodecs 0.11) as the peer of
the example codecs (examples/plugin-sdk): numcodecs codecs for `xordelta`
and `snappy`, written here from their definitions (numpy and python-snappy,
nothing of stowage's), registered with numcodecs.register_codec, then

  xordelta_peer.py read STORE NODE OUT   reads NODE of the Zarr v2 STORE,
                                         writes its values (C order, the
                                         array's dtype) to OUT and prints one
                                         JSON line: what zarr-python sees
  xordelta_peer.py write STORE           writes node "py" (float64 7x9 in
                                         3x4 chunks, v[r][c] = 9 r + c - 3.25,
                                         big-endian) with filter xordelta and
                                         compressor snappy, for stowage to read
"""
import json
import os
import sys

import numcodecs
import numpy as np
import snappy
import zarr
from numcodecs.abc import Codec
from numcodecs.compat import ensure_bytes, ensure_contiguous_ndarray, ndarray_copy


class XorDelta(Codec):
    """Element k stored as the XOR of its bits with element k-1's."""

    codec_id = "xordelta"
    # The element type when the config has no "dtype": stowage's codec takes
    # the chunk's, which a numcodecs filter is not told, so main() sets the
    # array's here before zarr-python opens it.
    array_dtype = None

    def __init__(self, dtype=None):
        self.dtype = dtype

    def get_config(self):
        config = {"id": self.codec_id}
        if self.dtype is not None:
            config["dtype"] = self.dtype
        return config

    @staticmethod
    def _words(buf, dtype):
        # The chunk as unsigned integers of the element's width: XOR works on
        # bits, so the byte order does not matter.
        a = ensure_contiguous_ndarray(buf)
        a = a.view(dtype)
        return a.view("u%d" % a.dtype.itemsize)

    def _dtype(self):
        dtype = self.dtype if self.dtype is not None else XorDelta.array_dtype
        if dtype is None:
            raise ValueError("xordelta: no \"dtype\" and no array dtype")
        return dtype

    def encode(self, buf):
        words = self._words(buf, self._dtype())
        out = words.copy()
        out[1:] ^= words[:-1]
        return out

    def decode(self, buf, out=None):
        dtype = self._dtype()
        dec = np.bitwise_xor.accumulate(self._words(buf, dtype))
        return ndarray_copy(dec.view(np.dtype(dtype)), out)


class Snappy(Codec):
    """snappy's raw format, as python-snappy writes it."""

    codec_id = "snappy"

    def encode(self, buf):
        return snappy.compress(ensure_contiguous_ndarray(buf).tobytes())

    def decode(self, buf, out=None):
        dec = np.frombuffer(snappy.decompress(ensure_bytes(buf)), dtype="u1")
        return ndarray_copy(dec, out)


numcodecs.register_codec(XorDelta)
numcodecs.register_codec(Snappy)


def main():
    mode, store = sys.argv[1], sys.argv[2]
    if mode == "read":
        node, out = sys.argv[3], sys.argv[4]
        with open(os.path.join(store, node, ".zarray")) as f:
            XorDelta.array_dtype = json.load(f)["dtype"]
        a = zarr.open(store, mode="r")[node]
        values = a[...]
        with open(out, "wb") as f:
            f.write(np.ascontiguousarray(values).tobytes())
        print(json.dumps({
            "node": node,
            "dtype": a.dtype.str,
            "shape": list(a.shape),
            "filters": [f.get_config() for f in (a.filters or [])],
            "compressor": a.compressor.get_config() if a.compressor else None,
        }))
    elif mode == "write":
        values = (np.arange(63).reshape(7, 9) - 3.25).astype(">f8")
        root = zarr.open_group(store, mode="w")
        a = root.create_dataset("py", shape=values.shape, chunks=(3, 4), dtype=">f8",
                                filters=[XorDelta(">f8")], compressor=Snappy())
        a[...] = values
        print("ok")
    else:
        sys.exit("usage: xordelta_peer.py read STORE NODE OUT | write STORE")


if __name__ == "__main__":
    main()
