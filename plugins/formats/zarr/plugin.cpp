// The Zarr format plugin's descriptor. The store is in store.cpp, chunks in
// chunk_io.cpp, .zarray in metadata.cpp, numcodecs' compressors in
// compressors.cpp.
#include "store.hpp"

static const char* const kZarrExtensions[] = {".zarr", nullptr};

STOWAGE_DEFINE_FORMAT_PLUGIN(
    zarr::ZarrStore, "zarr", "0.1.0",
    "Zarr v2 stores: groups, numeric and bool arrays in either byte order and C or F order, "
    "numcodecs' blosc, zlib, gzip, bz2, lzma, zstd and lz4 compressors",
    "{}",
    STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE | STOWAGE_CAP_DENSE | STOWAGE_CAP_GROUPS |
        STOWAGE_CAP_MOVE_NODES,
    kZarrExtensions)
