# Baseline for bench/datadings: reads the benchmark's dataset the way
# datadings' MsgpackReader does (offsets file, one read per chunk of 16
# samples, msgpack + msgpack_numpy decode; random access with one seek and
# read per sample; key lookups through a {salted blake2s hash: index} dict),
# using only Debian's python3-msgpack and python3-msgpack-numpy.
#
#   peer_python_reader.py DATA_FILE INDICES_FILE RUNS
#
# INDICES_FILE holds the random indices datadings_bench times (uint64 little
# endian), so both sides read the same samples. Every row is the best of RUNS
# passes, as on the C++ side, and each operation is timed twice where the C++
# side is: returning the raw bytes, and decoding each sample into values.
import hashlib, struct, sys, time
import msgpack, msgpack_numpy

path, indices_path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
offsets = open(path + ".offsets", "rb").read()
n = len(offsets) // 8 - 1
off = struct.unpack(">%dQ" % (n + 1), offsets)
unpack = lambda b: msgpack.unpackb(b, raw=False, strict_map_key=False, object_hook=msgpack_numpy.decode)
raw = open(indices_path, "rb").read()
picks = list(struct.unpack("<%dQ" % (len(raw) // 8), raw))


def best_of(what, count, fn):
    wall = cpu = float("inf")
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = min(wall, time.perf_counter() - w), min(cpu, time.process_time() - c)
    print("%-42s %7d  wall %7.3f s %10.0f/s   cpu %7.3f s %10.0f/s" % (what, count, wall, count / wall, cpu, count / cpu),
          flush=True)


with open(path, "rb") as f:
    def sequential(decode):
        def run():
            for first in range(0, n, 16):
                last = min(n, first + 16)
                f.seek(off[first])
                chunk = f.read(off[last] - off[first])
                for i in range(first, last):
                    s = chunk[off[i] - off[first]:off[i + 1] - off[first]]
                    if decode:
                        unpack(s)
        return run

    def random_reads(decode):
        def run():
            for i in picks:
                f.seek(off[i])
                s = f.read(off[i + 1] - off[i])
                if decode:
                    unpack(s)
        return run

    best_of("python: sequential read (raw bytes)", n, sequential(False))
    best_of("python: sequential read + decode", n, sequential(True))
    best_of("python: random read by index", len(picks), random_reads(False))
    best_of("python: random read by index + decode", len(picks), random_reads(True))

    key_hashes = open(path + ".key_hashes", "rb").read()
    salt = key_hashes[:8]
    table = {h: i for i, (h,) in enumerate(struct.iter_unpack(">Q", key_hashes[8:]))}
    keys = ["train/%07d" % i for i in picks]

    def find(k):
        return table.get(struct.unpack(">Q", hashlib.blake2s(k.encode(), salt=salt).digest()[:8])[0])

    def find_all():
        assert all(find(k) is not None for k in keys)

    def find_and_read():
        for k in keys:
            i = find(k)
            f.seek(off[i])
            f.read(off[i + 1] - off[i])

    best_of("python: find by key", len(keys), find_all)
    best_of("python: random read by key (find + read)", len(keys), find_and_read)
