"""A tour of the stowage Python package over the bundled examples.

    meson devenv -C build python3 examples/python/tour.py examples   # from a build
    python3 examples/python/tour.py examples                         # after pip install

Reads each example format into numpy/scipy, iterates datadings samples,
converts a volume and checks the copy; exits non-zero if anything differs.
"""

import pathlib
import sys
import tempfile

import numpy as np

import stowage

examples = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "examples")

loaded = [p for p in stowage.plugins() if p["state"] == "loaded"]
print(f"stowage {stowage.__version__}: {len(loaded)} plugins loaded, e.g. {loaded[0]['path']}")

# An N5 volume: the tree, a region, the attributes.
volume = stowage.open(examples / "volume.n5")
print(f"\n{volume.path}: format {volume.format}, children {volume.keys()}")
s0 = volume["raw/s0"]
print(f"raw/s0: shape {s0.shape} {s0.dtype}, chunks {s0.chunks}, codec {s0.codec}, attrs {s0.attrs}")
block = s0[10:20, :, 5]  # integers, slices and ... as in numpy
print(f"s0[10:20, :, 5] -> {block.shape} array, mean {block.mean():.1f}")
whole = np.asarray(s0)
assert np.array_equal(whole[10:20, :, 5], block)

# A .npy matrix and a BPCells sparse matrix.
expression = stowage.open(examples / "expression.npy")[""]
assert np.array_equal(expression[...], np.load(examples / "expression.npy"))
counts = stowage.open(examples / "counts.bpcells")[""]
m = counts.to_scipy()
print(f"\ncounts.bpcells: {counts.shape} {counts.format} {counts.dtype}, nnz {counts.nnz} -> scipy {type(m).__name__}")
print("first row names:", counts.dims[0][1][:3] if counts.dims[0][1] else None)
assert m.nnz == counts.nnz and np.array_equal(m.toarray(), np.asarray(counts))

# datadings samples, decoded as datadings' reader does.
samples = stowage.open(examples / "basic.msgpack")[""]
print(f"\nbasic.msgpack: {len(samples)} samples; keys {[samples.key(i) for i in range(len(samples))]}")
first = samples[0]
print("sample 0:", {k: (f"ndarray {v.shape} {v.dtype}" if isinstance(v, np.ndarray) else v) for k, v in first.items()})
assert samples.find(samples.key(2)) == 2 and len(list(samples)) == len(samples)

# Convert the volume (re-compressed) and compare every array.
with tempfile.TemporaryDirectory() as tmp:
    summary = stowage.convert(examples / "volume.n5", f"{tmp}/volume-zstd.n5", compression="zstd:level=5")
    print(f"\nconvert: {summary['nodes']} nodes, {summary['bytes_in']} bytes in, {summary['bytes_out']} out")
    copy = stowage.open(f"{tmp}/volume-zstd.n5")
    for name in ("labels", "raw/s0", "raw/s1"):
        assert copy[name].codec["type"] == "zstd"
        assert np.array_equal(copy[name][...], volume[name][...]), name
print("\nevery check passed")
