#!/usr/bin/python3
"""Seed corpus for one fuzz target, made from tests/fixtures.

usage: make_seeds.py TARGET FIXTURES_DIR OUT_DIR

Codec seeds are `u32le decoded size + payload` (see fuzz_codec.cpp): the
payloads of the N5 fixtures' chunks for that codec, plus a few made here with
Debian's Python codec modules. Single-file formats get the fixture files;
directory formats get each fixture dataset packed as a bundle
(fuzz_support.hpp). Seeds are small: big fixtures are skipped.
"""
import bz2, gzip, hashlib, json, lzma, os, struct, sys, zlib

MAX_SEED = 256 * 1024


def save(out, data):
    if len(data) <= MAX_SEED:
        name = hashlib.sha1(data).hexdigest()
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


def n5_chunks(fixtures, codec_dir_names):
    """(decoded size, payload) of N5 chunk files under datasets named like the codec."""
    import json
    for top, dirs, files in os.walk(os.path.join(fixtures, "n5")):
        if "attributes.json" not in files:
            continue
        try:
            attrs = json.load(open(os.path.join(top, "attributes.json")))
        except ValueError:
            continue
        comp = attrs.get("compression") or {}
        ctype = comp.get("type") if isinstance(comp, dict) else attrs.get("compressionType")
        if ctype not in codec_dir_names or "dataType" not in attrs:
            continue
        width = {"int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4,
                 "int64": 8, "uint64": 8, "float32": 4, "float64": 8}.get(attrs["dataType"], 1)
        for sub, _, chunk_files in os.walk(top):
            for name in chunk_files:
                if name.endswith(".json"):
                    continue
                raw = open(os.path.join(sub, name), "rb").read()
                if len(raw) < 4:
                    continue
                mode, ndim = struct.unpack(">HH", raw[:4])
                header = 4 + 4 * ndim + (4 if mode == 1 else 0)
                if len(raw) < header:
                    continue
                dims = struct.unpack(">%dI" % ndim, raw[4:4 + 4 * ndim])
                n = 1
                for d in dims:
                    n *= d
                if mode == 1:
                    n = struct.unpack(">I", raw[4 + 4 * ndim:header])[0]
                yield n * width, raw[header:]


def codec_seeds(target, fixtures, out):
    sample = bytes(range(256)) * 16 + b"stowage " * 512
    made = {
        "gzip": [gzip.compress(sample), zlib.compress(sample)],
        "bzip2": [bz2.compress(sample)],
        "xz": [lzma.compress(sample)],
        "zstd": [],
        "lz4": [],
        "lz4frame": [],
        "blosc": [],
    }[target]
    try:
        if target == "zstd":
            import zstandard
            made.append(zstandard.ZstdCompressor().compress(sample))
            made.append(zstandard.ZstdCompressor(write_checksum=True, level=19).compress(sample))
            made.append(zstandard.ZstdCompressor(write_content_size=False).compress(sample))
        if target == "lz4frame":
            # Every frame feature the decoder must handle: checksums, content
            # size, linked/independent and uncompressed blocks, 64 KiB blocks.
            import lz4.frame
            for opts in ({}, {"content_checksum": True}, {"block_checksum": True},
                         {"store_size": False}, {"block_linked": False},
                         {"block_size": lz4.frame.BLOCKSIZE_MAX64KB, "content_checksum": True}):
                made.append(lz4.frame.compress(sample, **opts))
            made.append(lz4.frame.compress(hashlib.sha512(sample).digest() * 4))  # incompressible: stored
            made.append(lz4.frame.compress(b""))
        if target == "blosc":
            import blosc
            made.append(blosc.compress(sample, typesize=4))
    except ImportError:
        pass
    for payload in made:
        save(out, struct.pack("<I", len(sample)) + payload)
    n5_types = {"gzip": {"gzip"}, "bzip2": {"bzip2"}, "xz": {"xz"}, "zstd": {"zstd"},
                "lz4": {"lz4"}, "blosc": {"blosc"}, "lz4frame": set()}[target]
    for size, payload in n5_chunks(fixtures, n5_types):
        save(out, struct.pack("<I", size) + payload)


def bundle(root, prefix):
    parts = []
    for top, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            path = os.path.join(top, name)
            rel = os.path.join(prefix, os.path.relpath(path, root)).encode()
            data = open(path, "rb").read()
            parts.append(struct.pack("<H", len(rel)) + rel + struct.pack("<I", len(data)) + data)
    return b"".join(parts)


def format_seeds(target, fixtures, out):
    base = os.path.join(fixtures, target if target != "npy" else "npy")
    if target == "datg":
        # The matrix with its two name files, as a.datg, a.rows.txt.gz, a.cols.txt.gz.
        for name in sorted(os.listdir(base)):
            if name.endswith(".datg"):
                stem = os.path.join(base, name[:-len(".datg")])
                seed = bundle_file(stem + ".datg", "a.datg")
                for side in (".rows.txt.gz", ".cols.txt.gz"):
                    if os.path.exists(stem + side):
                        seed += bundle_file(stem + side, "a" + side)
                save(out, seed)
    elif target == "npy":
        try:
            import io, numpy as np
            for arr in (np.arange(12, dtype="<i4").reshape(3, 4), np.zeros((2, 3), dtype=">f8"),
                        np.asfortranarray(np.arange(6, dtype="u2").reshape(2, 3)), np.array(True)):
                buf = io.BytesIO()
                np.save(buf, arr)
                save(out, buf.getvalue())
        except ImportError:
            pass
    elif target == "n5":
        # Every dataset (a folder with attributes.json and chunks) on its own,
        # under a root with the fixture's root attributes.
        for fixture in sorted(os.listdir(base)):
            root = os.path.join(base, fixture)
            if not fixture.endswith(".n5") or not os.path.isdir(root):
                continue
            top_attrs = os.path.join(root, "attributes.json")
            head = bundle_file(top_attrs, "d.n5/attributes.json") if os.path.exists(top_attrs) else b""
            for top, _, files in os.walk(root):
                if top != root and "attributes.json" in files:
                    rel = os.path.relpath(top, root)
                    save(out, head + bundle(top, os.path.join("d.n5", rel)))
    elif target == "datadings":
        for name in sorted(os.listdir(base)):
            if name.endswith(".msgpack"):
                seed = b""
                for extra in sorted(os.listdir(base)):
                    if extra == name or (extra.startswith(name + ".") and not extra.endswith((".json", ".bin"))):
                        seed += bundle_file(os.path.join(base, extra), "d.msgpack" + extra[len(name):])
                save(out, seed)
    elif target == "zarr":
        zarr_seeds(base, out)
        zarr_v3_seeds(base, out)
    else:  # bpcells, daf: fixture directories
        prefix = "m" if target == "bpcells" else "d"
        for name in sorted(os.listdir(base)):
            path = os.path.join(base, name)
            if os.path.isdir(path) and not name.endswith(".expected"):
                save(out, bundle(path, prefix))


def entry(name, data):
    """One file of a d.zarr store seed: its name and bytes (JSON for a dict)."""
    name = ("d.zarr/" + name).encode()
    data = data if isinstance(data, bytes) else json.dumps(data).encode()
    return struct.pack("<H", len(name)) + name + struct.pack("<I", len(data)) + data


def zarr_seeds(base, out):
    """Every fixture store whole (v2, and v3 sharded or not: metadata, shard
    indexes and chunks mutate together), and small Zarr v2 stores made here
    (no zarr module needed): filters (delta, shuffle, astype) over raw chunks
    and a consolidated .zmetadata."""
    for name in sorted(os.listdir(base)):
        if name.endswith(".zarr"):
            save(out, bundle(os.path.join(base, name), "d.zarr"))

    def zarray(dtype, shape, chunks, filters, fill=0):
        return {"zarr_format": 2, "dtype": dtype, "shape": shape, "chunks": chunks, "compressor": None,
                "fill_value": fill, "order": "C", "filters": filters}

    group = {"zarr_format": 2}
    # a: <i4 [1, 2, 4, 7] through delta then shuffle(4)
    deltas = struct.pack("<4i", 1, 1, 2, 3)
    shuffled = bytes(deltas[i * 4 + k] for k in range(4) for i in range(4))
    a = zarray("<i4", [6], [4], [{"id": "delta", "dtype": "<i4"}, {"id": "shuffle", "elementsize": 4}], 7)
    # b: <f8 stored as >f4 (astype), 2x2 chunks
    b = zarray("<f8", [2, 3], [2, 2], [{"id": "astype", "encode_dtype": ">f4", "decode_dtype": "<f8"}], "NaN")
    b_chunk = struct.pack(">4f", 1.5, -2.0, 0.25, 3.0)
    # c: <u2 delta stored as |i1
    c = zarray("<u2", [5], [5], [{"id": "delta", "dtype": "<u2", "astype": "|i1"}])
    c_chunk = struct.pack("<5b", 10, -1, 3, 0, -5)
    attrs = {"_ARRAY_DIMENSIONS": ["x"]}
    files = [(".zgroup", group), ("a/.zarray", a), ("a/.zattrs", attrs), ("a/0", shuffled),
             ("g/.zgroup", group), ("g/b/.zarray", b), ("g/b/0.0", b_chunk), ("c/.zarray", c), ("c/0", c_chunk)]
    save(out, b"".join(entry(n, d) for n, d in files))
    meta = {n: d for n, d in files if n.endswith((".zgroup", ".zarray", ".zattrs"))}
    zmetadata = {"metadata": meta, "zarr_consolidated_format": 1}
    chunks = [(n, d) for n, d in files if not n.endswith((".zgroup", ".zarray", ".zattrs"))]
    # consolidated: the root's .zgroup and .zmetadata, node files only in it
    save(out, entry(".zgroup", group) + entry(".zmetadata", zmetadata) + b"".join(entry(n, d) for n, d in chunks))
    # strings (vlen-utf8): v2 "|O" and v3 "string", 2x2 chunks of a 3x3 array, one chunk missing
    # (and zarr-python 3's stores in zarrs_strings/, whole)
    for name in sorted(os.listdir(os.path.join(base, "zarrs_strings"))):
        if name.endswith(".zarr"):
            save(out, bundle(os.path.join(base, "zarrs_strings", name), "d.zarr"))

    def vlen(words):
        return struct.pack("<I", len(words)) + b"".join(struct.pack("<I", len(w)) + w for w in words)

    s2 = dict(zarray("|O", [3, 3], [2, 2], [{"id": "vlen-utf8"}], ""))
    s3 = {"zarr_format": 3, "node_type": "array", "shape": [3, 3], "data_type": "string",
          "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
          "chunk_key_encoding": {"name": "default"}, "fill_value": "-",
          "codecs": [{"name": "vlen-utf8"}, {"name": "crc32c"}]}
    words = [b"a", b"", "\u00fc".encode(), b"zz"]
    save(out, entry(".zgroup", group) + entry("s/.zarray", s2) + entry("s/0.0", vlen(words)) +
         entry("s/0.1", vlen(words[::-1])) + entry("s/1.0", vlen(words)))
    with_crc = vlen(words) + struct.pack("<I", 0)  # a wrong crc32c: the reader must say so
    save(out, entry("zarr.json", {"zarr_format": 3, "node_type": "group"}) + entry("s/zarr.json", s3) +
         entry("s/c/0/0", with_crc) + entry("s/c/1/1", vlen(words)))


def zarr_v3_seeds(base, out):
    """zarr-python 3's stores with numcodecs.* codecs and checksums (zarrs' and
    our fixtures), and small v3 stores made here: a transpose in no layout
    order with a numcodecs.delta after it, numcodecs.shuffle inside shards,
    float16 and complex64 with their fill value forms."""
    for folder in (os.path.join(base, "zarrs_v3_zarr_python"),
                   os.path.join(base, "..", "checksums", "v3_zarr_python"),
                   os.path.join(base, "..", "checksums", "zarr_python_compat")):
        if os.path.isdir(folder):
            for name in sorted(os.listdir(folder)):
                if name.endswith(".zarr"):
                    save(out, bundle(os.path.join(folder, name), "d.zarr"))

    def array(shape, chunks, data_type, fill, codecs):
        return {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": data_type,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
                "chunk_key_encoding": {"name": "default"}, "fill_value": fill, "codecs": codecs}

    little = {"name": "bytes", "configuration": {"endian": "little"}}
    group = entry("zarr.json", {"zarr_format": 3, "node_type": "group"})
    # t: int16 [2,3,4], v[z][y][x] = 100z + 10y + x, stored transposed to [3,4,2], then delta
    t = array([2, 3, 4], [2, 3, 4], "int16", 0,
              [{"name": "transpose", "configuration": {"order": [1, 2, 0]}},
               {"name": "numcodecs.delta", "configuration": {"dtype": "<i2"}}, little])
    flat = [100 * z + 10 * y + x for y in range(3) for x in range(4) for z in range(2)]
    deltas = [flat[0]] + [(flat[i] - flat[i - 1] + 32768) % 65536 - 32768 for i in range(1, len(flat))]
    # s: uint32 [4,4] in one shard of two [2,4] inner chunks, each byte-shuffled
    s = array([4, 4], [4, 4], "uint32", 7,
              [{"name": "sharding_indexed", "configuration": {
                  "chunk_shape": [2, 4], "codecs": [{"name": "numcodecs.shuffle",
                                                     "configuration": {"elementsize": 4}}, little],
                  "index_codecs": [little], "index_location": "end"}}])

    def shuffled(values):
        raw = struct.pack("<%dI" % len(values), *values)
        return bytes(raw[i * 4 + k] for k in range(4) for i in range(len(values)))

    inner = [shuffled(list(range(8))), shuffled(list(range(8, 16)))]
    index = struct.pack("<4Q", 0, len(inner[0]), len(inner[0]), len(inner[1]))
    # h: float16 with a NaN fill, one chunk missing; c: big-endian complex64, fill [1, inf]
    h = array([3], [2], "float16", "NaN", [little])
    c = array([2, 2], [2, 2], "complex64", [1.0, "Infinity"], [{"name": "bytes", "configuration": {"endian": "big"}}])
    save(out, group + entry("t/zarr.json", t) + entry("t/c/0/0/0", struct.pack("<24h", *deltas)) +
         entry("s/zarr.json", s) + entry("s/c/0/0", inner[0] + inner[1] + index) +
         entry("h/zarr.json", h) + entry("h/c/0", struct.pack("<2e", 1.5, -0.0)) +
         entry("c/zarr.json", c) + entry("c/c/0/0", struct.pack(">8f", 1, -1, 0.5, 2, 0, 0, -3, 1e9)))


def bundle_file(path, name):
    data = open(path, "rb").read()
    name = name.encode()
    return struct.pack("<H", len(name)) + name + struct.pack("<I", len(data)) + data


def main():
    target, fixtures, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    if target in ("gzip", "bzip2", "xz", "zstd", "lz4", "lz4frame", "blosc"):
        codec_seeds(target, fixtures, out)
    else:
        format_seeds(target, fixtures, out)
    print("%s: %d seeds in %s" % (target, len(os.listdir(out)), out))


if __name__ == "__main__":
    main()
