// stowage._records: datadings' msgpack samples decoded into Python objects.
// A module apart from stowage._core, so that _core depends on no format: it
// builds where msgpack-cxx is, and _core's Records.read_range reaches the
// decoder through the capsule `decoder` (sample_decoder.h), per sample,
// while the plugin's buffer is valid. Like msgpack_sample.hpp it needs the
// SDK headers only and links no library of ours.
#include "msgpack_decoder.hpp"
#include "sample_decoder.h"

#include <pybind11/pybind11.h>

#include <new>
#include <string>

namespace py = pybind11;
using stowage_py::PyDecoder;

namespace {

// A batch's decoder and the text of its last refusal (*corrupt points into it).
struct Batch {
  PyDecoder decoder;
  std::string why;
};

void* open_batch() {
  try {
    return new Batch();
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
    return nullptr;
  }
}

PyObject* decode_in_batch(void* batch, const char* data, size_t size, const char** corrupt) {
  auto* b = static_cast<Batch*>(batch);
  *corrupt = nullptr;
  try {
    return b->decoder.decode(std::string_view(data, size)).release().ptr();
  } catch (const stowage::sdk::Error& e) {
    b->why = e.what();
    *corrupt = b->why.c_str();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

void close_batch(void* batch) { delete static_cast<Batch*>(batch); }

const stowage_py_sample_decoder msgpack_decoder = {STOWAGE_PY_SAMPLE_DECODER_VERSION, open_batch,
                                                   decode_in_batch, close_batch};

}  // namespace

PYBIND11_MODULE(_records, m) {
  m.doc() =
      "Decodes datadings samples (msgpack, msgpack-numpy) for stowage.Records; use the stowage package.";
  stowage_py::init_sample_decoder();

  // A refused sample is stowage's CorruptError, as _core raises it.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const stowage::sdk::Error& e) {
      const bool corrupt = e.code() == STOWAGE_CORRUPT;
      py::object cls =
          py::module_::import("stowage._errors").attr(corrupt ? "CorruptError" : "InternalError");
      py::object exc = cls.attr("_from_core")(
          py::str(e.what()), py::str(corrupt ? "corrupt" : "internal"), py::str(""), py::str(""));
      PyErr_SetObject(cls.ptr(), exc.ptr());
    }
  });

  m.def("decode_sample",
        [](py::bytes b) { return stowage_py::decode_sample(std::string_view(b)); });
  // const_cast: a capsule holds a void*; _core only reads the table.
  m.attr("decoder") = py::capsule(const_cast<stowage_py_sample_decoder*>(&msgpack_decoder),
                                  STOWAGE_PY_SAMPLE_DECODER);
}
