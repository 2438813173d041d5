"""The notebook a zarr-python user would write (examples/python/notebook.py),
run as a script in its own process, every printed value checked against
the peers doing the same job: zarr-python 2.13 on a twin store, xarray's zarr
engine, numpy, and anndata built from BPCells' own values."""

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr
import zarr
from conftest import fixture, needs

pytestmark = needs("zarr", "bpcells")

NOTEBOOK = pathlib.Path(__file__).parents[2] / "examples" / "python" / "notebook.py"
BPCELLS = "uint_packed_col_names"


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    work = tmp_path_factory.mktemp("notebook")
    r = subprocess.run([sys.executable, str(NOTEBOOK), str(work), str(fixture("bpcells", BPCELLS))],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return work, json.loads(r.stdout.strip().splitlines()[-1])


def twin(work):
    """The same steps through zarr-python 2.13."""
    root = zarr.open_group(str(work / "twin.zarr"), mode="w")
    raw = root.create_group("raw")
    volume = np.random.default_rng(0).integers(0, 1000, size=(32, 64, 48), dtype="uint16")
    vol = raw.create_dataset("volume", data=volume, chunks=(8, 32, 16))
    vol.attrs["_ARRAY_DIMENSIONS"] = ["z", "y", "x"]
    raw.create_dataset("mask", shape=(32, 64, 48), chunks=(8, 32, 16), dtype="bool", fill_value=False)
    raw["mask"].attrs["_ARRAY_DIMENSIONS"] = ["mz", "my", "mx"]  # xarray's zarr engine needs names
    root.attrs["experiment"] = "demo"
    got = {"tree": str(root.tree()), "groups": sorted(root.group_keys()), "arrays": sorted(raw.array_keys()),
           "region": vol[3, 10:20, ::7].tolist(), "oindex": vol.oindex[[1, 5, 9], 2:4, [0, 47]].tolist(),
           "vindex": vol.vindex[[0, 31, 7], [0, 63, 8], [1, 2, 3]].tolist(),
           "fancy": volume[np.array([2, 4]), 0, :4].tolist()}
    mask = vol[...] > 990
    got["mask"] = vol.vindex[mask].tolist()
    got["mask_count"] = int(mask.sum())
    vol[0:8, 0:32, 0:16] = 7
    vol.oindex[[30, 31], :, 47] = 9
    raw["mask"].vindex[mask] = True
    got["after_write"] = [int(vol[0, 0, 0]), int(vol[31, 5, 47]), int(raw["mask"][...].sum())]
    got["append"] = list(vol.append(np.ones((8, 64, 48), "uint16")))
    vol.resize(48, 64, 64)
    got["resized"] = list(vol.shape)
    got["grown_tail"] = [int(vol[39, 0, 0]), int(vol[47, 63, 63])]
    return got


def test_browse_slice_write_and_grow_as_zarr_python(ran):
    work, out = ran
    want = twin(work)
    for key, value in want.items():
        assert out[key] == value, key
    assert out["info_has_shape"]
    # zarr-python reads what the notebook left exactly as its own twin
    ours, theirs = zarr.open_group(str(work / "lab.zarr"), "r"), zarr.open_group(str(work / "twin.zarr"), "r")
    for name in ["raw/volume", "raw/mask"]:
        np.testing.assert_array_equal(ours[name][...], theirs[name][...])
    assert dict(ours.attrs) == dict(theirs.attrs)
    assert dict(ours["raw/volume"].attrs) == dict(theirs["raw/volume"].attrs)


def test_xarray_as_its_zarr_engine(ran):
    work, out = ran
    # mask_and_scale=False: stowage's engine does not make a fill value _FillValue (python/README.md)
    ds = xr.open_dataset(work / "twin.zarr", engine="zarr", group="raw", mask_and_scale=False)
    assert out["xr_dims"] == list(ds["volume"].dims)
    assert out["xr_mean"] == float(ds["volume"].isel(z=slice(0, 8)).mean())
    assert out["xr_chunks"] == list(xr.open_dataset(work / "twin.zarr", engine="zarr", group="raw",
                                                    chunks={})["volume"].data.chunksize)


def test_dask_write_on_a_cluster(ran):
    work, out = ran
    x = np.arange(90 * 70, dtype="float32").reshape(90, 70)
    assert out["dask_equal"] and out["dask_sum"] == float(x.sum(dtype="float32"))
    z = zarr.open_array(str(work / "fromdask.zarr"), "r", path="data")
    np.testing.assert_array_equal(z[...], x)
    assert z.chunks == (20, 20)


def test_bpcells_to_anndata_and_scanpy_style_steps(ran):
    import anndata
    import scipy.sparse

    _, out = ran
    meta = json.loads(fixture("bpcells", BPCELLS + ".expected.json").read_text())
    values = np.fromfile(fixture("bpcells", BPCELLS + ".expected.bin"), meta["data"]["dtype"]).reshape(meta["shape"])
    adata = anndata.AnnData(scipy.sparse.csr_matrix(values.T), dtype=values.dtype)  # cells x genes
    adata.obs_names, adata.var_names = meta["col_names"], meta["row_names"]
    assert out["adata_shape"] == list(adata.shape)
    assert out["obs_names"] == list(adata.obs_names[:3])
    counts = np.asarray(adata.X.sum(axis=1)).ravel()
    norm = adata.X.multiply(1e4 / np.maximum(counts, 1)[:, None]).tocsr()
    assert out["log1p_sum"] == pytest.approx(float(norm.log1p().sum()), rel=1e-12)
    assert out["top_gene"] == str(adata.var_names[int(np.argmax(np.asarray(adata.X.sum(axis=0)).ravel()))])
