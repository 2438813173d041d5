"""Every format on S3: written through stowage into a real radosgw, read back
equal, and seen by boto3 as a peer; a new dataset is published chunks first,
metadata last (docs/design.md, rule 8), so a reader never finds metadata
before the chunks it names and an interrupted writer leaves no dataset.

The cluster (conftest's `server`: tests/support/radosgw.py) is started once
for the module and stopped by PID; stowage reaches it through storage options.
"""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import stowage

from conftest import needs, tool


EXAMPLES = pathlib.Path(__file__).parents[2] / "examples"
METADATA = {"attributes.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata", "zarr.json"}


@pytest.fixture
def opts(server):
    return {"endpoint": server["endpoint"], "access_key_id": server["access_key"],
            "secret_access_key": server["secret_key"]}


def keys(s3, bucket, prefix=""):
    out = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        out += [o["Key"] for o in page.get("Contents", [])]
    return out


def metadata_keys(names):
    return [k for k in names if k.rsplit("/", 1)[-1] in METADATA]


def arrays_in(url, opts):
    """The array nodes a reader finds at url: none where there is no dataset
    (N5 opens a bare *.n5 directory as a container of groups)."""
    try:
        store = stowage.open(url, storage_options=opts)
    except stowage.Error:
        return []
    found, groups = [], [""]
    while groups:
        node = groups.pop()
        for name in store.keys(node):
            path = f"{node}/{name}" if node else name
            if hasattr(store[path], "shape"):
                found.append(path)
            else:
                groups.append(path)
    return found


VOLUME = ["labels", "raw/s0", "raw/s1"]


@needs("zarr", "n5", "gzip", "s3")
@pytest.mark.parametrize("name,options", [
    ("v.n5", {}),
    ("v2.zarr", {"zarr_version": 2}),
    ("v3.zarr", {"zarr_version": 3}),
    ("sharded.zarr", {"zarr_version": 3, "chunks": "32,32,32", "shards": "64,64,64"}),
])
def test_convert_into_s3_reads_back_equal(s3, bucket, opts, name, options):
    src = stowage.open(EXAMPLES / "volume.n5")
    url = f"s3://{bucket}/{name}"
    summary = stowage.convert(EXAMPLES / "volume.n5", url, destination_storage_options=opts, **options)
    assert summary["nodes"] >= 3 and summary["bytes_out"] > 0
    dst = stowage.open(url, storage_options=opts)
    for node in VOLUME:
        np.testing.assert_array_equal(np.asarray(dst[node]), np.asarray(src[node]), err_msg=node)
    names = keys(s3, bucket, name + "/")
    assert metadata_keys(names) and len(names) > len(metadata_keys(names))
    # stowage-info on the URL, the endpoint as a storage option.
    given = [a for k, v in opts.items() for a in ("--storage-option", f"{k}={v}")]
    info = subprocess.run([tool("stowage-info"), "--json", *given, url], capture_output=True, text=True)
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["format"] == ("n5" if name.endswith(".n5") else "zarr")


@needs("s3", "bpcells", "daf")
@pytest.mark.parametrize("source,format", [(EXAMPLES / "counts.bpcells", "bpcells"),
                                           (pathlib.Path(__file__).parents[1] / "fixtures" / "daf" / "gen_v10_types",
                                            "daf")])
def test_formats_that_publish_by_rename_are_refused_before_a_byte(s3, bucket, opts, source, format):
    with pytest.raises(stowage.Error, match=f"s3://{bucket}/x.{format}: .*cannot rename"):
        stowage.convert(source, f"s3://{bucket}/x.{format}", destination_storage_options=opts, to=format)
    assert not keys(s3, bucket)


DATG = pathlib.Path(__file__).parents[1] / "fixtures" / "datg" / "basic_4x5.datg"


@needs("s3")
@pytest.mark.parametrize("example", [EXAMPLES / "expression.npy", EXAMPLES / "basic.msgpack", DATG])
def test_other_formats_round_trip_through_s3(s3, bucket, opts, example):
    src = stowage.open(example)
    example = example.name
    url = f"s3://{bucket}/{example}"
    stowage.convert(src.path, url, destination_storage_options=opts, to=src.format)
    dst = stowage.open(url, storage_options=opts)
    assert dst.format == src.format
    a, b = src[""], dst[""]
    if hasattr(a, "to_scipy"):
        assert (a.to_scipy() != b.to_scipy()).nnz == 0
    elif hasattr(a, "shape"):
        np.testing.assert_array_equal(np.asarray(b), np.asarray(a))
    else:
        assert len(a) == len(b) and all(str(a[i]) == str(b[i]) for i in range(len(a)))
    assert keys(s3, bucket, example)


@needs("zarr", "n5", "gzip", "s3")
@pytest.mark.parametrize("name,options", [("v.n5", {}), ("v3.zarr", {"zarr_version": 3}),
                                          ("v2.zarr", {"zarr_version": 2})])
def test_a_reader_never_finds_metadata_before_the_chunks(s3, bucket, opts, name, options):
    """Snapshots of the bucket taken while the copy runs (from its progress
    callback) hold chunks but never metadata; after, both. A copy stopped
    half-way leaves chunks nobody names, and no dataset."""
    seen = []

    def look(_):
        seen.append(keys(s3, bucket, name + "/"))

    url = f"s3://{bucket}/{name}"
    stowage.convert(EXAMPLES / "volume.n5", url, destination_storage_options=opts, progress=look, threads=1,
                    **options)
    assert any(seen), "no chunk was put while the copy ran"
    assert not any(metadata_keys(s) for s in seen), [metadata_keys(s) for s in seen if metadata_keys(s)][0]
    assert metadata_keys(keys(s3, bucket, name + "/"))

    stopped = f"stopped-{name}"
    calls = []

    def stop(_):
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        stowage.convert(EXAMPLES / "volume.n5", f"s3://{bucket}/{stopped}", destination_storage_options=opts,
                        progress=stop, threads=1, **options)
    left = keys(s3, bucket, stopped + "/")
    assert left and not metadata_keys(left), left
    assert not arrays_in(f"s3://{bucket}/{stopped}", opts)


@needs("zarr", "s3")
def test_ctrl_c_in_a_with_block_publishes_nothing(s3, bucket, opts):
    url = f"s3://{bucket}/w.zarr"
    data = np.arange(64 * 64, dtype="uint16").reshape(64, 64)
    with pytest.raises(KeyboardInterrupt):
        with stowage.open(url, "w", storage_options=opts) as store:
            store.create_array("a", data.shape, data.dtype, chunks=(16, 16))[...] = data
            raise KeyboardInterrupt
    assert not metadata_keys(keys(s3, bucket, "w.zarr/"))
    with pytest.raises(stowage.Error):
        stowage.open(url, storage_options=opts)

    with stowage.open(url, "w", storage_options=opts) as store:
        store.create_array("a", data.shape, data.dtype, chunks=(16, 16))[...] = data
        # The writer reads its own metadata before it is put.
        assert store["a"].shape == data.shape and store.keys() == ["a"]
        assert not metadata_keys(keys(s3, bucket, "w.zarr/"))
    np.testing.assert_array_equal(np.asarray(stowage.open(url, storage_options=opts)["a"]), data)


@needs("n5", "s3")
def test_mode_w_over_an_old_dataset_leaves_none_of_its_chunks(s3, bucket, opts):
    url = f"s3://{bucket}/old.n5"
    with stowage.open(url, "w", storage_options=opts) as store:
        store.create_array("a", (32, 32), "uint8", chunks=(8, 8))[...] = 7
    with stowage.open(url, "w", storage_options=opts) as store:
        store.create_array("a", (32, 32), "uint8", chunks=(8, 8))[:8, :8] = 1
    got = np.asarray(stowage.open(url, storage_options=opts)["a"])
    want = np.zeros((32, 32), "uint8")
    want[:8, :8] = 1
    np.testing.assert_array_equal(got, want)


@needs("zarr", "s3")
def test_a_w_store_sent_to_workers_puts_its_metadata_first(s3, bucket, opts):
    """Other processes open the path itself: pickling a "w" store puts what
    it holds so far, and the workers' writes are read back."""
    import pickle

    url = f"s3://{bucket}/shared.zarr"
    data = np.arange(32 * 32, dtype="int32").reshape(32, 32)
    with stowage.open(url, "w", storage_options=opts) as store:
        a = store.create_array("a", data.shape, data.dtype, chunks=(8, 8))
        assert not metadata_keys(keys(s3, bucket, "shared.zarr/"))
        sent = pickle.dumps(a)
        assert metadata_keys(keys(s3, bucket, "shared.zarr/"))
        subprocess.run([sys.executable, "-c", "import pickle, sys, numpy as np; a = pickle.loads(sys.stdin.buffer.read()); "
                        "a[...] = np.arange(32 * 32, dtype='int32').reshape(32, 32)"],
                       input=sent, check=True, env={**os.environ})
    np.testing.assert_array_equal(np.asarray(stowage.open(url, storage_options=opts)["a"]), data)


@needs("n5", "gzip", "s3")
def test_a_copy_killed_with_sigkill_leaves_no_dataset(s3, bucket, opts):
    """kill -9 mid-copy: nothing runs at exit, and still no metadata was put."""
    url = f"s3://{bucket}/killed.n5"
    script = ("import json, sys, time, stowage\n"
              "def slow(p):\n"
              "    print('chunk', flush=True); time.sleep(0.2)\n"
              "stowage.convert(sys.argv[1], sys.argv[2], destination_storage_options=json.loads(sys.argv[3]),\n"
              "                progress=slow, threads=1)\n")
    child = subprocess.Popen([sys.executable, "-c", script, str(EXAMPLES / "volume.n5"), url, json.dumps(opts)],
                             stdout=subprocess.PIPE, text=True)
    for _ in range(3):
        assert child.stdout.readline() == "chunk\n"
    child.kill()
    child.wait()
    left = keys(s3, bucket, "killed.n5/")
    assert left and not metadata_keys(left), left
    assert not arrays_in(url, opts)
