"""Every error the package raises is a stowage.Error and the builtin a
Python program expects, with the library's message naming the file."""

import os
import pathlib
import shutil

import numpy as np
import pytest

import stowage
from conftest import fixture, needs

BUILD = pathlib.Path(os.environ.get("STOWAGE_BUILD_ROOT", ""))


def raised(cls, builtin, fn):
    with pytest.raises(cls) as info:
        fn()
    assert isinstance(info.value, stowage.Error) and isinstance(info.value, builtin)
    return info.value


def test_missing_path_is_file_not_found(tmp_path):
    e = raised(stowage.NotFoundError, FileNotFoundError, lambda: stowage.open(tmp_path / "absent.n5"))
    assert str(tmp_path / "absent.n5") in str(e) and e.path == str(tmp_path / "absent.n5")
    raised(stowage.NotFoundError, FileNotFoundError, lambda: stowage.convert(tmp_path / "absent.n5", tmp_path / "o.npy"))


def test_missing_node_is_key_error():
    store = stowage.open(fixture("n5", "zarr-written.n5"))
    e = raised(stowage.NodeNotFoundError, KeyError, lambda: store["raw/nothing"])
    assert "nothing" in str(e) and "zarr-written.n5" in str(e)
    raised(stowage.NodeNotFoundError, KeyError, lambda: store["groups"]["level9"])
    assert "raw/nothing" not in store and "raw/uint8_1d" in store


@needs("zstd")
def test_bad_arguments_are_value_errors(tmp_path):
    raised(stowage.InvalidArgumentError, ValueError, lambda: stowage.open(fixture("n5", "zarr-written.n5"), "q"))
    a = stowage.open(fixture("n5", "zarr-written.n5"))["raw/int16_2d"]
    raised(stowage.InvalidArgumentError, ValueError, lambda: a.read(out=np.zeros((2, 2))))
    raised(stowage.InvalidArgumentError, ValueError, lambda: a.read(out=np.zeros((4, 4), np.int16)[:, ::2]))
    raised(stowage.InvalidArgumentError, ValueError, lambda: a.read(out=np.zeros((20, 2), np.int16)))  # past the end
    raised(stowage.InvalidArgumentError, ValueError, lambda: stowage.open(tmp_path / "noext", "w"))
    e = raised(stowage.InvalidArgumentError, ValueError,
               lambda: stowage.convert(fixture("n5", "zarr-written.n5"), tmp_path / "o.n5", compression="zstd:lvl=5"))
    assert "level" in str(e)
    with pytest.raises(IndexError):
        a[13]
    with pytest.raises(IndexError, match="int16_2d: index 99 is out of bounds for axis 0"):
        a[[1, 99]]  # index arrays are taken (test_zarr_api.py), and checked
    with pytest.raises(IndexError):
        a[1.5]


def test_damaged_chunk_is_corrupt(tmp_path):
    copy = tmp_path / "damaged.n5"
    shutil.copytree(fixture("n5", "java-style.n5"), copy)
    chunk = copy / "gzip" / "int32_2d" / "0" / "0"
    data = chunk.read_bytes()
    os.chmod(chunk, 0o644)
    chunk.write_bytes(data[: len(data) // 2])
    a = stowage.open(copy)["gzip/int32_2d"]
    e = raised(stowage.CorruptError, ValueError, lambda: a[...])
    assert str(chunk) in str(e) or "int32_2d" in str(e)


def test_what_a_format_cannot_hold_is_unsupported(tmp_path):
    store = stowage.open(tmp_path / "x.n5", "w")
    e = raised(stowage.UnsupportedError, ValueError, lambda: store.create_array("b", (3,), bool))
    assert "bool" in str(e)
    raised(stowage.UnsupportedError, ValueError, lambda: stowage.open(fixture("n5", "zarr-written.n5") / "attributes.json"))


def test_permission_refused_is_permission_error():
    # /sys refuses even root, who runs CI here; chmod would not.
    e = raised(stowage.PermissionDeniedError, PermissionError, lambda: stowage.open("/sys/stowage-test.n5", "w"))
    assert "/sys/stowage-test.n5" in str(e)


def test_other_io_failures_are_os_errors(tmp_path):
    (tmp_path / "file").write_text("")
    e = raised(stowage.StorageIOError, OSError, lambda: stowage.open(tmp_path / "file" / "x.n5", "w"))
    assert "Not a directory" in str(e)


def test_a_codec_plugin_that_failed_to_load_is_named(tmp_path):
    # A dataset needing a codec whose plugin was built for ABI 99: the error
    # names the dataset, the plugin file and why it failed.
    broken = BUILD / "tests" / "abi" / "broken"
    states = {p["id"]: p for p in stowage.plugins(plugin_path=[broken])}
    assert states["badabi"]["state"] == "failed" and "ABI" in states["badabi"]["reason"]
    (tmp_path / "bad.n5" / "a").mkdir(parents=True)
    (tmp_path / "bad.n5" / "attributes.json").write_text('{"n5": "4.0.0"}')
    (tmp_path / "bad.n5" / "a" / "attributes.json").write_text(
        '{"dimensions": [4], "blockSize": [4], "dataType": "uint8", "compression": {"type": "badabi"}}')
    (tmp_path / "bad.n5" / "a" / "0").write_bytes(b"\0\0\0\1\0\0\0\4abcd")
    a = stowage.open(tmp_path / "bad.n5", plugin_path=[broken])["a"]
    e = raised(stowage.NotFoundError, FileNotFoundError, lambda: a[...])
    assert "stowage_codec_badabi.so" in str(e) and "ABI mismatch" in str(e) and "bad.n5/a" in str(e)


def test_errors_keep_code_path_and_plugin():
    with pytest.raises(stowage.Error) as info:
        stowage.open(fixture("n5", "zarr-written.n5"))["raw/none"]
    assert info.value.code == "not found" and info.value.path.endswith("zarr-written.n5")
    assert info.value.plugin == "format n5"


def test_the_package_under_test_is_this_builds():
    # meson test puts <build>/python first on PYTHONPATH: an installed copy
    # must not be what these tests exercise.
    assert pathlib.Path(stowage.__file__).resolve().is_relative_to(BUILD.resolve() / "python")
    assert pathlib.Path(stowage._core.__file__).resolve().is_relative_to(BUILD.resolve() / "python")
    assert all(BUILD.resolve() in pathlib.Path(p["path"]).resolve().parents for p in stowage.plugins())


def test_a_sample_that_does_not_decode_is_corrupt_naming_it(tmp_path):
    import msgpack

    bad = {"key": "b", "x": {b"nd": True, b"type": "<f4", b"kind": b"", b"shape": [3], b"data": b"abc"}}
    with stowage.open(tmp_path / "s.msgpack", "w") as store:
        store.write_records("", [{"key": "a", "v": 1}, msgpack.packb(bad, use_bin_type=True)])
    r = stowage.open(tmp_path / "s.msgpack")[""]
    assert r[0] == {"key": "a", "v": 1}
    assert r.raw(1) == msgpack.packb(bad, use_bin_type=True)  # the bytes are fine, the values are not
    for read in (lambda: r[1], lambda: list(r)):
        e = raised(stowage.CorruptError, ValueError, read)
        assert str(tmp_path / "s.msgpack") in str(e) and "sample 1" in str(e) and "needs 12 data bytes, has 3" in str(e)
