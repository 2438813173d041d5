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
// the Python objects directly, a map's entries wait in a C++ vector until
// the map ends (a msgpack-numpy map becomes its array without a dict ever
// being made), and repeated keys and dtypes come from small fixed caches
// (bench/python). The rules are the
// library's (docs in msgpack_sample.hpp): a map with the bin key "nd" is an
// array (true) or a scalar, one with "complex" a Python complex (parsed by the
// library's parse_complex), a pickled object array ("O") stays a map, and the
// data must be exactly as long as dtype and shape say. Errors are
// stowage::sdk::Error with code STOWAGE_CORRUPT, as the library's.
#pragma once

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL stowage_py_ARRAY_API
#include <numpy/arrayobject.h>

#include <stowage/msgpack_sample.hpp>

#include <pybind11/pybind11.h>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace stowage_py {

namespace py = pybind11;

// Call once from the module's init (numpy's C API table).
inline void init_sample_decoder() {
  if (_import_array() < 0) throw py::error_already_set();
}

// A fixed table from short byte strings (tagged with a kind byte) to values
// made once and kept for the life of the process: map keys repeat in every
// sample ("key", "image", b"nd", b"data", ...) and so do dtype strings. A
// string that finds no free slot near its hash is simply not cached; nothing
// is evicted. Only used with the GIL held.
template <class T>
class SmallCache {
 public:
  static constexpr size_t max_size = 30;
  // The cached value, or nullptr (then `put` may keep one).
  T* get(char kind, const char* v, size_t n) {
    if (n > max_size) return nullptr;
    for (size_t i = 0, h = hash(kind, v, n); i < probes; ++i) {
      Slot& s = slots_[(h + i) % slots];
      if (!s.value) return nullptr;
      if (s.kind == kind && s.size == n && std::memcmp(s.bytes, v, n) == 0) return s.value;
    }
    return nullptr;
  }
  // Keeps `value` (a reference the cache then owns) if there is room.
  bool put(char kind, const char* v, size_t n, T* value) {
    if (n > max_size) return false;
    for (size_t i = 0, h = hash(kind, v, n); i < probes; ++i) {
      Slot& s = slots_[(h + i) % slots];
      if (s.value) continue;
      s.kind = kind;
      s.size = static_cast<uint8_t>(n);
      std::memcpy(s.bytes, v, n);
      s.value = value;
      return true;
    }
    return false;
  }

 private:
  static constexpr size_t slots = 1024, probes = 8;
  struct Slot {
    char kind = 0;
    uint8_t size = 0;
    char bytes[max_size] = {};
    T* value = nullptr;
  };
  static size_t hash(char kind, const char* v, size_t n) {
    uint64_t h = 1469598103934665603ull ^ static_cast<unsigned char>(kind);  // FNV-1a
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(v[i])) * 1099511628211ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
  Slot slots_[slots];
};

class PyDecoder : public msgpack::null_visitor {
 public:
  static constexpr size_t max_depth = stowage::sample::Decoder::max_depth;

  PyDecoder() {
    open_.reserve(8);
    entries_.reserve(32);
  }
  ~PyDecoder() { release(); }
  PyDecoder(const PyDecoder&) = delete;
  PyDecoder& operator=(const PyDecoder&) = delete;

  // One sample: exactly one msgpack object spanning all the bytes. The
  // decoder can be used again for the next one (its buffers are kept).
  py::object decode(std::string_view bytes) {
    input_size_ = bytes.size();
    size_t off = 0;
    bool ok = false;
    try {
      ok = msgpack::parse(bytes.data(), bytes.size(), off, *this);
    } catch (...) {  // from pybind11 in a callback: start clean next time
      release();
      python_error_ = false;
      error_.clear();
      throw;
    }
    if (failed()) {
      release();
      if (python_error_) {
        python_error_ = false;
        throw py::error_already_set();
      }
      std::string why = std::move(error_);
      error_.clear();
      stowage::sample::decode_error(why);
    }
    py::object out = py::reinterpret_steal<py::object>(result_);
    result_ = nullptr;
    if (!ok) stowage::sample::decode_error("not valid msgpack");
    if (off != bytes.size())
      stowage::sample::decode_error(std::to_string(bytes.size() - off) +
                                    " bytes follow the msgpack object");
    return out;
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
    try {
      py::object ext = py::module_::import("msgpack").attr("ExtType")(
          code, py::bytes(n ? v + 1 : v, n ? n - 1 : 0));
      return add(ext.release().ptr());
    } catch (py::error_already_set& e) {
      e.restore();
      return python_failed();
    }
  }
  bool start_array(uint32_t n) {
    if (n > input_size_) return fail("truncated: an array claims more items than there are bytes");
    PyObject* list = PyList_New(n);
    if (!list) return python_failed();
    return open(list);
  }
  bool start_map(uint32_t n) {
    if (n > input_size_) return fail("truncated: a map claims more entries than there are bytes");
    return open(nullptr);
  }
  bool end_array() { return close_array(); }
  bool end_map() { return close_map(); }
  void parse_error(size_t, size_t at) {
    fail("not valid msgpack (bad byte at offset " + std::to_string(at) + ")");
  }
  void insufficient_bytes(size_t, size_t) { fail("truncated: the msgpack object is incomplete"); }

 private:
  // An open array (its list, filled in place) or map (its entries wait in
  // entries_ from `first` on: key, value, key, value, ...).
  struct Frame {
    PyObject* list;  // nullptr for a map
    size_t first;    // arrays: the next slot; maps: the first entry in entries_
  };

  bool failed() const { return python_error_ || !error_.empty(); }
  bool at_key() const {
    return !open_.empty() && !open_.back().list && (entries_.size() - open_.back().first) % 2 == 0;
  }

  // Drops everything half-built (after an error).
  void release() {
    for (Frame& f : open_) Py_XDECREF(f.list);
    open_.clear();
    for (PyObject* o : entries_) Py_DECREF(o);
    entries_.clear();
    Py_CLEAR(result_);
  }

  static PyObject* cached_key(char kind, const char* v, uint32_t n) {
    static auto* cache = new SmallCache<PyObject>();
    if (PyObject* o = cache->get(kind, v, n)) {
      Py_INCREF(o);
      return o;
    }
    PyObject* o =
        kind == 's' ? PyUnicode_DecodeUTF8(v, n, "strict") : PyBytes_FromStringAndSize(v, n);
    if (!o) return nullptr;
    if (kind == 's') PyUnicode_InternInPlace(&o);
    if (cache->put(kind, v, n, o)) Py_INCREF(o);  // the cache's reference
    return o;
  }

  // numpy's dtype of a type string, parsed once per string ("|u1", "<f4").
  static PyArray_Descr* cached_dtype(PyObject* type) {
    static auto* cache = new SmallCache<PyArray_Descr>();
    Py_ssize_t n = 0;
    const char* text = PyUnicode_AsUTF8AndSize(type, &n);
    if (!text) return nullptr;
    PyArray_Descr* descr = cache->get('t', text, static_cast<size_t>(n));
    if (!descr) {
      if (!PyArray_DescrConverter(type, &descr)) return nullptr;
      if (cache->put('t', text, static_cast<size_t>(n), descr)) Py_INCREF(descr);
      return descr;  // the new reference PyArray_NewFromDescr steals
    }
    Py_INCREF(descr);  // PyArray_NewFromDescr steals one reference
    return descr;
  }

  bool fail(const std::string& why) {
    if (error_.empty() && !python_error_) error_ = why;
    return false;
  }
  bool python_failed() {
    python_error_ = true;
    return false;
  }
  bool open(PyObject* list) {
    if (open_.size() >= max_depth) {
      Py_XDECREF(list);
      return fail("nested deeper than " + std::to_string(max_depth) + " levels");
    }
    open_.push_back({list, list ? 0 : entries_.size()});
    return true;
  }
  bool close_array() {
    PyObject* done = open_.back().list;
    open_.pop_back();
    return add(done);
  }
  bool close_map() {
    const size_t first = open_.back().first;
    PyObject* done = decode_numpy(first);
    if (!done && !failed()) done = make_dict(first);
    for (size_t i = first; i < entries_.size(); ++i) Py_DECREF(entries_[i]);
    entries_.resize(first);
    open_.pop_back();
    if (done) return add(done);
    if (!failed()) python_failed();  // make_dict's Python error
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
    if (top.list) {
      if (static_cast<Py_ssize_t>(top.first) >= PyList_GET_SIZE(top.list)) {
        Py_DECREF(v);
        return fail("an array holds more items than it said");
      }
      PyList_SET_ITEM(top.list, top.first++, v);  // steals v
      return true;
    }
    if ((entries_.size() - top.first) % 2 == 0 &&
        PyList_Check(v)) {  // a dict key must be hashable: [a, b] -> (a, b)
      PyObject* t = PyList_AsTuple(v);
      Py_DECREF(v);
      if (!t) return python_failed();
      v = t;
    }
    entries_.push_back(v);
    return true;
  }

  // The map's entries as a dict, as msgpack builds it (a later equal key
  // replaces the value). nullptr: a Python error (an unhashable key).
  PyObject* make_dict(size_t first) {
    PyObject* dict = PyDict_New();
    if (!dict) return nullptr;
    for (size_t i = first; i < entries_.size(); i += 2)
      if (PyDict_SetItem(dict, entries_[i], entries_[i + 1]) < 0) {
        Py_DECREF(dict);
        return nullptr;
      }
    return dict;
  }

  // The value of the map's last bin key equal to `name` (what a dict lookup
  // of b"name" finds), borrowed, or nullptr.
  PyObject* entry(size_t first, std::string_view name) const {
    PyObject* found = nullptr;
    for (size_t i = first; i < entries_.size(); i += 2) {
      PyObject* k = entries_[i];
      if (PyBytes_CheckExact(k) && static_cast<size_t>(PyBytes_GET_SIZE(k)) == name.size() &&
          std::memcmp(PyBytes_AS_STRING(k), name.data(), name.size()) == 0)
        found = entries_[i + 1];
    }
    return found;
  }

  // msgpack_numpy.decode of a finished map: a new array, scalar or complex;
  // or nullptr: the map stays a dict, or (failed()) an error.
  PyObject* decode_numpy(size_t first) {
    if (PyObject* nd = entry(first, "nd"))
      return keys_hashable(first) ? decode_nd(first, nd) : nullptr;
    if (entry(first, "complex")) return keys_hashable(first) ? decode_complex(first) : nullptr;
    return nullptr;
  }

  // msgpack refuses a map with an unhashable key (a map as a key) before
  // msgpack_numpy sees it; so do we, through make_dict, which then fails.
  bool keys_hashable(size_t first) const {
    for (size_t i = first; i < entries_.size(); i += 2)
      if (PyObject_Hash(entries_[i]) == -1) {
        PyErr_Clear();
        return false;
      }
    return true;
  }

  PyObject* corrupt(const std::string& why) {
    fail(why);
    return nullptr;
  }

  PyObject* decode_complex(size_t first) {
    PyObject* data = entry(first, "data");
    if (!data) return nullptr;  // KeyError in Python: left as is
    if (!PyUnicode_Check(data)) return corrupt("a complex number's data is not a str");
    Py_ssize_t n = 0;
    const char* text = PyUnicode_AsUTF8AndSize(data, &n);
    if (!text) {
      python_failed();
      return nullptr;
    }
    std::complex<double> c;
    try {
      c = stowage::sample::detail::parse_complex(std::string(text, n));
    } catch (const stowage::sdk::Error& e) {
      return corrupt(std::string(e.what()).substr(std::string("msgpack sample: ").size()));
    }
    PyObject* out = PyComplex_FromDoubles(c.real(), c.imag());
    if (!out) python_failed();
    return out;
  }

  static bool bytes_equal(PyObject* o, const char* text) {
    return PyBytes_Check(o) && std::string_view(PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o)) == text;
  }

  PyObject* decode_nd(size_t first, PyObject* nd) {
    const bool is_array = nd == Py_True;
    PyObject* type = entry(first, "type");
    PyObject* data = type ? entry(first, "data") : nullptr;
    PyObject* kind = data && is_array ? entry(first, "kind") : nullptr;
    PyObject* shape = kind ? entry(first, "shape") : nullptr;
    if (!type || !data || (is_array && (!kind || !shape)))
      return nullptr;  // KeyError in Python: left as is
    if (!PyBytes_Check(data)) return corrupt("an ndarray's data is not bin");
    if (is_array && bytes_equal(kind, "O")) return nullptr;  // pickled: left as is
    PyArray_Descr* descr = nullptr;
    if (is_array && bytes_equal(kind, "V")) {
      descr = structured_dtype(type);
    } else {
      if (!PyUnicode_Check(type)) return corrupt("an ndarray's type is not a str");
      descr = cached_dtype(type);
    }
    if (!descr) {
      PyErr_Clear();
      return corrupt("unsupported numpy type " + std::string(py::str(py::handle(type))));
    }
    npy_intp dims[NPY_MAXDIMS];
    int ndim = 0;
    if (is_array) {
      if (!PyList_Check(shape)) return corrupt_descr(descr, "an ndarray shape is not an array");
      if (PyList_GET_SIZE(shape) > NPY_MAXDIMS)
        return corrupt_descr(
            descr, "an ndarray shape has more than " + std::to_string(NPY_MAXDIMS) + " dimensions");
      for (Py_ssize_t i = 0; i < PyList_GET_SIZE(shape); ++i) {
        PyObject* d = PyList_GET_ITEM(shape, i);
        Py_ssize_t v = PyLong_Check(d) ? PyLong_AsSsize_t(d) : -1;
        if (v < 0) {
          PyErr_Clear();
          return corrupt_descr(descr, "an ndarray shape holds a negative or non-integer value");
        }
        dims[ndim++] = v;
      }
    }
    // The stored bytes must be exactly the array (the library's rule).
    unsigned __int128 want = static_cast<unsigned __int128>(descr->elsize);
    for (int i = 0; i < ndim; ++i) want *= static_cast<unsigned __int128>(dims[i]);
    if (want != static_cast<unsigned __int128>(PyBytes_GET_SIZE(data)))
      return corrupt_descr(descr, "an ndarray of dtype " + std::string(py::str(py::handle(type))) +
                                      " needs " +
                                      std::to_string(static_cast<unsigned long long>(want)) +
                                      " data bytes, has " + std::to_string(PyBytes_GET_SIZE(data)));
    // Read-only, over the bytes object, as np.ndarray(buffer=data) is.
    PyObject* array =
        PyArray_NewFromDescr(&PyArray_Type, descr, ndim, dims, nullptr, PyBytes_AS_STRING(data), 0,
                             nullptr);  // steals descr
    if (!array) return python_error();
    Py_INCREF(data);
    if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array), data) < 0) {
      Py_DECREF(array);
      return python_error();
    }
    if (is_array) return array;
    // np.frombuffer(data, dtype)[0]: the numpy scalar.
    PyObject* scalar =
        PyArray_Scalar(PyArray_DATA(reinterpret_cast<PyArrayObject*>(array)),
                       PyArray_DESCR(reinterpret_cast<PyArrayObject*>(array)), array);
    Py_DECREF(array);
    if (!scalar) python_failed();
    return scalar;
  }

  PyObject* python_error() {
    python_failed();
    return nullptr;
  }
  PyObject* corrupt_descr(PyArray_Descr* descr, const std::string& why) {
    Py_DECREF(descr);
    return corrupt(why);
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
        parts.append(PyBytes_Check(p.ptr())
                         ? py::object(py::str(py::reinterpret_borrow<py::bytes>(p)))
                         : py::reinterpret_borrow<py::object>(p));
      fields.append(py::tuple(parts));
    }
    PyArray_Descr* descr = nullptr;
    if (!PyArray_DescrConverter(fields.ptr(), &descr)) return nullptr;
    return descr;
  }

  size_t input_size_ = 0;
  std::vector<Frame> open_;
  std::vector<PyObject*> entries_;  // the open maps' entries, innermost last
  PyObject* result_ = nullptr;
  std::string error_;
  bool python_error_ = false;
};

// One sample: exactly one msgpack object spanning all the bytes.
inline py::object decode_sample(std::string_view bytes) {
  PyDecoder decoder;
  return decoder.decode(bytes);
}

}  // namespace stowage_py
