// Format "daf": DataAxesFormats.jl's FilesDaf directory format, versions
// [1,0] and [1,1], read and write. The mapping is described in README.md.
#include "daf_store.hpp"

static const char* const kDafMetadata[] = {"daf.json", nullptr};

STOWAGE_DEFINE_FORMAT_PLUGIN_WITH_METADATA(
    daf::DafStore, "daf", "1.0.0",
    "DataAxesFormats.jl FilesDaf directories (format [1,0] and [1,1]): scalars, axes, vectors, matrices",
    R"({"version": {"type": "array", "default": [1, 0], "enum": [[1, 0], [1, 1]],)"
    R"( "description": "format written to a new repository; [1,1] keeps metadata.json in sync"},)"
    R"( "relayout": {"type": "boolean", "default": false,)"
    R"( "description": "also write the transpose of each matrix written, like Julia's set_matrix!"}})",
    STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE | STOWAGE_CAP_PARTIAL |
        STOWAGE_CAP_DENSE | STOWAGE_CAP_SPARSE | STOWAGE_CAP_STRINGS | STOWAGE_CAP_GROUPS |
        STOWAGE_CAP_MERGES_AT_CLOSE,
    nullptr, kDafMetadata)
