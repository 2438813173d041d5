"""A zarr-python user's notebook, with stowage: open, browse, slice with
arrays and masks, write regions, grow, open in xarray, write from dask on a
LocalCluster, BPCells to AnnData to scanpy-style steps.

    python3 notebook.py WORKDIR BPCELLS_DIR

Each step prints what it found; tests/python/test_notebook.py runs this and
checks every printed value against zarr-python, xarray's zarr engine, dask
and anndata doing the same.
"""

import json
import sys

import dask.array as da
import distributed
import numpy as np
import xarray as xr

import stowage


def notebook(work, bpcells):
    """The notebook's cells, in order; returns what each found."""
    out = {}

    # -- create and browse, as with zarr.open_group (Zarr v2 so zarr-python 2 reads it too)
    root = stowage.open_group(f"{work}/lab.zarr", mode="w", zarr_format=2)
    raw = root.create_group("raw")
    rng = np.random.default_rng(0)
    volume = rng.integers(0, 1000, size=(32, 64, 48), dtype="uint16")
    vol = raw.create_array("volume", data=volume, chunks=(8, 32, 16), dims=["z", "y", "x"])
    raw.create_dataset("mask", shape=(32, 64, 48), chunks=(8, 32, 16), dtype="bool", fill_value=False)
    root.attrs["experiment"] = "demo"
    out["tree"] = str(root.tree())
    out["groups"] = sorted(root.group_keys())
    out["arrays"] = sorted(raw.array_keys())
    out["info_has_shape"] = "(32, 64, 48)" in str(vol.info)

    # -- slice: regions, steps, integer arrays, masks, points
    out["region"] = vol[3, 10:20, ::7].tolist()
    out["oindex"] = vol.oindex[[1, 5, 9], 2:4, [0, 47]].tolist()
    out["vindex"] = vol.vindex[[0, 31, 7], [0, 63, 8], [1, 2, 3]].tolist()
    out["fancy"] = vol[np.array([2, 4]), 0, :4].tolist()
    mask = vol[...] > 990
    out["mask"] = vol[mask].tolist()
    out["mask_count"] = int(mask.sum())

    # -- write regions and selections
    vol[0:8, 0:32, 0:16] = 7
    vol.oindex[[30, 31], :, 47] = 9
    raw["mask"][mask] = True
    out["after_write"] = [int(vol[0, 0, 0]), int(vol[31, 5, 47]), int(raw["mask"][...].sum())]

    # -- grow
    out["append"] = list(vol.append(np.ones((8, 64, 48), "uint16")))
    vol.resize(48, 64, 64)
    out["resized"] = list(vol.shape)
    out["grown_tail"] = [int(vol[39, 0, 0]), int(vol[47, 63, 63])]

    # -- open in xarray, lazily
    ds = xr.open_dataset(f"{work}/lab.zarr", engine="stowage", group="raw")
    out["xr_dims"] = list(ds["volume"].dims)
    out["xr_mean"] = float(ds["volume"].isel(z=slice(0, 8)).mean())
    out["xr_chunks"] = list(xr.open_dataset(f"{work}/lab.zarr", engine="stowage", group="raw",
                                            chunks={})["volume"].data.chunksize)

    # -- write from dask on a LocalCluster of processes
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster):
        x = da.from_array(np.arange(90 * 70, dtype="float32").reshape(90, 70), chunks=(25, 30))
        stowage.to_store(x, f"{work}/fromdask.zarr", "data", chunks=(20, 20), zarr_version=2)
        back = stowage.to_dask(stowage.open(f"{work}/fromdask.zarr")["data"])
        out["dask_sum"] = float(back.sum().compute())
        out["dask_equal"] = bool((back == x).all().compute())

    # -- BPCells to AnnData to scanpy-style steps
    adata = stowage.to_anndata(bpcells)
    out["adata_shape"] = list(adata.shape)
    out["obs_names"] = list(adata.obs_names[:3])
    counts = np.asarray(adata.X.sum(axis=1)).ravel()
    norm = adata.X.multiply(1e4 / np.maximum(counts, 1)[:, None]).tocsr()
    out["log1p_sum"] = float(norm.log1p().sum())
    out["top_gene"] = str(adata.var_names[int(np.argmax(np.asarray(adata.X.sum(axis=0)).ravel()))])
    return out


if __name__ == "__main__":  # dask's worker processes import this file again: only the parent runs it
    print(json.dumps(notebook(sys.argv[1], sys.argv[2])))
