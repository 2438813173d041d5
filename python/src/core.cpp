// stowage._core: the C++ API (stowage.hpp, copy.hpp) as a Python extension.
//
// This layer is thin on purpose: it converts arguments, releases the GIL
// around every call that touches files, and turns stowage::Error into the
// Python exceptions of stowage._errors. Indexing, pickling, dask, xarray and
// torch live in the Python package (python/stowage/), which is easier to read
// and whose cost is one call per a[...] or per batch of samples.
#include "buffer_pool.hpp"
#include "pyjson.hpp"
#include "sample_decoder.h"

#include <stowage/copy.hpp>
#include <stowage/stowage.hpp>

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace py = pybind11;
using namespace stowage_py;
using stowage::ErrorCode;
using stowage::json;

namespace {

// ---- errors -----------------------------------------------------------------------

// A node that does not exist inside an existing store: a KeyError in Python,
// where a missing file is a FileNotFoundError. The C status is NOT_FOUND for
// both, so the binding says which by where it was raised.
struct NodeMissing : stowage::Error {
  explicit NodeMissing(const stowage::Error& e) : stowage::Error(e) {}
};

// The C ABI carries no errno: an I/O error ends with strerror()'s text
// (sdk::io_fail), which is how a permission problem is told apart.
bool ends_with(const std::string& s, const char* tail) {
  size_t n = std::strlen(tail);
  return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

const char* python_error_class(const stowage::Error& e, bool node_missing) {
  const std::string what = e.what();
  switch (e.code()) {
    case ErrorCode::not_found:
      return node_missing ? "NodeNotFoundError" : "NotFoundError";
    case ErrorCode::invalid_argument:
      return "InvalidArgumentError";
    case ErrorCode::corrupt:
      return "CorruptError";
    case ErrorCode::unsupported:
      return "UnsupportedError";
    case ErrorCode::io:
      if (ends_with(what, std::strerror(EACCES)) || ends_with(what, std::strerror(EPERM)) ||
          ends_with(what, std::strerror(EROFS)))
        return "PermissionDeniedError";
      if (ends_with(what, std::strerror(ENOENT))) return "NotFoundError";
      return "StorageIOError";
    case ErrorCode::abi_mismatch:
      return "PluginError";
    default:
      return "InternalError";
  }
}

void raise_python(const stowage::Error& e, bool node_missing) {
  py::object errors = py::module_::import("stowage._errors");
  py::object cls = errors.attr(python_error_class(e, node_missing));
  py::object exc =
      cls.attr("_from_core")(py::str(e.what()), py::str(stowage::error_code_name(e.code())),
                             py::str(e.path()), py::str(e.plugin()));
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

// Runs f; a NOT_FOUND error names a missing node (KeyError) rather than a file.
template <class F>
decltype(auto) on_node(F&& f) {
  try {
    return f();
  } catch (const NodeMissing&) {
    throw;
  } catch (const stowage::Error& e) {
    if (e.code() == ErrorCode::not_found) throw NodeMissing(e);
    throw;
  }
}

// ---- registries --------------------------------------------------------------------

// One registry per plugin_path list, kept for the life of the process: a
// Store refers to its registry, and plugins are never unloaded anyway.
stowage::Registry& registry_for(const std::optional<std::vector<std::string>>& paths) {
  if (!paths || paths->empty()) return stowage::Registry::global();
  static std::mutex mutex;
  static auto* registries =
      new std::map<std::vector<std::string>, std::unique_ptr<stowage::Registry>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto& r = (*registries)[*paths];
  if (!r) {
    stowage::Registry::Options o;
    o.paths = *paths;
    r = std::make_unique<stowage::Registry>(o);
    r->set_threads(stowage::Registry::global().threads());
  }
  return *r;
}

stowage::Mode parse_mode(const std::string& mode) {
  if (mode == "r") return stowage::Mode::read;
  if (mode == "r+") return stowage::Mode::update;
  if (mode == "w") return stowage::Mode::truncate;
  if (mode == "w+" || mode == "a") return stowage::Mode::create;
  throw stowage::Error(ErrorCode::invalid_argument,
                       "mode must be 'r', 'r+', 'w' or 'w+' ('a'), not '" + mode + "'");
}

// ---- buffers -----------------------------------------------------------------------------

std::vector<uint64_t> to_u64(const std::vector<int64_t>& v, const char* what) {
  std::vector<uint64_t> out;
  for (int64_t x : v) {
    if (x < 0)
      throw stowage::Error(ErrorCode::invalid_argument,
                           std::string(what) + " holds a negative number");
    out.push_back(static_cast<uint64_t>(x));
  }
  return out;
}

// Checks that a numpy array can be the buffer of a region read or write:
// C-contiguous, of the array's dtype, with `count` elements.
void check_buffer(const py::array& a, const stowage::Array& arr, uint64_t count, bool writable) {
  py::dtype want(stowage::dtype_name(arr.dtype()) == std::string("bool")
                     ? "bool"
                     : stowage::dtype_name(arr.dtype()));
  if (!a.dtype().is(want) && !a.dtype().equal(want))
    throw stowage::Error(ErrorCode::invalid_argument,
                         "the buffer's dtype is " + std::string(py::str(a.dtype())) +
                             ", the array's " + stowage::dtype_name(arr.dtype()));
  if (!(a.flags() & py::array::c_style))
    throw stowage::Error(ErrorCode::invalid_argument, "the buffer must be C-contiguous");
  if (writable && !a.writeable())
    throw stowage::Error(ErrorCode::invalid_argument, "the buffer is read-only");
  if (static_cast<uint64_t>(a.size()) != count)
    throw stowage::Error(ErrorCode::invalid_argument, "the buffer has " + std::to_string(a.size()) +
                                                          " elements, the region " +
                                                          std::to_string(count));
}

uint64_t product(const std::vector<uint64_t>& v) {
  uint64_t n = 1;
  for (uint64_t x : v) n *= x;
  return n;
}

py::dtype numpy_dtype(stowage::DType t) {
  return py::dtype(t == stowage::DType::boolean ? std::string("bool")
                                                : std::string(stowage::dtype_name(t)));
}

// ---- convert -------------------------------------------------------------------------

// stowage.convert's keyword options -> CopyOptions, parsed by the same
// functions the tool uses (copy.hpp).
stowage::CopyOptions copy_options(const py::dict& kw) {
  stowage::CopyOptions o;
  for (auto [key, value] : kw) {
    std::string k = key.cast<std::string>();
    if (value.is_none()) continue;
    if (k == "from_" || k == "from_format")
      o.from = value.cast<std::string>();
    else if (k == "to" || k == "to_format")
      o.to = value.cast<std::string>();
    else if (k == "compression")
      o.compression = py::isinstance<py::str>(value)
                          ? stowage::parse_compression_spec(value.cast<std::string>())
                          : from_python(value);
    else if (k == "chunks")
      o.chunks = py::isinstance<py::str>(value)
                     ? stowage::parse_positive_list(value.cast<std::string>(), "chunks")
                     : to_u64(value.cast<std::vector<int64_t>>(), "chunks");
    else if (k == "shards")
      o.shards = py::isinstance<py::str>(value)
                     ? stowage::parse_positive_list(value.cast<std::string>(), "shards")
                     : to_u64(value.cast<std::vector<int64_t>>(), "shards");
    else if (k == "open_options") {
      const json given = from_python(value);
      if (!given.is_object())
        throw stowage::Error(ErrorCode::invalid_argument, "open_options must be a dict");
      for (const auto& [name, v] : given.items()) o.open_options[name] = v;
    } else if (k == "source_storage_options" || k == "destination_storage_options") {
      json& into = k[0] == 's' ? o.source_storage : o.destination_storage;
      into = value.is_none() ? json::object() : from_python(value);
      if (!into.is_object())
        throw stowage::Error(ErrorCode::invalid_argument, k + " must be a dict");
    } else if (k == "cast")
      stowage::parse_cast_spec(value.cast<std::string>(), o);
    else if (k == "cast_overflow")
      o.cast_overflow = stowage::parse_cast_overflow(value.cast<std::string>());
    else if (k == "axes")
      o.axes = py::isinstance<py::str>(value) ? stowage::parse_name_list(value.cast<std::string>())
                                              : value.cast<std::vector<std::string>>();
    else if (k == "overwrite")
      o.overwrite = value.cast<bool>();
    else if (k == "drop_metadata")
      o.drop_metadata = value.cast<bool>();
    else if (k == "create_only")
      o.create_only = value.cast<bool>();
    else if (k == "zarr_version")
      o.open_options["zarr_version"] = from_python(value);  // open_options' shorthand
    else if (k == "part") {
      auto [i, n] = value.cast<std::pair<uint64_t, uint64_t>>();
      stowage::set_part(o, i, n);
    } else
      throw stowage::Error(ErrorCode::invalid_argument,
                           "convert() got an unknown option '" + k + "'");
  }
  return o;
}

py::object convert(const std::string& source, const std::string& destination,
                   const py::dict& options, py::object progress,
                   const std::optional<std::vector<std::string>>& plugin_path) {
  stowage::CopyOptions o = copy_options(options);
  std::atomic<bool> cancel{false};
  o.cancel = &cancel;
  // The callback runs on worker threads, one call at a time; an exception
  // it raises (KeyboardInterrupt too) cancels the copy and is re-raised here.
  std::unique_ptr<py::error_already_set> callback_error;
  if (!progress.is_none()) {
    o.progress = [&](const stowage::CopyProgress& p) {
      if (cancel) return;
      py::gil_scoped_acquire gil;
      try {
        py::dict d;
        d["bytes_done"] = p.bytes_done;
        d["bytes_total"] = p.bytes_total;
        d["chunks"] = p.chunks;
        d["seconds"] = p.seconds;
        progress(d);
      } catch (py::error_already_set& e) {
        callback_error = std::make_unique<py::error_already_set>(std::move(e));
        cancel = true;
      }
    };
  }
  stowage::Registry& registry = registry_for(plugin_path);
  stowage::CopyResult r;
  try {
    py::gil_scoped_release release;
    r = stowage::copy(source, destination, o, registry);
  } catch (const stowage::Error&) {
    if (callback_error) throw std::move(*callback_error);
    throw;
  }
  if (callback_error) throw std::move(*callback_error);
  return to_python(stowage::copy_summary_json(r, source, destination));
}

}  // namespace

namespace {

// Majors [begin, end) of a sparse matrix cut into pieces, read by `threads`
// threads, each piece straight into its stretch of the caller's arrays.
// One piece per thread made the fresh numpy pages fault in on two threads
// (0.52-0.57x -> 0.69-0.95x of a read into reused buffers, before pooled
// memory); eight per thread, taken in turn, keep a thread that the shared
// machine does not schedule from holding up the call: with a static half
// each, a run under load took 1.4x the C++ single-thread read.
class SparseParts {
 public:
  SparseParts(const stowage::Sparse& s, uint64_t begin, uint64_t end, unsigned threads)
      : begin_(begin), threads_(std::max(1u, threads)) {
    const uint64_t n = end - begin,
                   pieces = std::max<uint64_t>(1, std::min<uint64_t>(8 * uint64_t(threads_), n));
    for (uint64_t k = 0; k <= pieces; ++k) bounds_.push_back(begin + n * k / pieces);
    first_.push_back(0);
    for (uint64_t k = 0; k < pieces; ++k)
      first_.push_back(first_.back() + s.count(bounds_[k], bounds_[k + 1]));
  }
  uint64_t nnz() const { return first_.back(); }

  // indptr: end-begin+1 entries; indices and values: nnz() entries.
  void read(const stowage::Sparse& s, uint64_t* indptr, uint32_t* indices, char* values) const {
    const size_t pieces = bounds_.size() - 1, esize = stowage::dtype_size(s.info().dtype);
    std::vector<std::exception_ptr> failed(pieces);
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t k; (k = next.fetch_add(1)) < pieces;) {
        try {
          const uint64_t b = bounds_[k], e = bounds_[k + 1], at = first_[k];
          std::vector<uint64_t> local(e - b + 1);
          s.read_into(b, e, first_[k + 1] - at, local.data(), indices + at, values + at * esize);
          // Each piece writes its own entries; the shared boundary is the next piece's first.
          for (uint64_t j = 0; j < e - b; ++j) indptr[b - begin_ + j] = local[j] + at;
        } catch (...) {
          failed[k] = std::current_exception();
        }
      }
    };
    std::vector<std::thread> helpers;
    for (unsigned t = 1; t < std::min<size_t>(threads_, pieces); ++t) helpers.emplace_back(work);
    work();
    for (auto& t : helpers) t.join();
    indptr[bounds_.back() - begin_] = nnz();
    for (const auto& e : failed)
      if (e) std::rethrow_exception(e);
  }

 private:
  uint64_t begin_;
  unsigned threads_;
  std::vector<uint64_t> bounds_,
      first_;  // piece k: majors [bounds_[k], bounds_[k+1]), values from first_[k]
};

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "stowage's C++ library (libstowage) as seen from Python; use the stowage package.";

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const NodeMissing& e) {
      raise_python(e, true);
    } catch (const stowage::Error& e) {
      raise_python(e, false);
    }
  });

  m.def("version", &stowage::version);
  m.def("abi", [] { return STOWAGE_PLUGIN_ABI; });
  m.def("set_threads", [](unsigned n) { stowage::Registry::global().set_threads(n); });
  m.def("threads", [] { return stowage::Registry::global().threads(); });
  m.def("_pool_idle_bytes", [] { return BufferPool::instance().idle_bytes(); });
  m.def("_empty", [](const std::vector<py::ssize_t>& shape, const py::dtype& dtype) {
    return BufferPool::instance().empty(dtype, shape);
  });
  m.def("split_dataset_spec", &stowage::split_dataset_spec);
  m.def("parse_compression_spec",
        [](const std::string& s) { return to_python(stowage::parse_compression_spec(s)); });

  m.def(
      "plugins",
      [](const std::optional<std::vector<std::string>>& plugin_path, bool load) {
        stowage::Registry& registry = registry_for(plugin_path);
        std::vector<stowage::PluginInfo> plugins;
        {
          py::gil_scoped_release release;
          plugins = registry.plugins(load);
        }
        stowage::sort_plugins(plugins);
        return to_python(stowage::plugin_list_json(registry, plugins));
      },
      py::arg("plugin_path") = py::none(), py::arg("load") = true);
  m.def(
      "plugin_detail",
      [](const std::string& id,
         const std::optional<std::vector<std::string>>& plugin_path) -> py::object {
        stowage::Registry& registry = registry_for(plugin_path);
        std::vector<stowage::PluginInfo> plugins = registry.plugins(true);
        for (const auto& p : plugins)
          if (p.id == id && p.state != stowage::PluginState::shadowed)
            return to_python(stowage::plugin_info_json(p, true));
        return py::none();
      },
      py::arg("id"), py::arg("plugin_path") = py::none());
  m.def("convert", &convert, py::arg("source"), py::arg("destination"), py::arg("options"),
        py::arg("progress") = py::none(), py::arg("plugin_path") = py::none());

  // Registered before Store's methods, whose signatures name them: help() and
  // the generated _core.pyi (scripts/python-stubs) then read
  // stowage._core.Array, not the C++ stowage::Array.
  py::class_<stowage::Array> array_class(m, "Array");
  py::class_<stowage::Sparse> sparse_class(m, "Sparse");
  py::class_<stowage::Records> records_class(m, "Records");

  py::class_<stowage::Store>(m, "Store")
      .def_static(
          "open",
          [](const std::string& path, const std::string& mode,
             const std::optional<std::string>& format, py::object options,
             const std::optional<std::vector<std::string>>& plugin_path) {
            stowage::Mode md = parse_mode(mode);
            json opts = options.is_none() ? json::object() : from_python(options);
            stowage::Registry& registry = registry_for(plugin_path);
            py::gil_scoped_release release;
            return stowage::Store::open(path, md, format.value_or(""), opts, registry);
          },
          py::arg("path"), py::arg("mode") = "r", py::arg("format") = py::none(),
          py::arg("options") = py::none(), py::arg("plugin_path") = py::none())
      .def_property_readonly("path", &stowage::Store::path)
      .def_property_readonly("format", &stowage::Store::format)
      .def("list", [](const stowage::Store& s,
                      const std::string& node) { return on_node([&] { return s.list(node); }); })
      .def("describe",
           [](const stowage::Store& s, const std::string& node) {
             return to_python(on_node([&] { return s.describe_json(node); }));
           })
      .def("create", [](stowage::Store& s, const std::string& node,
                        py::object desc) { s.create(node, from_python(desc)); })
      .def("set_attributes",
           [](stowage::Store& s, const std::string& node, py::object attrs) {
             on_node([&] { s.set_attributes(node, from_python(attrs)); });
           })
      .def("remove",
           [](stowage::Store& s, const std::string& node) { on_node([&] { s.remove(node); }); })
      .def("read_strings",
           [](const stowage::Store& s, const std::string& node, uint64_t begin, uint64_t end) {
             return on_node([&] { return s.read_strings(node, begin, end); });
           })
      .def("write_strings",
           [](stowage::Store& s, const std::string& node, const std::vector<std::string>& values) {
             s.write_strings(node, values);
           })
      .def(
          "command",
          [](stowage::Store& s, const std::string& node, const std::string& name, py::object args) {
            return to_python(
                s.command(node, name, args.is_none() ? json::object() : from_python(args)));
          })
      .def_static(
          "open_staged",
          [](const std::string& path, const std::string& staging,
             const std::optional<std::string>& format, py::object options,
             const std::optional<std::vector<std::string>>& plugin_path) {
            json opts = options.is_none() ? json::object() : from_python(options);
            stowage::Registry& registry = registry_for(plugin_path);
            py::gil_scoped_release release;
            return stowage::Store::open_staged(path, staging, format.value_or(""), opts, registry);
          },
          py::arg("path"), py::arg("staging"), py::arg("format") = py::none(),
          py::arg("options") = py::none(), py::arg("plugin_path") = py::none())
      .def("close",
           [](stowage::Store& s) {
             py::gil_scoped_release release;
             s.close();
           })
      .def("discard",
           [](stowage::Store& s) {
             py::gil_scoped_release release;
             s.discard();
           })
      .def_property_readonly("closed", &stowage::Store::closed)
      .def_property_readonly("staging_location", &stowage::Store::staging_location)
      .def("publish_held_metadata", &stowage::Store::publish_held_metadata,
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("shared_writes", &stowage::Store::shared_writes)
      .def("array", [](const stowage::Store& s,
                       const std::string& node) { return on_node([&] { return s.array(node); }); })
      .def("sparse",
           [](const stowage::Store& s, const std::string& node) {
             return on_node([&] { return s.sparse(node); });
           })
      .def("records", [](const stowage::Store& s, const std::string& node) {
        return on_node([&] { return s.records(node); });
      });

  array_class
      .def_property_readonly("dtype",
                             [](const stowage::Array& a) { return numpy_dtype(a.dtype()); })
      .def("read",
           [](const stowage::Array& a, const std::vector<int64_t>& offset,
              const std::vector<int64_t>& shape, py::array out) {
             std::vector<uint64_t> off = to_u64(offset, "offset"), shp = to_u64(shape, "shape");
             check_buffer(out, a, product(shp), true);
             void* data = out.mutable_data();
             py::gil_scoped_release release;
             a.read(off, shp, data);
           })
      .def("write",
           [](const stowage::Array& a, const std::vector<int64_t>& offset,
              const std::vector<int64_t>& shape, py::array in) {
             std::vector<uint64_t> off = to_u64(offset, "offset"), shp = to_u64(shape, "shape");
             check_buffer(in, a, product(shp), false);
             const void* data = in.data();
             py::gil_scoped_release release;
             a.write(off, shp, data);
           })
      .def("chunk_exists",
           [](const stowage::Array& a, const std::vector<int64_t>& index) {
             py::gil_scoped_release release;
             return a.chunk_exists(to_u64(index, "chunk index"));
           })
      .def("chunk_grid", &stowage::Array::chunk_grid);

  sparse_class
      .def("read",
           [](const stowage::Sparse& s, uint64_t begin, uint64_t end) {
             // Straight into new numpy arrays, nothing zero-filled first
             // (SparseSlice's vectors were: a fresh 15 M-value slice cost 4x
             // its decoding here), in pooled memory (buffer_pool.hpp). scipy
             // takes int32/int64 indices: the uint64 indptr and uint32
             // indices are written into int64/int32 arrays (to_scipy checks
             // the sizes).
             const SparseParts parts(s, begin, end, stowage::Registry::global().threads());
             BufferPool& pool = BufferPool::instance();
             py::array indptr = pool.array(py::dtype::of<int64_t>(), end - begin + 1);
             py::array indices = pool.array(py::dtype::of<int32_t>(), parts.nnz());
             py::array values = pool.array(numpy_dtype(s.info().dtype), parts.nnz());
             {
               py::gil_scoped_release release;
               parts.read(s, reinterpret_cast<uint64_t*>(indptr.mutable_data()),
                          reinterpret_cast<uint32_t*>(indices.mutable_data()),
                          static_cast<char*>(values.mutable_data()));
             }
             return py::make_tuple(indptr, indices, values);
           })
      .def("read_dense",
           [](const stowage::Sparse& s, uint64_t row0, uint64_t col0, uint64_t rows, uint64_t cols,
              py::array out) {
             if (!(out.flags() & py::array::c_style) || !out.writeable() ||
                 static_cast<uint64_t>(out.nbytes()) !=
                     rows * cols * stowage::dtype_size(s.info().dtype))
               throw stowage::Error(
                   ErrorCode::invalid_argument,
                   "read_dense needs a writable C-contiguous buffer of the region's size");
             void* data = out.mutable_data();
             py::gil_scoped_release release;
             s.read_dense(row0, col0, rows, cols, data);
           })
      .def("append", [](const stowage::Sparse& s,
                        py::array_t<uint64_t, py::array::c_style | py::array::forcecast> indptr,
                        py::array_t<uint32_t, py::array::c_style | py::array::forcecast> indices,
                        py::array values, uint64_t n_major) {
        stowage::SparseSlice slice;
        slice.indptr.assign(indptr.data(), indptr.data() + indptr.size());
        slice.indices.assign(indices.data(), indices.data() + indices.size());
        const auto* v = static_cast<const uint8_t*>(values.data());
        slice.values.assign(v, v + values.nbytes());
        py::gil_scoped_release release;
        s.append(slice, n_major);
      });

  records_class.def("__len__", &stowage::Records::size)
      .def("read", [](const stowage::Records& r, uint64_t i) { return py::bytes(r.read(i)); })
      .def("key", &stowage::Records::key)
      .def("find", &stowage::Records::find)
      .def("contains", py::overload_cast<std::string_view>(&stowage::Records::contains, py::const_))
      .def("read_range",
           [](const stowage::Records& r, uint64_t begin, uint64_t end, py::object decoder) {
             // decoder: None (each sample's bytes) or a decoder module's
             // capsule (sample_decoder.h), which knows the record format.
             const stowage_py_sample_decoder* table = nullptr;
             if (!decoder.is_none()) {
               table = static_cast<const stowage_py_sample_decoder*>(
                   PyCapsule_GetPointer(decoder.ptr(), STOWAGE_PY_SAMPLE_DECODER));
               if (!table) throw py::error_already_set();
               if (table->version != STOWAGE_PY_SAMPLE_DECODER_VERSION)
                 throw stowage::Error(ErrorCode::abi_mismatch,
                                      "the sample decoder is version " +
                                          std::to_string(table->version) + ", not " +
                                          std::to_string(STOWAGE_PY_SAMPLE_DECODER_VERSION));
             }
             // One decoder for the batch: its buffers are reused.
             std::unique_ptr<void, void (*)(void*)> batch(nullptr, +[](void*) {});
             if (table) {
               batch = std::unique_ptr<void, void (*)(void*)>(table->open(), table->close);
               if (!batch) throw py::error_already_set();
             }
             // One plugin call for the whole batch; each sample becomes its
             // Python object while the plugin's buffer is still valid.
             py::list out;
             std::exception_ptr failure;
             uint64_t index = begin;
             r.read_range(begin, end, [&](std::string_view s) {
               if (failure) return;
               try {
                 if (!table) {
                   out.append(py::bytes(s.data(), s.size()));
                 } else {
                   const char* corrupt = nullptr;
                   PyObject* v = table->decode(batch.get(), s.data(), s.size(), &corrupt);
                   if (corrupt)
                     throw stowage::Error(ErrorCode::corrupt,
                                          "sample " + std::to_string(index) + ": " + corrupt);
                   if (!v) throw py::error_already_set();
                   out.append(py::reinterpret_steal<py::object>(v));
                 }
               } catch (...) {
                 failure = std::current_exception();
               }
               ++index;
             });
             if (failure) std::rethrow_exception(failure);
             return out;
           })
      .def("append", [](const stowage::Records& r, const std::vector<std::string>& samples) {
        py::gil_scoped_release release;
        r.append(samples);
      });
}
