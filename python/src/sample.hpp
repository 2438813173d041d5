// A datadings sample (msgpack bytes) decoded straight into the Python objects
// datadings' own reader returns: msgpack.unpackb(raw=False,
// strict_map_key=False, object_hook=msgpack_numpy.decode). That is dict, list,
// str, bytes, int, float, None, bool, complex, msgpack.ExtType, and numpy
// arrays and scalars, read-only over the bytes of their data, as
// msgpack-numpy makes them.
//
// Why not stowage::sample::decode (msgpack_sample.hpp) and a conversion of
// its Value tree: that path builds every value twice and copied each 3 KiB
// image twice; iterating a set of 3 KiB samples ran at 1.0x datadings'
// reader, below the 2x of issue 18. Here msgpack-cxx's parser events build
// the Python objects directly (~2.5x, bench/python). The rules are the
// library's (docs in msgpack_sample.hpp): a map with the bin key "nd" is an
// array (true) or a scalar, one with "complex" a Python complex (parsed by the
// library's parse_complex), a pickled object array ("O") stays a map, and the
// data must be exactly as long as dtype and shape say. Errors are
// stowage::Error with code corrupt, as the library's.
#pragma once

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL stowage_py_ARRAY_API
#include <numpy/arrayobject.h>

#include <stowage/msgpack_sample.hpp>

#include <pybind11/pybind11.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace stowage_py {

namespace py = pybind11;

// Call once from the module's init (numpy's C API table).
inline void init_sample_decoder() {
  if (_import_array() < 0) throw py::error_already_set();
}

class PyDecoder : public msgpack::null_visitor {
 public:
  static constexpr size_t max_depth = stowage::sample::Decoder::max_depth;

  explicit PyDecoder(size_t input_size) : input_size_(input_size) {}
  void reserve() { open_.reserve(8); }
  ~PyDecoder() {
    for (Frame& f : open_) {
      Py_XDECREF(f.container);
      Py_XDECREF(f.key);
    }
    Py_XDECREF(result_);
  }

  bool visit_nil() {
    Py_INCREF(Py_None);
    return add(Py_None);
  }
  bool visit_boolean(bool v) { return add(PyBool_FromLong(v)); }
  bool visit_positive_integer(uint64_t v) { return add(PyLong_FromUnsignedLongLong(v)); }
  bool visit_negative_integer(int64_t v) { return add(PyLong_FromLongLong(v)); }
  bool visit_float32(float v) { return add(PyFloat_FromDouble(v)); }
  bool visit_float64(double v) { return add(PyFloat_FromDouble(v)); }
  bool visit_str(const char* v, uint32_t n) {
    if (at_key()) return add(cached_key('s', v, n));
    return add(PyUnicode_DecodeUTF8(v, n, "strict"));
  }
  bool visit_bin(const char* v, uint32_t n) {
    if (at_key()) return add(cached_key('b', v, n));
    return add(PyBytes_FromStringAndSize(v, n));
  }
  bool visit_ext(const char* v, uint32_t n) {
    // msgpack-cxx passes the type byte first.
    int code = n ? static_cast<int8_t>(v[0]) : 0;
    py::object ext = py::module_::import("msgpack").attr("ExtType")(code, py::bytes(n ? v + 1 : v, n ? n - 1 : 0));
    return add(ext.release().ptr());
  }
  bool start_array(uint32_t n) {
    if (n > input_size_) return fail("truncated: an array claims more items than there are bytes");
    return open(PyList_New(n), false);
  }
  bool start_map(uint32_t n) {
    if (n > input_size_) return fail("truncated: a map claims more entries than there are bytes");
    return open(PyDict_New(), true);
  }
  bool end_array() { return close(); }
  bool end_map() { return close(); }
  void parse_error(size_t, size_t at) { fail("not valid msgpack (bad byte at offset " + std::to_string(at) + ")"); }
  void insufficient_bytes(size_t, size_t) { fail("truncated: the msgpack object is incomplete"); }

  // The decoded object (a new reference); throws what went wrong.
  py::object result() {
    rethrow();
    py::object out = py::reinterpret_steal<py::object>(result_);
    result_ = nullptr;
    return out;
  }
  void rethrow() {
    if (python_error_) throw py::error_already_set();
    if (!error_.empty()) stowage::sample::decode_error(error_);
  }
  bool failed() const { return python_error_ || !error_.empty(); }

 private:
  struct Frame {
    PyObject* container;
    bool is_map;
    Py_ssize_t next = 0;      // list slot to fill
    PyObject* key = nullptr;  // map key waiting for its value
  };

  bool at_key() const { return !open_.empty() && open_.back().is_map && !open_.back().key; }

  // Map keys repeat in every sample ("key", "image", b"nd", b"data", ...):
  // one shared object each (hash computed once) saves about a fifth of the
  // decoding time of a 3 KiB sample. Short keys only, at most 4096 of them.
  static PyObject* cached_key(char kind, const char* v, uint32_t n) {
    if (n > 64) return kind == 's' ? PyUnicode_DecodeUTF8(v, n, "strict") : PyBytes_FromStringAndSize(v, n);
    static auto* cache = new std::unordered_map<std::string, PyObject*>();
    std::string id(1, kind);
    id.append(v, n);
    auto it = cache->find(id);
    if (it != cache->end()) {
      Py_INCREF(it->second);
      return it->second;
    }
    PyObject* o = kind == 's' ? PyUnicode_DecodeUTF8(v, n, "strict") : PyBytes_FromStringAndSize(v, n);
    if (o && cache->size() < 4096) {
      if (kind == 's') PyUnicode_InternInPlace(&o);
      Py_INCREF(o);
      cache->emplace(std::move(id), o);
    }
    return o;
  }

  // numpy's dtype of a type string, parsed once per string ("|u1", "<f4").
  static PyArray_Descr* cached_dtype(PyObject* type) {
    static auto* cache = new std::unordered_map<std::string, PyArray_Descr*>();
    Py_ssize_t n = 0;
    const char* text = PyUnicode_AsUTF8AndSize(type, &n);
    if (!text) return nullptr;
    std::string key(text, n);
    auto it = cache->find(key);
    if (it == cache->end()) {
      PyArray_Descr* descr = nullptr;
      if (!PyArray_DescrConverter(type, &descr)) return nullptr;
      if (cache->size() >= 256) return descr;
      it = cache->emplace(std::move(key), descr).first;
    }
    Py_INCREF(it->second);  // PyArray_NewFromDescr steals one reference
    return it->second;
  }

  bool fail(const std::string& why) {
    if (error_.empty() && !python_error_) error_ = why;
    return false;
  }
  bool open(PyObject* container, bool is_map) {
    if (!container) return python_failed();
    if (open_.size() >= max_depth) {
      Py_DECREF(container);
      return fail("nested deeper than " + std::to_string(max_depth) + " levels");
    }
    open_.push_back({container, is_map});
    return true;
  }
  bool close() {
    PyObject* done = open_.back().container;
    Py_XDECREF(open_.back().key);
    open_.pop_back();
    if (PyDict_Check(done)) {
      done = decode_numpy(done);  // steals the dict
      if (!done) return false;
    }
    return add(done);
  }
  bool python_failed() {
    python_error_ = true;
    return false;
  }
  // Takes the new reference `v` (nullptr: a Python error is set).
  bool add(PyObject* v) {
    if (!v) return python_failed();
    if (open_.empty()) {
      result_ = v;
      return true;
    }
    Frame& top = open_.back();
    if (!top.is_map) {
      if (top.next >= PyList_GET_SIZE(top.container)) {
        Py_DECREF(v);
        return fail("an array holds more items than it said");
      }
      PyList_SET_ITEM(top.container, top.next++, v);  // steals v
      return true;
    }
    if (!top.key) {
      if (PyList_Check(v)) {  // a dict key must be hashable: [a, b] -> (a, b)
        PyObject* t = PyList_AsTuple(v);
        Py_DECREF(v);
        if (!t) return python_failed();
        v = t;
      }
      top.key = v;
      return true;
    }
    int rc = PyDict_SetItem(top.container, top.key, v);
    Py_DECREF(v);
    Py_CLEAR(top.key);
    return rc == 0 || python_failed();
  }

  // msgpack_numpy.decode of a finished dict (stolen); a new reference or nullptr.
  PyObject* decode_numpy(PyObject* dict) {
    static PyObject* const k_nd = PyBytes_FromString("nd");
    static PyObject* const k_complex = PyBytes_FromString("complex");
    PyObject* nd = PyDict_GetItemWithError(dict, k_nd);  // borrowed
    if (nd) return decode_nd(dict, nd);
    if (PyErr_Occurred()) return steal_fail(dict);
    if (PyDict_GetItemWithError(dict, k_complex)) return decode_complex(dict);
    if (PyErr_Occurred()) return steal_fail(dict);
    return dict;
  }

  PyObject* steal_fail(PyObject* dict) {
    Py_DECREF(dict);
    python_failed();
    return nullptr;
  }
  PyObject* corrupt(PyObject* dict, const std::string& why) {
    Py_DECREF(dict);
    fail(why);
    return nullptr;
  }

  PyObject* decode_complex(PyObject* dict) {
    static PyObject* const k_data = PyBytes_FromString("data");
    PyObject* data = PyDict_GetItemWithError(dict, k_data);
    if (!data) return PyErr_Occurred() ? steal_fail(dict) : dict;  // KeyError in Python: left as is
    if (!PyUnicode_Check(data)) return corrupt(dict, "a complex number's data is not a str");
    Py_ssize_t n = 0;
    const char* text = PyUnicode_AsUTF8AndSize(data, &n);
    if (!text) return steal_fail(dict);
    std::complex<double> c;
    try {
      c = stowage::sample::detail::parse_complex(std::string(text, n));
    } catch (const stowage::Error& e) {
      return corrupt(dict, std::string(e.what()).substr(std::string("msgpack sample: ").size()));
    }
    Py_DECREF(dict);
    return PyComplex_FromDoubles(c.real(), c.imag());
  }

  PyObject* decode_nd(PyObject* dict, PyObject* nd) {
    static PyObject* const k_type = PyBytes_FromString("type");
    static PyObject* const k_kind = PyBytes_FromString("kind");
    static PyObject* const k_shape = PyBytes_FromString("shape");
    static PyObject* const k_data = PyBytes_FromString("data");
    const bool is_array = nd == Py_True;
    PyObject* type = PyDict_GetItemWithError(dict, k_type);
    PyObject* data = type ? PyDict_GetItemWithError(dict, k_data) : nullptr;
    PyObject* kind = data && is_array ? PyDict_GetItemWithError(dict, k_kind) : nullptr;
    PyObject* shape = kind ? PyDict_GetItemWithError(dict, k_shape) : nullptr;
    if (PyErr_Occurred()) return steal_fail(dict);
    if (!type || !data || (is_array && (!kind || !shape))) return dict;  // KeyError in Python: left as is
    if (!PyBytes_Check(data)) return corrupt(dict, "an ndarray's data is not bin");
    if (is_array && PyBytes_Check(kind) && std::string_view(PyBytes_AS_STRING(kind)) == "O") return dict;  // pickled
    PyArray_Descr* descr = nullptr;
    if (is_array && PyBytes_Check(kind) && std::string_view(PyBytes_AS_STRING(kind)) == "V") {
      descr = structured_dtype(type);
    } else {
      if (!PyUnicode_Check(type)) return corrupt(dict, "an ndarray's type is not a str");
      descr = cached_dtype(type);
    }
    if (!descr) {
      PyErr_Clear();
      return corrupt(dict, "unsupported numpy type " + std::string(py::str(py::handle(type))));
    }
    std::vector<npy_intp> dims;
    if (is_array) {
      if (!PyList_Check(shape)) return corrupt_descr(dict, descr, "an ndarray shape is not an array");
      for (Py_ssize_t i = 0; i < PyList_GET_SIZE(shape); ++i) {
        PyObject* d = PyList_GET_ITEM(shape, i);
        Py_ssize_t v = PyLong_Check(d) ? PyLong_AsSsize_t(d) : -1;
        if (v < 0) {
          PyErr_Clear();
          return corrupt_descr(dict, descr, "an ndarray shape holds a negative or non-integer value");
        }
        dims.push_back(v);
      }
    }
    // The stored bytes must be exactly the array (the library's rule).
    unsigned __int128 want = static_cast<unsigned __int128>(descr->elsize);
    for (npy_intp d : dims) want *= static_cast<unsigned __int128>(d);
    if (want != static_cast<unsigned __int128>(PyBytes_GET_SIZE(data)))
      return corrupt_descr(dict, descr,
                           "an ndarray of dtype " + std::string(py::str(py::handle(type))) + " needs " +
                               std::to_string(static_cast<unsigned long long>(want)) + " data bytes, has " +
                               std::to_string(PyBytes_GET_SIZE(data)));
    // Read-only, over the bytes object, as np.ndarray(buffer=data) is.
    PyObject* array = PyArray_NewFromDescr(&PyArray_Type, descr, static_cast<int>(dims.size()), dims.data(), nullptr,
                                           PyBytes_AS_STRING(data), 0, nullptr);  // steals descr
    if (!array) return steal_fail(dict);
    Py_INCREF(data);
    if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array), data) < 0) {
      Py_DECREF(array);
      return steal_fail(dict);
    }
    Py_DECREF(dict);
    if (is_array) return array;
    // np.frombuffer(data, dtype)[0]: the numpy scalar.
    PyObject* scalar = PyArray_Scalar(PyArray_DATA(reinterpret_cast<PyArrayObject*>(array)),
                                      PyArray_DESCR(reinterpret_cast<PyArrayObject*>(array)), array);
    Py_DECREF(array);
    if (!scalar) python_failed();
    return scalar;
  }

  PyObject* corrupt_descr(PyObject* dict, PyArray_Descr* descr, const std::string& why) {
    Py_DECREF(descr);
    return corrupt(dict, why);
  }

  // msgpack_numpy's _unpack_dtype for kind V: [[name, type(, shape)], ...]
  // with bytes decoded -> numpy's descr list of tuples.
  static PyArray_Descr* structured_dtype(PyObject* type) {
    if (!PyList_Check(type)) return nullptr;
    py::list fields;
    for (py::handle f : py::reinterpret_borrow<py::list>(type)) {
      if (!PyList_Check(f.ptr())) return nullptr;
      py::list parts;
      for (py::handle p : py::reinterpret_borrow<py::list>(f))
        parts.append(PyBytes_Check(p.ptr()) ? py::object(py::str(py::reinterpret_borrow<py::bytes>(p)))
                                            : py::reinterpret_borrow<py::object>(p));
      fields.append(py::tuple(parts));
    }
    PyArray_Descr* descr = nullptr;
    if (!PyArray_DescrConverter(fields.ptr(), &descr)) return nullptr;
    return descr;
  }

  size_t input_size_;
  std::vector<Frame> open_;
  PyObject* result_ = nullptr;
  std::string error_;
  bool python_error_ = false;
};

// One sample: exactly one msgpack object spanning all the bytes.
inline py::object decode_sample(std::string_view bytes) {
  PyDecoder decoder(bytes.size());
  decoder.reserve();
  size_t off = 0;
  bool ok = msgpack::parse(bytes.data(), bytes.size(), off, decoder);
  decoder.rethrow();
  if (!ok) stowage::sample::decode_error("not valid msgpack");
  if (off != bytes.size()) stowage::sample::decode_error(std::to_string(bytes.size() - off) + " bytes follow the msgpack object");
  return decoder.result();
}

}  // namespace stowage_py
