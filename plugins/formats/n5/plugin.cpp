// The N5 format plugin's descriptor; the rest is in the files README.md lists.
#include "store.hpp"

static const char* const kN5Extensions[] = {".n5", nullptr};
static const char* const kN5Metadata[] = {"attributes.json", nullptr};

STOWAGE_DEFINE_FORMAT_PLUGIN_WITH_METADATA(
    n5::N5Store, "n5", "1.0.0",
    "N5 (spec 4.0.0) containers: groups, numeric/string/object datasets in any codec, C-order view",
    R"({"write_empty_chunks": {"type": "boolean", "default": true},)"
    R"( "durable": {"type": "boolean", "default": false}})",
    STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE | STOWAGE_CAP_DENSE |
        STOWAGE_CAP_STRINGS | STOWAGE_CAP_RECORDS | STOWAGE_CAP_GROUPS | STOWAGE_CAP_MOVE_NODES |
        STOWAGE_CAP_SHARED_WRITES,
    kN5Extensions, kN5Metadata)
