// JSON (nlohmann, as the C++ API speaks it) to Python objects and back.
#pragma once

#include <stowage/stowage.hpp>

#include <pybind11/pybind11.h>

#include <string>

namespace stowage_py {

namespace py = pybind11;
using stowage::json;

inline py::object to_python(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return py::none();
    case json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case json::value_t::number_integer:
      return py::int_(j.get<int64_t>());
    case json::value_t::number_unsigned:
      return py::int_(j.get<uint64_t>());
    case json::value_t::number_float:
      return py::float_(j.get<double>());
    case json::value_t::string:
      return py::str(j.get_ref<const std::string&>());
    case json::value_t::array: {
      py::list out;
      for (const json& v : j) out.append(to_python(v));
      return std::move(out);
    }
    case json::value_t::object: {
      py::dict out;
      for (const auto& [k, v] : j.items()) out[py::str(k)] = to_python(v);
      return std::move(out);
    }
    default:
      return py::none();  // binary and discarded never come from the library
  }
}

// Python values a JSON document can hold: None, bool, int, float, str,
// sequences, dicts with str keys, and numpy scalars and arrays (via tolist()).
inline json from_python(py::handle o) {
  if (o.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(o)) return o.cast<bool>();
  if (py::isinstance<py::int_>(o)) {
    // Negative values as int64, the rest as uint64 (json keeps both).
    if (o.cast<py::int_>() < py::int_(0)) return o.cast<int64_t>();
    return o.cast<uint64_t>();
  }
  if (py::isinstance<py::float_>(o)) return o.cast<double>();
  if (py::isinstance<py::str>(o)) return o.cast<std::string>();
  if (py::isinstance<py::dict>(o)) {
    json out = json::object();
    for (auto [k, v] : o.cast<py::dict>()) {
      if (!py::isinstance<py::str>(k))
        throw py::type_error("attribute keys must be str, not " +
                             std::string(py::str(k.get_type().attr("__name__"))));
      out[k.cast<std::string>()] = from_python(v);
    }
    return out;
  }
  if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
    json out = json::array();
    for (py::handle v : o) out.push_back(from_python(v));
    return out;
  }
  if (py::hasattr(o, "tolist")) return from_python(o.attr("tolist")());  // numpy scalars and arrays
  throw py::type_error("cannot store a " + std::string(py::str(o.get_type().attr("__name__"))) +
                       " as JSON (use None, bool, int, float, str, lists or dicts)");
}

}  // namespace stowage_py
