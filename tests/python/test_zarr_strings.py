"""Zarr string arrays in the Python package: a strings node of a Zarr store
reads as the strings kind reads elsewhere (a Daf axis and string matrix),
whether zarr-python 2.13 or stowage wrote it."""

import numcodecs
import numpy as np
import zarr

import stowage
from conftest import fixture, needs

DAF = fixture("daf", "gen_v11_types")


@needs("zarr", "daf", "zstd")
def test_zarr_strings_written_by_zarr_python_read_as_daf_strings(tmp_path):
    daf = stowage.open(DAF)
    axis = daf["axes/cell"].to_list()
    matrix = daf["matrices/cell/gene/labels"]
    z = zarr.open_group(zarr.DirectoryStore(str(tmp_path / "py.zarr")), mode="w")
    a = z.create_dataset("axis", shape=(len(axis),), chunks=(3,), dtype=object,
                         object_codec=numcodecs.VLenUTF8(), compressor=numcodecs.Zstd(level=1), fill_value="")
    a[:] = np.array(axis, dtype=object)
    m = z.create_dataset("matrix", shape=matrix.shape, chunks=(2, 2), dtype=object,
                         object_codec=numcodecs.VLenUTF8(), fill_value="")
    m[:] = np.array(matrix.to_list(), dtype=object).reshape(matrix.shape)

    with stowage.open(tmp_path / "py.zarr") as store:
        s = store["axis"]
        assert isinstance(s, stowage.Strings)
        assert s[:] == axis and s.to_list() == axis and len(s) == len(axis)
        assert s[1] == axis[1] and s[-1] == axis[-1] and s[1:4] == axis[1:4]
        t = store["matrix"]
        assert isinstance(t, stowage.Strings) and t.shape == matrix.shape
        assert t[:] == matrix[:]  # C order, as Daf's string matrix reads


@needs("zarr", "daf")
def test_zarr_strings_written_by_stowage_read_in_zarr_python(tmp_path):
    axis = stowage.open(DAF)["axes/cell"].to_list()
    for version in (2, 3):
        path = tmp_path / f"v{version}.zarr"
        with stowage.open(path, "w", options={"zarr_version": version}) as store:
            store.write_strings("names", axis)
        with stowage.open(path) as store:
            assert store["names"][:] == axis
        if version == 2:
            assert list(zarr.open(str(path), mode="r")["names"][:]) == axis
