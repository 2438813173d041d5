#!/usr/bin/env python3
"""stowage-convert against zarr-python and against the codec limit.

Workload (issue 9): the 256x512x512 uint16 volume of the N5 benchmark in
64^3 chunks, converted gzip 6 -> zstd 3 and raw -> blosc (lz4, shuffle, 5).
Prints MB/s (uncompressed) for stowage-convert with 1 and 2 threads,
zarr-python copying the same array (N5FSStore; with its defaults, and with
numcodecs' blosc threads off), and the limit: the two codecs alone on the
same chunks in memory, one thread, timed by codec_limit through this tree's
own codec plugins, so with the implementations and parameters stowage-convert
uses (gzip decoded by libdeflate where the plugin has it; blosc with the
element size, 2, as typesize, as the N5 plugin writes it). Every column is the
best of RUNS runs (--runs N, default 3). Run it with `ninja -C build
bench-convert` (or set STOWAGE_CONVERT and STOWAGE_CODEC_LIMIT).
"""
import os, resource, shutil, subprocess, sys, tempfile, time

import numcodecs
import numcodecs.blosc
import numpy as np
import zarr

SHAPE, CHUNK = (256, 512, 512), 64
CONVERT = os.environ.get('STOWAGE_CONVERT', 'stowage-convert')
CODEC_LIMIT = os.environ.get('STOWAGE_CODEC_LIMIT', 'codec_limit')
MB = np.prod(SHAPE) * 2 / 1e6
RUNS = 3
SETTLE_SECONDS = 6


def volume():
    rng = np.random.default_rng(42)
    z, y, x = np.ogrid[0:SHAPE[0], 0:SHAPE[1], 0:SHAPE[2]]
    smooth = 1000 + 300 * np.sin(x / 17.0) * np.cos(y / 23.0) + 2 * z
    return (smooth + rng.normal(0, 20, SHAPE)).astype('<u2')


def cpu_seconds():
    """CPU time (user + system) of this process and its finished children."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn):
    """(wall, cpu) seconds of fn(): on a loaded machine the CPU time is the steadier yardstick."""
    t0, c0 = time.perf_counter(), cpu_seconds()
    fn()
    return time.perf_counter() - t0, cpu_seconds() - c0


def fresh(dst):
    """Removes `dst` and lets the file system settle before a timed run.

    ext4 without a journal (this machine's root) skips inodes freed in the
    last few seconds when it allocates new ones, scanning past each: creating
    256 chunk files right after deleting the previous 256 cost 0.5 ms a file
    instead of 0.03 ms, which measured the deletion, not the conversion."""
    shutil.rmtree(dst, ignore_errors=True)
    time.sleep(SETTLE_SECONDS)


def best_of(runs, dst, fn):
    """The best wall and the best CPU time of `runs` runs of fn, each into a fresh `dst`."""
    wall = cpu = float('inf')
    for _ in range(runs):
        fresh(dst)
        w, c = timed(fn)
        wall, cpu = min(wall, w), min(cpu, c)
    return wall, cpu


def convert(src, dst, *args):
    subprocess.run([CONVERT, '--quiet', src, dst, '--overwrite', *args], check=True)


def zarr_copy(src, dst, compressor, blosc_threads=None):
    """zarr-python's copy; blosc_threads=False turns numcodecs' blosc threads off."""
    numcodecs.blosc.use_threads = blosc_threads
    a = zarr.open(zarr.n5.N5FSStore(src), mode='r')
    b = zarr.create(shape=a.shape, chunks=a.chunks, dtype=a.dtype, compressor=compressor,
                    store=zarr.n5.N5FSStore(dst), overwrite=True)
    b[...] = a[...]
    numcodecs.blosc.use_threads = None


def codec_limit(src, decoder, encoder):
    """Best of RUNS: decode every chunk payload of `src` and encode it again,
    in memory, one thread, through our own codec plugins (codec_limit)."""
    out = subprocess.run([CODEC_LIMIT, str(RUNS), src, decoder, encoder], check=True,
                         capture_output=True, text=True).stdout
    wall, cpu = out.split()[:2]
    return float(wall), float(cpu)


def main():
    global RUNS
    args = sys.argv[1:]
    if args[:1] == ['--runs']:
        RUNS = max(1, int(args[1]))
        args = args[2:]
    if args[:1] == ['--small-only']:  # just the small round trip
        args = args[1:]
        work = args[0] if args else tempfile.mkdtemp(prefix='stowage-convert-bench-')
        os.makedirs(work, exist_ok=True)
        return small_job(work)
    work = args[0] if args else tempfile.mkdtemp(prefix='stowage-convert-bench-')
    os.makedirs(work, exist_ok=True)
    npy = os.path.join(work, 'volume.npy')
    np.save(npy, volume())
    chunks = f'{CHUNK},{CHUNK},{CHUNK}'
    gz, raw = os.path.join(work, 'gzip.n5'), os.path.join(work, 'raw.n5')
    convert(npy, gz, '--compression', 'gzip:level=6', '--chunks', chunks)
    convert(npy, raw, '--compression', 'raw', '--chunks', chunks)
    out = os.path.join(work, 'out.n5')
    # (name, source, stowage-convert spec, zarr's compressor, limit decoder, limit encoder)
    cases = [
        ('gzip 6 -> zstd 3', gz, 'zstd:level=3', numcodecs.Zstd(level=3),
         '{"type": "gzip"}', '{"type": "zstd", "level": 3}'),
        ('raw -> blosc lz4 shuffle 5', raw, 'blosc:cname=lz4,clevel=5,shuffle=1',
         numcodecs.Blosc(cname='lz4', clevel=5, shuffle=1),
         '{"type": "raw"}', '{"type": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "typesize": 2}'),
    ]
    print(f'volume {SHAPE} uint16, {CHUNK}^3 chunks, {MB:.0f} MB; figures in MB/s (uncompressed)')
    print(f'Rules (every column): best of {RUNS} runs; warm page cache for the sources (read before);\n'
          f'each run writes into a fresh directory after a {SETTLE_SECONDS} s pause, no sync; threads:\n'
          f'stowage 1T/2T as named; zarr: zarr-python with its defaults (numcodecs runs c-blosc on its own\n'
          f'threads), zarr 1T: numcodecs.blosc.use_threads=False (the same as zarr for zstd, which has no\n'
          f'threads); limit 1T: our own codec plugins alone, decode + encode in memory, one thread, same\n'
          f'parameters as stowage-convert (blosc typesize 2)')
    print('Each row twice: MB/s of wall time, then MB/s of CPU time (user + system, all threads; the\n'
          'steadier yardstick on a loaded machine; for 2T and zarr with threads it sums both cores).')
    print(f'{"conversion":30} {"stowage 1T":>10} {"stowage 2T":>10} {"zarr":>8} {"zarr 1T":>8} {"limit 1T":>9} '
          f'{"1T/limit":>8} {"2T/limit":>8} {"2T/zarr":>8} {"1T/zarr1T":>9}')
    for name, src, spec, zarr_codec, decoder, encoder in cases:
        t1 = best_of(RUNS, out, lambda: convert(src, out, '--compression', spec, '--threads', '1'))
        t2 = best_of(RUNS, out, lambda: convert(src, out, '--compression', spec, '--threads', '2'))
        tz = best_of(RUNS, out, lambda: zarr_copy(src, out, zarr_codec))
        tz1 = best_of(RUNS, out, lambda: zarr_copy(src, out, zarr_codec, False)) \
            if isinstance(zarr_codec, numcodecs.Blosc) else tz
        limit = codec_limit(src, decoder, encoder)
        for k, clock in ((0, 'wall'), (1, 'cpu')):
            print(f'{name + " (" + clock + ")":30} {MB / t1[k]:10.1f} {MB / t2[k]:10.1f} {MB / tz[k]:8.1f} '
                  f'{MB / tz1[k]:8.1f} {MB / limit[k]:9.1f} {limit[k] / t1[k]:8.2f} {limit[k] / t2[k]:8.2f} '
                  f'{tz[k] / t2[k]:8.2f} {tz1[k] / t1[k]:9.2f}', flush=True)
    small_job(work)
    if not args:
        shutil.rmtree(work, ignore_errors=True)


SMALL_SHAPE = (256, 256, 512)  # 64 MiB of uint16: a job where fixed costs show


def small_job(work):
    """The round trip a user runs on a small volume: .npy -> N5 (blosc lz4,
    shuffle, 5; 64^3 chunks) -> .npy, as two stowage-convert runs (process
    start, plugin loading and all) against zarr-python doing the same in
    one process (numpy load and save included)."""
    src = os.path.join(work, 'small.npy')
    np.save(src, volume()[:SMALL_SHAPE[0], :SMALL_SHAPE[1], :SMALL_SHAPE[2]])
    mid, back = os.path.join(work, 'small.n5'), os.path.join(work, 'small-back.npy')
    chunks = f'{CHUNK},{CHUNK},{CHUNK}'
    blosc = numcodecs.Blosc(cname='lz4', clevel=5, shuffle=1)

    def ours(threads):
        convert(src, mid, '--compression', 'blosc:cname=lz4,clevel=5,shuffle=1', '--chunks', chunks,
                '--threads', str(threads))
        convert(mid, back, '--threads', str(threads), '--drop-metadata')

    def theirs():
        a = np.load(src)
        z = zarr.create(shape=a.shape, chunks=(CHUNK,) * 3, dtype=a.dtype, compressor=blosc,
                        store=zarr.n5.N5FSStore(mid), overwrite=True)
        z[...] = a
        np.save(back, zarr.open(zarr.n5.N5FSStore(mid), mode='r')[...])

    def best(fn):
        wall = cpu = float('inf')
        for _ in range(RUNS):
            shutil.rmtree(mid, ignore_errors=True)
            if os.path.exists(back):
                os.remove(back)
            time.sleep(SETTLE_SECONDS)
            w, c = timed(fn)
            wall, cpu = min(wall, w), min(cpu, c)
        return wall, cpu

    t1, t2, tz = best(lambda: ours(1)), best(lambda: ours(2)), best(theirs)
    assert (np.load(back) == np.load(src)).all()
    mb = np.prod(SMALL_SHAPE) * 2 / 1e6
    print(f'\nsmall job: {SMALL_SHAPE} uint16 ({mb:.0f} MB) .npy -> N5 blosc 64^3 -> .npy, seconds, best of {RUNS}')
    print(f'{"clock":6} {"stowage 1T":>10} {"stowage 2T":>10} {"zarr":>8} {"zarr/1T":>8} {"zarr/2T":>8}')
    for k, clock in ((0, 'wall'), (1, 'cpu')):
        print(f'{clock:6} {t1[k]:10.3f} {t2[k]:10.3f} {tz[k]:8.3f} {tz[k] / t1[k]:8.2f} {tz[k] / t2[k]:8.2f}',
              flush=True)


if __name__ == '__main__':
    main()
