# Baseline for bench/datadings: reads the benchmark's dataset the way
# datadings' MsgpackReader does (offsets file, one read per chunk of 16
# samples, msgpack + msgpack_numpy decode; random access with one seek and
# read per sample; key lookups through a {salted blake2s hash: index} dict),
# using only Debian's python3-msgpack and python3-msgpack-numpy.
import hashlib, random, struct, sys, time
import msgpack, msgpack_numpy

path = sys.argv[1]
offsets = open(path + ".offsets", "rb").read()
n = len(offsets) // 8 - 1
off = struct.unpack(">%dQ" % (n + 1), offsets)
unpack = lambda b: msgpack.unpackb(b, raw=False, strict_map_key=False, object_hook=msgpack_numpy.decode)

class Timer:
    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()

def report(what, count, t):
    wall, cpu = time.perf_counter() - t.wall, time.process_time() - t.cpu
    print("%-34s %7d  wall %7.3f s %10.0f/s   cpu %7.3f s %10.0f/s" % (what, count, wall, count / wall, cpu, count / cpu),
          flush=True)

with open(path, "rb") as f:
    t = Timer()
    for first in range(0, n, 16):
        last = min(n, first + 16)
        f.seek(off[first])
        chunk = f.read(off[last] - off[first])
        for i in range(first, last):
            unpack(chunk[off[i] - off[first]:off[i + 1] - off[first]])
    report("python: sequential read + decode", n, t)

    rng = random.Random(7)
    picks = [rng.randrange(n) for _ in range(10000)]
    t = Timer()
    for i in picks:
        f.seek(off[i])
        unpack(f.read(off[i + 1] - off[i]))
    report("python: random read by index", len(picks), t)

key_hashes = open(path + ".key_hashes", "rb").read()
salt = key_hashes[:8]
table = {h: i for i, (h,) in enumerate(struct.iter_unpack(">Q", key_hashes[8:]))}
keys = ["train/%07d" % i for i in picks]
t = Timer()
found = 0
for k in keys:
    h = struct.unpack(">Q", hashlib.blake2s(k.encode(), salt=salt).digest()[:8])[0]
    found += table.get(h) is not None
report("python: find_index by key", len(keys), t)
assert found == len(keys)
