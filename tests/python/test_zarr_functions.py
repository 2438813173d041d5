"""zarr-python's module-level functions (open_group, open_array, zeros,
full, array, ...) and modes: the same script run with `zarr` and with
`stowage` as the module gives the same values, and each reads the other's
output. Writes through these are published as they return: no close."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import zarr

import stowage

SCRIPT = textwrap.dedent("""
    import numpy as np
    import {module} as zarr

    root = zarr.open_group({path!r}, mode="w", zarr_version=2)
    raw = root.create_group("raw")
    z = raw.create_dataset("a", shape=(40, 30), chunks=(16, 16), dtype="i4", fill_value=0)
    z[5:25, 3] = np.arange(20)
    z.oindex[[0, 39], :] = 9
    f = zarr.full((10, 10), 7, chunks=(4, 4), dtype="u2", store={path!r}, path="filled")
    f[2:4, 2:4] = 1
    x = zarr.open_array({path!r}, mode="a", path="x", shape=(100,), chunks=(30,), dtype="f8")
    x[:] = np.linspace(0, 1, 100)
    print("done")
""")


def _run(module, path):
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(module=module, path=str(path))], capture_output=True,
                         text=True)
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr
    return path


def test_a_zarr_script_writes_the_same_with_stowage_and_with_no_close(tmp_path):
    theirs = _run("zarr", tmp_path / "theirs.zarr")
    ours = _run("stowage", tmp_path / "ours.zarr")  # the process exits with nothing closed
    z, s = zarr.open_group(str(theirs), "r"), stowage.open_group(ours, "r")
    for name in ["raw/a", "filled", "x"]:
        np.testing.assert_array_equal(s[name][...], z[name][...])
        np.testing.assert_array_equal(zarr.open_group(str(ours), "r")[name][...], z[name][...])
        assert s[name].chunks == z[name].chunks and s[name].dtype == z[name].dtype
    assert s["filled"].fill_value == z["filled"].fill_value == 7


def test_modes_are_zarrs(tmp_path):
    p = tmp_path / "m.zarr"
    a = stowage.open_array(p, mode="w", shape=(10,), chunks=(5,), dtype="i4", zarr_version=2)
    a[:] = 1
    assert zarr.open_array(str(p), "r")[...].tolist() == [1] * 10  # published as it returned
    with pytest.raises(stowage.InvalidArgumentError, match="m.zarr: already exists"):
        stowage.open_array(p, mode="w-", shape=(10,), dtype="i4")
    assert stowage.open_array(p, mode="a")[...].tolist() == [1] * 10  # "a" keeps it
    assert stowage.open_array(p, mode="r+")[...].tolist() == [1] * 10
    b = stowage.open_array(p, mode="w", shape=(3,), dtype="f4", zarr_format=2)  # "w" replaces at once
    assert b[...].tolist() == [0, 0, 0] and zarr.open_array(str(p), "r").shape == (3,)
    with pytest.raises(stowage.NotFoundError, match="absent.zarr"):
        stowage.open_group(tmp_path / "absent.zarr", mode="r+")
    with pytest.raises(stowage.InvalidArgumentError, match="mode must be"):
        stowage.open_group(p, mode="q")


def test_in_memory_arrays_and_data(tmp_path):
    a = stowage.array(np.arange(100).reshape(10, 10), chunks=(5, 5))
    assert a.store.path.startswith("mem://") and a.chunks == (5, 5)
    np.testing.assert_array_equal(a[...], np.arange(100).reshape(10, 10))
    assert stowage.ones((4, 4), chunks=(2, 2))[...].tolist() == np.ones((4, 4)).tolist()
    assert stowage.zeros((4,), dtype="u1")[...].tolist() == [0] * 4


def test_formats_that_hold_writes_until_close_are_refused(tmp_path):
    with pytest.raises(stowage.InvalidArgumentError, match=r"a.npy: npy holds writes until its store is closed"):
        stowage.open_array(tmp_path / "a.npy", mode="w", shape=(4,), dtype="f8")


def test_open_in_mode_a_is_zarrs_in_place(tmp_path):
    p = tmp_path / "a.n5"
    code = ("import stowage, numpy as np; s = stowage.open(%r, 'a'); a = s.create_array('x', data=np.arange(6));"
            "a[0] = 9; import os; os._exit(0)") % str(p)  # no close, no destructor
    subprocess.run([sys.executable, "-c", code], check=True)
    assert stowage.open(p)["x"][...].tolist() == [9, 1, 2, 3, 4, 5]
    s = stowage.open(p, "a")  # an existing one is opened, not replaced
    assert s.mode == "r+" and s["x"][...].tolist() == [9, 1, 2, 3, 4, 5]
    with stowage.open(tmp_path / "v.npy", "a") as n:  # npy publishes at close: a "w+" store
        n.create_array("", data=np.arange(3.0))
    assert np.load(tmp_path / "v.npy").tolist() == [0.0, 1.0, 2.0]
