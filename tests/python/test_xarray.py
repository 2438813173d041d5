"""xarray's engine="stowage" against xarray's own zarr engine (over
zarr-python 2.13) on the same stores, and against scipy and zarr-python for
the formats xarray cannot read: lazy reads, dims and labels, dask chunks,
open_mfdataset, groups, errors."""

import importlib.metadata
import json
import os
import re

import numcodecs
import numpy as np
import pytest
import xarray as xr
import zarr

import stowage
from conftest import fixture, needs


def write_zarr(path, t0=0, time=4):
    """A Zarr v2 group as a netCDF-minded zarr-python user writes one:
    dimension names in _ARRAY_DIMENSIONS, CF time units, a packed int16
    variable with scale_factor/add_offset/_FillValue, a string coordinate."""
    g = zarr.open_group(zarr.DirectoryStore(str(path)), mode="w")
    g.attrs.update({"title": "scan", "version": 3})
    rng = np.random.default_rng(t0)
    temp = g.create_dataset("temp", shape=(time, 6, 8), chunks=(2, 3, 4), dtype="f4", fill_value=np.nan)
    temp[:] = rng.normal(size=temp.shape).astype("f4")
    temp.attrs.update({"_ARRAY_DIMENSIONS": ["time", "y", "x"], "units": "K", "long_name": "temperature"})
    packed = g.create_dataset("packed", shape=(time, 6), chunks=(2, 6), dtype="i2", fill_value=None)
    values = rng.integers(0, 100, packed.shape).astype("i2")
    values[0, 0] = -1  # the declared _FillValue: both engines mask it
    packed[:] = values
    packed.attrs.update({"_ARRAY_DIMENSIONS": ["time", "y"], "scale_factor": 0.5, "add_offset": 10.0,
                         "_FillValue": -1})
    tc = g.create_dataset("time", data=np.arange(t0, t0 + time, dtype="i8"), chunks=(time,), fill_value=None)
    tc.attrs.update({"_ARRAY_DIMENSIONS": ["time"], "units": "days since 2000-01-01", "calendar": "standard"})
    x = g.create_dataset("x", data=np.arange(8, dtype="f8") * 0.25, fill_value=np.nan)
    x.attrs["_ARRAY_DIMENSIONS"] = ["x"]
    lab = g.create_dataset("label", shape=(6,), dtype=object, object_codec=numcodecs.VLenUTF8(), fill_value="")
    lab[:] = np.array([f"row{i}" for i in range(6)], dtype=object)
    lab.attrs["_ARRAY_DIMENSIONS"] = ["y"]
    return path


def assert_same_dataset(ours, theirs):
    """Values, dims, coordinates, dtypes and attrs (of every variable too)."""
    xr.testing.assert_identical(ours, theirs)
    for name in theirs.variables:
        assert ours[name].dtype == theirs[name].dtype, name
        assert ours[name].attrs == theirs[name].attrs, name


def test_engine_is_an_entry_point_of_the_package():
    eps = importlib.metadata.entry_points(group="xarray.backends")
    assert [e.value for e in eps if e.name == "stowage"] == ["stowage._xarray:StowageBackendEntrypoint"]
    assert importlib.metadata.distribution("stowage").version == stowage.__version__
    assert "stowage" in xr.backends.list_engines()


@needs("zarr", "blosc")
def test_a_zarr_store_opens_as_xarrays_zarr_engine_opens_it(tmp_path):
    path = write_zarr(tmp_path / "scan.zarr")
    theirs = xr.open_dataset(path, engine="zarr", consolidated=False).load()
    ours = xr.open_dataset(path, engine="stowage")
    assert not any(v._in_memory for v in ours.data_vars.values())  # lazy until asked
    ours = ours.load()
    assert_same_dataset(ours, theirs)
    # CF decoding happened on both sides: times, the mask of -1 and the scale
    assert ours["time"].dtype == np.dtype("datetime64[ns]") and str(ours["time"].values[1])[:10] == "2000-01-02"
    assert np.isnan(ours["packed"].values[0, 0]) and ours["packed"].dtype == np.float32
    assert list(ours["label"].values) == [f"row{i}" for i in range(6)]
    assert set(ours.coords) == {"time", "x"} and ours.attrs == {"title": "scan", "version": 3}
    kept = xr.open_dataset(path, engine="stowage", drop_variables=["packed", "x"]).load()
    assert_same_dataset(kept, xr.open_dataset(path, engine="zarr", consolidated=False,
                                              drop_variables=["packed", "x"]).load())
    assert "packed" not in kept and "x" not in kept.coords


@needs("zarr", "blosc")
def test_opening_reads_no_chunk_and_a_slice_reads_only_its_chunks(tmp_path):
    path = write_zarr(tmp_path / "scan.zarr")
    (path / "temp" / "1.1.1").write_bytes(b"not a blosc frame")  # a corrupt chunk of the last time steps
    want = zarr.open_array(str(path / "temp"), mode="r")[:2, :3, :4]
    ds = xr.open_dataset(path, engine="stowage")
    np.testing.assert_array_equal(ds["temp"][:2, :3, :4].values, want)  # chunk 0.0.0 only
    np.testing.assert_array_equal(ds["temp"].isel(time=slice(0, 2)).values,
                                  zarr.open_array(str(path / "temp"), mode="r")[:2])
    with pytest.raises(stowage.Error) as e:  # blosc names the frame version it cannot read
        ds["temp"].values
    assert str(path) in str(e.value)


@needs("zarr", "blosc")
def test_an_outer_selection_reads_the_chunks_of_its_picks_not_the_box_between(tmp_path):
    g = zarr.open_group(str(tmp_path / "line.zarr"), mode="w")
    a = g.create_dataset("v", data=np.arange(30, dtype="f4").reshape(1, 30), chunks=(1, 10))
    a.attrs["_ARRAY_DIMENSIONS"] = ["t", "x"]
    (tmp_path / "line.zarr" / "v" / "0.1").write_bytes(b"not a blosc frame")  # between the picks
    ours = xr.open_dataset(tmp_path / "line.zarr", engine="stowage")["v"].isel(x=[2, 25, 0])
    np.testing.assert_array_equal(ours.values, [[2, 25, 0]])


@needs("zarr", "blosc")
def test_chunks_gives_dask_on_the_stores_chunks(tmp_path):
    path = write_zarr(tmp_path / "scan.zarr")
    ours = xr.open_dataset(path, engine="stowage", chunks={})
    theirs = xr.open_dataset(path, engine="zarr", chunks={}, consolidated=False)
    assert ours["temp"].chunks == theirs["temp"].chunks == ((2, 2), (3, 3), (4, 4))
    assert ours["temp"].encoding["preferred_chunks"] == {"time": 2, "y": 3, "x": 4}
    assert ours["temp"].data.name != theirs["temp"].data.name
    xr.testing.assert_identical(ours.compute(scheduler="threads"), theirs.compute(scheduler="threads"))
    # the whole graph through processes: each task unpickles its array and reopens the store
    mean = ours["temp"].mean("time").compute(scheduler="processes", num_workers=2)
    np.testing.assert_allclose(mean.values, theirs["temp"].mean("time").values, rtol=1e-6)


@needs("zarr", "blosc")
def test_open_mfdataset_of_two_stores_as_with_the_zarr_engine(tmp_path):
    paths = [write_zarr(tmp_path / "a.zarr", t0=0), write_zarr(tmp_path / "b.zarr", t0=4, time=2)]
    ours = xr.open_mfdataset(paths, engine="stowage", combine="by_coords")
    theirs = xr.open_mfdataset(paths, engine="zarr", combine="by_coords", consolidated=False)
    assert ours.sizes["time"] == 6 and ours["temp"].chunks == theirs["temp"].chunks
    assert_same_dataset(ours.load(), theirs.load())
    ours.close()


@needs("n5")
def test_n5_dims_from_labels_and_from_the_axes_attribute(tmp_path):
    values = np.arange(2 * 3 * 4, dtype="u2").reshape(2, 3, 4)
    with stowage.open(tmp_path / "v.n5", "w", "n5") as store:
        a = store.create_array("labelled", values.shape, "uint16", chunks=(1, 2, 2),
                               dims=["c", ("y", ["top", "mid", "bottom"]), "x"])
        a[...] = values
    # zarr-python's N5Store writes the other array, with N5's (x, y, z) axes
    z = zarr.open_group(zarr.n5.N5Store(str(tmp_path / "v.n5")), mode="a")
    b = z.create_dataset("axes", data=values.astype("f4"), chunks=(2, 2, 2), compressor=numcodecs.GZip())
    b.attrs["axes"] = ["x", "y", "z"]

    ds = xr.open_dataset(tmp_path / "v.n5", engine="stowage", group="labelled")
    assert ds["labelled"].dims == ("c", "y", "x")
    assert list(ds["y"].values) == ["top", "mid", "bottom"]
    assert "stowage_labels" not in ds["labelled"].attrs
    np.testing.assert_array_equal(ds["labelled"].sel(y="mid").values, values[:, 1])
    d = xr.open_dataarray(tmp_path / "v.n5", engine="stowage", group="axes")
    assert d.dims == ("z", "y", "x") and d.name == "axes"
    np.testing.assert_array_equal(d.values, z["axes"][...])


@needs("datg", "bpcells")
def test_datg_and_bpcells_dims_and_labels():
    d = xr.open_dataarray(fixture("datg", "basic_4x5.datg"), engine="stowage")
    assert d.name is None and d.dims == ("Rows", "Cols") and d.attrs["dataset_name"] == "Title"
    assert xr.open_dataset(fixture("datg", "basic_4x5.datg"), engine="stowage").attrs == {}  # the variable's
    assert list(d["Cols"].values) == ["col1", "col2", "col3", "col4", "col5"]
    xr.testing.assert_identical(xr.open_dataarray(fixture("datg", "basic_4x5.datg")), d)  # the engine guessed
    a = stowage.open(fixture("datg", "basic_4x5.datg"))[""]
    np.testing.assert_array_equal(d.sel(Rows="row3").values, a[2])
    m = stowage.open(fixture("bpcells", "uint_packed_col_names"))[""]
    s = xr.open_dataarray(fixture("bpcells", "uint_packed_col_names"), engine="stowage")
    assert s.dims == ("rows", "cols") and s.dtype == np.uint32
    assert list(s["rows"].values) == [f"gene{i}" for i in range(1, 7)]
    assert list(s["cols"].values) == [f"cell{i}" for i in range(1, 6)]
    dense = m.to_scipy().toarray()  # scipy, the peer
    np.testing.assert_array_equal(s.values, dense)
    np.testing.assert_array_equal(s[1:5:2, ::-2].values, dense[1:5:2, ::-2])
    np.testing.assert_array_equal(s.sel(cols="cell2").values, dense[:, 1])


@needs("daf", "n5")
def test_a_group_is_a_dataset_of_the_arrays_whose_dims_agree():
    path = fixture("daf", "julia_v11_small")
    ds = xr.open_dataset(path, engine="stowage", group="matrices/cell/gene")
    store = stowage.open(path)
    assert set(ds.data_vars) == {"UMIs", "dm"} and ds["UMIs"].dims == ("cell", "gene")
    assert list(ds["cell"].values) == store["axes/cell"].to_list()
    np.testing.assert_array_equal(ds["UMIs"].values, store["matrices/cell/gene/UMIs"].to_scipy().toarray())
    np.testing.assert_array_equal(ds["dm"].values, store["matrices/cell/gene/dm"][...])
    axes = xr.open_dataset(path, engine="stowage", group="axes")  # Daf's axes: the coordinates
    assert list(axes["gene"].values) == store["axes/gene"].to_list() and not axes.data_vars
    with pytest.warns(UserWarning, match=r"'raw/uint32_1d' is left out .* dimension 'dim_0' has length 10"):
        raw = xr.open_dataset(fixture("n5", "zarr-written.n5"), engine="stowage", group="raw")
    assert list(raw.data_vars) == ["int16_2d"]


@needs("datg", "n5")
@pytest.mark.filterwarnings("ignore:.*is left out of the dataset")
def test_to_xarray_is_the_backends_view_and_lazy(tmp_path):
    a = stowage.open(fixture("datg", "basic_4x5.datg"))[""]
    x = stowage.to_xarray(a)
    assert not x.variable._in_memory
    xr.testing.assert_identical(x, xr.open_dataarray(fixture("datg", "basic_4x5.datg"), engine="stowage"))
    assert stowage.to_xarray(a, name="expr").name == "expr"
    group = stowage.open(fixture("n5", "zarr-written.n5"))["gzip"]
    ds = stowage.to_xarray(group)
    assert isinstance(ds, xr.Dataset) and list(ds.data_vars) == group.keys()[: len(ds.data_vars)]
    xr.testing.assert_identical(ds, xr.open_dataset(fixture("n5", "zarr-written.n5"), engine="stowage", group="gzip"))


@needs("datg", "datadings")
def test_errors_name_the_path(tmp_path):
    missing = str(tmp_path / "nothing.n5")
    with pytest.raises(stowage.NotFoundError, match=re.escape(missing)):
        xr.open_dataset(missing, engine="stowage")
    datg = str(fixture("datg", "basic_4x5.datg"))
    with pytest.raises(stowage.NodeNotFoundError, match="no/such"):
        xr.open_dataset(datg, engine="stowage", group="no/such")
    with pytest.raises(stowage.InvalidArgumentError, match="to_xarray takes"):
        stowage.to_xarray(os.getcwd())
    records = str(fixture("datadings", "basic.msgpack"))
    with pytest.raises(stowage.UnsupportedError, match=re.escape(f"{records}: '/' is a records node")):
        xr.open_dataset(records, engine="stowage")


@needs("zarr")
def test_zarr_v3_dimension_names_are_the_dims(tmp_path):
    values = np.arange(12, dtype="i4").reshape(3, 4)
    with stowage.open(tmp_path / "v3.zarr", "w", "zarr") as store:
        store.create_array("a", values.shape, "int32", chunks=(2, 2), dims=["t", None])[...] = values
    meta = json.loads((tmp_path / "v3.zarr" / "a" / "zarr.json").read_text())
    assert meta["zarr_format"] == 3 and meta["dimension_names"] == ["t", None]
    d = xr.open_dataarray(tmp_path / "v3.zarr", engine="stowage", group="a")
    assert d.dims == ("t", "dim_1") and d.encoding["preferred_chunks"] == {"t": 2, "dim_1": 2}
    np.testing.assert_array_equal(d[1:, 1:3].values, values[1:, 1:3])


def test_storage_options_reach_the_storage_backend(tmp_path):
    path = str(tmp_path / "scan.zarr")
    with pytest.raises(stowage.InvalidArgumentError, match="no_such_option"):
        xr.open_dataset(path, engine="stowage", storage_options={"no_such_option": 1})


@needs("zarr", "blosc", "s3")
def test_a_zarr_store_in_s3_opens_with_storage_options(tmp_path, s3, bucket, server):
    local = write_zarr(tmp_path / "scan.zarr")
    for f in local.rglob("*"):
        if f.is_file():
            s3.put_object(Bucket=bucket, Key="scan.zarr/" + f.relative_to(local).as_posix(), Body=f.read_bytes())
    options = {"endpoint": server["endpoint"], "access_key_id": server["access_key"],
               "secret_access_key": server["secret_key"]}
    url = f"s3://{bucket}/scan.zarr"
    ours = xr.open_dataset(url, engine="stowage", storage_options=options, chunks={})
    assert_same_dataset(ours.compute(scheduler="processes", num_workers=2),  # the options travel with the arrays
                        xr.open_dataset(local, engine="zarr", consolidated=False).load())
    wrong = {**options, "secret_access_key": "not-the-secret-0123"}
    with pytest.raises(stowage.Error) as e:
        xr.open_dataset(url, engine="stowage", storage_options=wrong)
    assert url in str(e.value) and "not-the-secret-0123" not in str(e.value)
