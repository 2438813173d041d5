"""Attributes are a live mapping, written at once; assignment follows numpy's
casting rule ("same_kind") with every value checked to fit; N5 never turns a
group with children into an array."""

import json

import numpy as np
import pytest

import stowage

from conftest import needs

FORMATS = [pytest.param("n5"), pytest.param("zarr", marks=needs("zarr"))]


@pytest.mark.parametrize("fmt", FORMATS)
def test_attribute_changes_are_written_at_once(tmp_path, fmt):
    path = tmp_path / ("x." + fmt)
    with stowage.open(path, "w", fmt) as store:
        a = store.create_array("a", (4,), "uint8", attrs={"keep": 1})
        a.attrs["unit"] = "um"
        a.attrs.update({"scale": [1, 2]}, offset=3)
        assert a.attrs == {"keep": 1, "unit": "um", "scale": [1, 2], "offset": 3}
        del a.attrs["keep"]
        assert a.attrs.pop("offset") == 3
        assert a.attrs.setdefault("axis", "x") == "x"
        store.attrs["title"] = "t"
        store.create_group("g").attrs["colour"] = "red"
        store["g"].attrs.update(size=2)
        with pytest.raises(KeyError):
            del a.attrs["missing"]
    store = stowage.open(path)
    assert store["a"].attrs == {"unit": "um", "scale": [1, 2], "axis": "x"}
    assert dict(store["a"].attrs) == {"unit": "um", "scale": [1, 2], "axis": "x"}
    assert store.attrs["title"] == "t" and "title" in store.attrs
    assert store["g"].attrs == {"colour": "red", "size": 2}
    with stowage.open(path, "r+") as store:
        store["g"].attrs.clear()
        store["a"].attrs = {"only": True}  # assigning replaces them all, as before
    store = stowage.open(path)
    assert store["g"].attrs == {} and len(store["g"].attrs) == 0
    assert store["a"].attrs == {"only": True}


def test_attributes_a_format_cannot_keep_are_refused_not_dropped(tmp_path):
    with stowage.open(tmp_path / "x.npy", "w") as store:
        a = store.create_array("", (2,), "uint8")
        with pytest.raises(stowage.UnsupportedError, match="unit"):
            a.attrs["unit"] = "um"
        assert a.attrs == {}


def test_another_handle_sees_attribute_changes(tmp_path):
    with stowage.open(tmp_path / "x.n5", "w") as store:
        store.create_group("g")
    one, two = stowage.open(tmp_path / "x.n5", "r+"), stowage.open(tmp_path / "x.n5", "r+")
    g1, g2 = one["g"], two["g"]
    g1.attrs["a"] = 1
    assert g2.attrs["a"] == 1  # read from the store, not from a copy
    g2.attrs["b"] = 2
    assert g1.attrs == {"a": 1, "b": 2}


# ---- casting ----------------------------------------------------------------------------


@pytest.fixture
def arrays(tmp_path):
    stores = {t: stowage.open(tmp_path / f"{t}.npy", "w")
              for t in ("uint8", "int8", "int32", "uint64", "float32", "float64", "bool")}
    yield {t: store.create_array("", (4,), t) for t, store in stores.items()}
    for store in stores.values():
        store.close()


def test_values_that_fit_are_written(arrays):
    arrays["uint8"][...] = 7
    arrays["uint8"][1:3] = [200, 255]
    assert arrays["uint8"][...].tolist() == [7, 200, 255, 7]
    arrays["int32"][...] = np.array([1, -2, 3, -4], np.int64)  # a narrowing of kind: each value fits
    assert arrays["int32"][...].tolist() == [1, -2, 3, -4]
    arrays["float32"][...] = np.array([0.5, np.nan, np.inf, -1e30])  # float64 into float32: same_kind
    got = arrays["float32"][...]
    assert got[0] == 0.5 and np.isnan(got[1]) and got[2] == np.inf and got[3] == np.float32(-1e30)
    arrays["float64"][...] = np.arange(4, dtype=np.int16)  # integers into floats
    arrays["bool"][...] = [True, False, 1, 0]
    arrays["uint64"][...] = 2**64 - 1
    assert arrays["uint64"][0] == 2**64 - 1


@pytest.mark.parametrize("name,value,where,shown", [
    ("uint8", 300, "", "300"),
    ("uint8", [1, 2, 300, 4], "at index (2,)", "300"),
    ("uint8", -1, "", "-1"),
    ("int8", np.array([1, 128], np.int16), "at index (1,)", "128"),
    ("int32", np.array([2**40], np.int64), "at index (0,)", str(2**40)),
    ("uint64", -5, "", "-5"),
    ("uint64", 2**70, "", str(2**70)),
    ("float32", np.array([1.0, 1e300]), "at index (1,)", "1e+300"),
])
def test_values_that_do_not_fit_are_an_error_naming_the_first(arrays, name, value, where, shown):
    a = arrays[name]
    a[...] = 1
    with pytest.raises(stowage.InvalidArgumentError) as e:
        a[...] = value
    message = str(e.value)
    assert shown in message and where in message and "nothing was written" in message, message
    assert a[...].tolist() == [1, 1, 1, 1]


@pytest.mark.parametrize("name,value", [("int32", 1e20), ("uint8", 1.5), ("int32", np.array([1.0, 2.0])),
                                        ("uint8", np.array([1, 2], np.int8)), ("int8", np.float64(3))])
def test_casts_numpy_refuses_under_same_kind_are_refused(arrays, name, value):
    with pytest.raises(stowage.InvalidArgumentError, match="same_kind"):
        arrays[name][:2] = value
    assert arrays[name][...].tolist() == [0, 0, 0, 0]


def test_unsafe_casting_is_asked_for(arrays):
    arrays["uint8"].set(..., 300, casting="unsafe")
    assert arrays["uint8"][...].tolist() == [44] * 4  # numpy's wrap
    arrays["int32"].set(slice(0, 2), [1.9, -2.9], casting="unsafe")
    assert arrays["int32"][:2].tolist() == [1, -2]
    arrays["uint8"].write(np.array([1, 2], np.uint16), offset=(1,))  # narrowing within a kind: checked
    assert arrays["uint8"][...].tolist() == [44, 1, 2, 44]
    with pytest.raises(stowage.InvalidArgumentError, match="does not fit"):
        arrays["uint8"].write(np.array([256], np.uint16), offset=(0,))
    arrays["uint8"].write(np.array([256]), offset=(0,), casting="unsafe")
    assert arrays["uint8"][0] == 0
    with pytest.raises(stowage.InvalidArgumentError, match="casting must be"):
        arrays["uint8"].set(0, 1, casting="sometimes")


# ---- N5: a group with children never becomes an array ------------------------------------


def test_n5_root_with_children_is_not_turned_into_an_array(tmp_path):
    path = tmp_path / "r.n5"
    with stowage.open(path, "w") as store:
        store.attrs["owner"] = "me"
        store.create_array("child", (2,), "uint8")[...] = [1, 2]
        with pytest.raises(stowage.InvalidArgumentError, match="has nodes .*'child'"):
            store.create_array("", (4,), "uint8")
        with pytest.raises(stowage.InvalidArgumentError, match="has nodes"):
            store.create_group("g/h")
            store.create_array("g", (4,), "uint8")
    root = json.loads((path / "attributes.json").read_text())
    assert root["owner"] == "me" and "dimensions" not in root
    store = stowage.open(path)
    assert sorted(store.keys()) == ["child", "g"]
    assert store["child"][...].tolist() == [1, 2]


def test_n5_empty_group_becomes_an_array_keeping_its_attributes(tmp_path):
    with stowage.open(tmp_path / "e.n5", "w") as store:
        store.create_group("g", attrs={"unit": "um"})
        store.create_array("g", (3,), "int16", attrs={"scale": 2})
    a = stowage.open(tmp_path / "e.n5")["g"]
    assert a.attrs == {"unit": "um", "scale": 2} and a.shape == (3,)
