// A datadings sample, decoded by stowage::sample (msgpack_sample.hpp), as the
// Python objects datadings' own reader returns (msgpack raw=False with
// msgpack_numpy.decode): dict, list, str, bytes, int, float, None, bool,
// complex, numpy arrays and numpy scalars.
//
// Decoding in C++ and building the objects here, instead of msgpack's
// object_hook calling msgpack_numpy.decode in Python for every map, is what
// makes iteration faster than datadings' reader (bench/python).
#pragma once

#include <stowage/msgpack_sample.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstring>

namespace stowage_py {

namespace py = pybind11;
namespace sample = stowage::sample;

// numpy's dtype for a stored array: its type string, or for a structured
// array the list of (name, type, shape) fields.
inline py::dtype numpy_dtype(const sample::NdArray& a) {
  if (a.kind != 'V' || a.fields.empty()) return py::dtype(a.dtype);
  py::list fields;
  for (const sample::Field& f : a.fields) {
    py::tuple shape(f.shape.size());
    for (size_t i = 0; i < f.shape.size(); ++i) shape[i] = py::int_(f.shape[i]);
    fields.append(f.shape.empty() ? py::make_tuple(f.name, f.dtype) : py::make_tuple(f.name, f.dtype, shape));
  }
  return py::dtype::from_args(fields);
}

inline py::object ndarray_to_python(const sample::NdArray& a, bool scalar) {
  std::vector<py::ssize_t> shape(a.shape.begin(), a.shape.end());
  py::array out(numpy_dtype(a), shape);
  if (!a.data.empty()) std::memcpy(out.mutable_data(), a.data.data(), a.data.size());
  if (scalar) return out[py::tuple()];  // a 0-d array indexed by () is a numpy scalar
  return std::move(out);
}

inline py::object value_to_python(const sample::Value& v);

inline py::object key_to_python(const sample::Value& k) {
  py::object o = value_to_python(k);
  if (py::isinstance<py::list>(o)) return py::tuple(o);  // dict keys must be hashable
  return o;
}

inline py::object value_to_python(const sample::Value& v) {
  using sample::Type;
  switch (v.type()) {
    case Type::nil: return py::none();
    case Type::boolean: return py::bool_(v.as_bool());
    case Type::int64: return py::int_(v.as_int());
    case Type::uint64: return py::int_(v.as_uint());
    case Type::float32:
    case Type::float64: return py::float_(v.as_double());
    case Type::string: {
      const std::string& s = v.as_string();
      PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<py::ssize_t>(s.size()), "strict");
      if (!o) throw py::error_already_set();
      return py::reinterpret_steal<py::object>(o);
    }
    case Type::bytes: return py::bytes(v.as_bytes());
    case Type::array: {
      const sample::Array& items = v.as_array();
      py::list out(items.size());
      for (size_t i = 0; i < items.size(); ++i) out[i] = value_to_python(items[i]);
      return std::move(out);
    }
    case Type::map: {
      py::dict out;
      for (const auto& [k, val] : v.as_map()) out[key_to_python(k)] = value_to_python(val);
      return std::move(out);
    }
    case Type::ext: return py::module_::import("msgpack").attr("ExtType")(v.ext_code(), py::bytes(v.ext_data()));
    case Type::ndarray: return ndarray_to_python(v.as_ndarray(), false);
    case Type::numpy_scalar: return ndarray_to_python(v.as_ndarray(), true);
    case Type::complex: {
      std::complex<double> c = v.as_complex();
      return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(c.real(), c.imag()));
    }
  }
  return py::none();
}

}  // namespace stowage_py
