#!/usr/bin/env python3
"""stowage-convert against zarr-python and against the codec limit.

Workload (issue 9): the 256x512x512 uint16 volume of the N5 benchmark in
64^3 chunks, converted gzip 6 -> zstd 3 and raw -> blosc (lz4, shuffle, 5).
Prints MB/s (uncompressed) for stowage-convert with 1 and 2 threads,
zarr-python copying the same array (N5FSStore), and the limit: the two
codecs alone on the same chunks in memory (numcodecs, which calls the same C
libraries). Run it with `ninja -C build bench-convert`.
"""
import os, shutil, subprocess, sys, tempfile, time

import numcodecs
import numpy as np
import zarr

SHAPE, CHUNK = (256, 512, 512), 64
CONVERT = os.environ.get('STOWAGE_CONVERT', 'stowage-convert')
MB = np.prod(SHAPE) * 2 / 1e6
RUNS = 3
SETTLE_SECONDS = 6


def volume():
    rng = np.random.default_rng(42)
    z, y, x = np.ogrid[0:SHAPE[0], 0:SHAPE[1], 0:SHAPE[2]]
    smooth = 1000 + 300 * np.sin(x / 17.0) * np.cos(y / 23.0) + 2 * z
    return (smooth + rng.normal(0, 20, SHAPE)).astype('<u2')


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def fresh(dst):
    """Removes `dst` and lets the file system settle before a timed run.

    ext4 without a journal (this machine's root) skips inodes freed in the
    last few seconds when it allocates new ones, scanning past each: creating
    256 chunk files right after deleting the previous 256 cost 0.5 ms a file
    instead of 0.03 ms, which measured the deletion, not the conversion."""
    shutil.rmtree(dst, ignore_errors=True)
    time.sleep(SETTLE_SECONDS)


def best_of(runs, dst, fn):
    """The fastest of `runs` timed runs of fn, each into a fresh `dst`."""
    best = float('inf')
    for _ in range(runs):
        fresh(dst)
        best = min(best, timed(fn))
    return best


def convert(src, dst, *args):
    subprocess.run([CONVERT, '--quiet', src, dst, '--overwrite', *args], check=True)


def zarr_copy(src, dst, compressor):
    a = zarr.open(zarr.n5.N5FSStore(src), mode='r')
    b = zarr.create(shape=a.shape, chunks=a.chunks, dtype=a.dtype, compressor=compressor,
                    store=zarr.n5.N5FSStore(dst), overwrite=True)
    b[...] = a[...]


def codec_limit(src, decoder, encoder):
    """Decode every chunk payload of `src` and encode it again, in memory."""
    payloads = []
    for root, _, files in os.walk(src):
        for f in files:
            if f != 'attributes.json':
                with open(os.path.join(root, f), 'rb') as fh:
                    raw = fh.read()
                ndim = int.from_bytes(raw[2:4], 'big')
                payloads.append(raw[4 + 4 * ndim:])
    return timed(lambda: [encoder.encode(decoder.decode(p)) for p in payloads])


def main():
    work = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix='stowage-convert-bench-')
    os.makedirs(work, exist_ok=True)
    npy = os.path.join(work, 'volume.npy')
    np.save(npy, volume())
    chunks = f'{CHUNK},{CHUNK},{CHUNK}'
    gz, raw = os.path.join(work, 'gzip.n5'), os.path.join(work, 'raw.n5')
    convert(npy, gz, '--compression', 'gzip:level=6', '--chunks', chunks)
    convert(npy, raw, '--compression', 'raw', '--chunks', chunks)
    out = os.path.join(work, 'out.n5')
    cases = [
        ('gzip 6 -> zstd 3', gz, 'zstd:level=3', numcodecs.Zstd(level=3), numcodecs.GZip(6)),
        ('raw -> blosc lz4 shuffle 5', raw, 'blosc:cname=lz4,clevel=5,shuffle=1',
         numcodecs.Blosc(cname='lz4', clevel=5, shuffle=1), None),
    ]
    print(f'volume {SHAPE} uint16, {CHUNK}^3 chunks, {MB:.0f} MB; figures in MB/s (uncompressed)')
    print(f'best of {RUNS} runs each')
    print(f'{"conversion":30} {"stowage 1T":>10} {"stowage 2T":>10} {"zarr":>8} {"limit 1T":>9} '
          f'{"1T/limit":>8} {"2T/limit":>8} {"2T/zarr":>8}')
    for name, src, spec, zarr_codec, decoder in cases:
        t1 = best_of(RUNS, out, lambda: convert(src, out, '--compression', spec, '--threads', '1'))
        t2 = best_of(RUNS, out, lambda: convert(src, out, '--compression', spec, '--threads', '2'))
        tz = best_of(RUNS, out, lambda: zarr_copy(src, out, zarr_codec))
        limit = codec_limit(src, decoder or numcodecs.Zstd(), zarr_codec) if decoder else None
        if limit is None:  # raw source: the limit is the blosc encode alone
            data = np.load(npy)
            blocks = [data[z:z + CHUNK, y:y + CHUNK, x:x + CHUNK].tobytes()
                      for z in range(0, SHAPE[0], CHUNK) for y in range(0, SHAPE[1], CHUNK)
                      for x in range(0, SHAPE[2], CHUNK)]
            limit = timed(lambda: [zarr_codec.encode(b) for b in blocks])
        print(f'{name:30} {MB / t1:10.1f} {MB / t2:10.1f} {MB / tz:8.1f} {MB / limit:9.1f} '
              f'{limit / t1:8.2f} {limit / t2:8.2f} {tz / t2:8.2f}')
    if len(sys.argv) <= 1:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
