// The interface by which stowage._core turns a record's bytes into a Python
// object without knowing the record format: a decoder module (stowage._records
// for datadings' msgpack) exports this table in a PyCapsule named
// STOWAGE_PY_SAMPLE_DECODER, and Records.read_range calls it on each sample
// while the plugin's buffer is still valid (no bytes object in between).
// Every call is made with the GIL held.
#ifndef STOWAGE_PY_SAMPLE_DECODER_H
#define STOWAGE_PY_SAMPLE_DECODER_H

#include <Python.h>

#include <stddef.h>
#include <stdint.h>

#define STOWAGE_PY_SAMPLE_DECODER "stowage.sample_decoder"
#define STOWAGE_PY_SAMPLE_DECODER_VERSION 1u

typedef struct stowage_py_sample_decoder {
  uint32_t version;  // STOWAGE_PY_SAMPLE_DECODER_VERSION
  // A decoder for one batch (it may keep buffers across samples), or NULL
  // with a Python error set.
  void* (*open)(void);
  // The sample as a new reference. NULL: if *corrupt is set, the bytes are
  // no valid sample and it says why (valid until the next call on this
  // decoder); otherwise a Python error is set.
  PyObject* (*decode)(void* decoder, const char* data, size_t size, const char** corrupt);
  void (*close)(void* decoder);
} stowage_py_sample_decoder;

#endif
