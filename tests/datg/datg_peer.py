#!/usr/bin/python3
"""Independent datg reader (and fixture crafter) for the stowage tests.

Written from the byte layout in docs/formats/datg.md, with Debian's
python3-lz4 and numpy only; it shares no code with the C++ plugin.

  datg_peer.py read <file.datg> <out.bin> <out.json>
      Decodes the whole matrix to little-endian float64 (C order) in out.bin and
      writes the footer, metadata, names and block layout to out.json.
  datg_peer.py set-index <in.datg> <out.datg> <offset,offset,...>
      Copies a flag-1 file with its block index replaced by the given offsets
      (a new LZ4 frame; the metadata offset in the footer follows it).
"""
import gzip
import json
import struct
import sys

import lz4.block
import lz4.frame
import numpy as np

FOOTER = 44
FRAME_MAGIC = b"\x04\x22\x4d\x18"


def java_utf(raw):
    """Java modified UTF-8 -> str: C0 80 is NUL, surrogate pairs are 2 x 3 bytes."""
    text = raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")


def read_footer(data):
    f = data[-FOOTER:]
    created, rows, cols, index_off, meta_off, rpb = struct.unpack(">qiiqqi", f[:36])
    if f[40:44] != b"UMCG":
        raise ValueError("bad magic")
    if f[36:39] != b"\0\0\0" or f[39] not in (0, 1):
        raise ValueError("bad reserved/flag bytes")
    return dict(created=created, rows=rows, cols=cols, index_offset=index_off,
                metadata_offset=meta_off, rows_per_block=rpb, flag=f[39])


def lz4block_stream(buf, expected):
    """Decodes an lz4-java LZ4BlockOutputStream stream (chunks up to an end mark)."""
    out, pos = bytearray(), 0
    while True:
        if buf[pos:pos + 8] != b"LZ4Block":
            raise ValueError("bad LZ4Block magic at %d" % pos)
        token = buf[pos + 8]
        clen, olen, _checksum = struct.unpack("<iii", buf[pos + 9:pos + 21])
        pos += 21
        if olen == 0:  # end mark
            break
        payload = buf[pos:pos + clen]
        pos += clen
        if token & 0xF0 == 0x10:
            out += payload
        else:
            out += lz4.block.decompress(payload, uncompressed_size=olen)
    if len(out) != expected:
        raise ValueError("stream holds %d bytes, expected %d" % (len(out), expected))
    return bytes(out)


def decode(buf, flag, expected):
    if flag == 1:
        if buf[:4] != FRAME_MAGIC:
            raise ValueError("not an LZ4 frame")
        flg = buf[4]
        if flg & 0x01:
            raise ValueError("dictID set: the Java reader refuses it")
        out = lz4.frame.decompress(bytes(buf))
        if len(out) != expected:
            raise ValueError("frame holds %d bytes, expected %d" % (len(out), expected))
        return out
    return lz4block_stream(buf, expected)


def names(path):
    with gzip.open(path, "rb") as f:
        text = f.read().decode("utf-8")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.split("\t")[0] for line in lines]


def read(path, out_bin, out_json):
    data = open(path, "rb").read()
    ft = read_footer(data)
    rows, cols, rpb, flag = ft["rows"], ft["cols"], ft["rows_per_block"], ft["flag"]
    n_blocks = (rows + rpb - 1) // rpb
    index_raw = decode(data[ft["index_offset"]:ft["metadata_offset"]], flag, 8 * n_blocks)
    offsets = list(struct.unpack(">%dq" % n_blocks, index_raw))
    ends = offsets[1:] + [ft["index_offset"]]
    matrix = np.zeros((rows, cols), dtype=">f8")
    frame_flags = set()
    for b, (begin, end) in enumerate(zip(offsets, ends)):
        first = b * rpb
        count = min(rpb, rows - first)
        raw = decode(data[begin:end], flag, count * cols * 8)
        if flag == 1:
            frame_flags.add(data[begin + 4])
        matrix[first:first + count] = np.frombuffer(raw, dtype=">f8").reshape(count, cols)
    strings, pos = [], ft["metadata_offset"]
    for _ in range(3):
        (length,) = struct.unpack(">H", data[pos:pos + 2])
        strings.append(java_utf(data[pos + 2:pos + 2 + length]))
        pos += 2 + length
    if pos != len(data) - FOOTER:
        raise ValueError("metadata strings do not end at the footer")
    base = path[:-5] if path.endswith(".datg") else path
    matrix.astype("<f8").tofile(out_bin)
    ft.update(dataset_name=strings[0], row_entity=strings[1], column_entity=strings[2],
              block_offsets=offsets, frame_flg=sorted(frame_flags),
              row_names=names(base + ".rows.txt.gz"), col_names=names(base + ".cols.txt.gz"))
    with open(out_json, "w", encoding="utf-8") as f:
        json.dump(ft, f, ensure_ascii=True)


def set_index(src, dst, offsets):
    data = open(src, "rb").read()
    ft = read_footer(data)
    if ft["flag"] != 1:
        raise ValueError("set-index handles flag-1 files only")
    index = lz4.frame.compress(struct.pack(">%dq" % len(offsets), *offsets),
                               content_checksum=True)
    body = data[:ft["index_offset"]] + index
    meta = data[ft["metadata_offset"]:-FOOTER]
    footer = bytearray(data[-FOOTER:])
    footer[24:32] = struct.pack(">q", len(body))
    open(dst, "wb").write(body + meta + bytes(footer))


if __name__ == "__main__":
    if sys.argv[1] == "read":
        read(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "set-index":
        set_index(sys.argv[2], sys.argv[3], [int(x) for x in sys.argv[4].split(",") if x])
    else:
        sys.exit("unknown command " + sys.argv[1])
