// The Zarr format plugin's descriptor. The store is in store.cpp (v3 parts in
// store_v3.cpp), chunks in chunk_io.cpp (v3 and shards: chunk_io_v3.cpp,
// shard.cpp), .zarray in metadata.cpp, zarr.json in metadata_v3.cpp,
// codecs found by their Zarr names through the host in codec_names.cpp.
#include "store.hpp"

static const char* const kZarrExtensions[] = {".zarr", nullptr};
// A node's attributes before the file that makes it one; the consolidated
// .zmetadata, which names every node, last.
static const char* const kZarrMetadata[] = {".zattrs",   ".zarray",    ".zgroup",
                                            "zarr.json", ".zmetadata", nullptr};

STOWAGE_DEFINE_FORMAT_PLUGIN_WITH_METADATA(
    zarr::ZarrStore, "zarr", "0.2.0",
    "Zarr v2 and v3 stores: groups, numeric and bool arrays in either byte order and C or F order; "
    "v2 with the numcodecs compressors and v3 with the codecs the codec plugins declare (blosc, "
    "zlib, gzip, bz2, lzma, zstd, lz4 and numcodecs.<id> built in), v3's bytes, transpose (C and F order; others through the transpose codec), crc32c "
    "and sharding_indexed (partial reads, whole-shard writes); string arrays (v2 \"|O\" and v3 "
    "\"string\", vlen-utf8) as strings nodes",
    R"({"zarr_version": {"type": "integer", "default": 3, "min": 2, "max": 3, "on_create": true,)"
    R"( "description": "the Zarr version of a store this open creates; an existing store keeps its own"},)"
    R"( "consolidated": {"type": "boolean", "default": null,)"
    R"( "description": "v2: read .zmetadata unless false; true keeps it up to date when writing"}})",
    STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE | STOWAGE_CAP_DENSE |
        STOWAGE_CAP_GROUPS | STOWAGE_CAP_MOVE_NODES | STOWAGE_CAP_SHARED_WRITES |
        STOWAGE_CAP_SHARDS | STOWAGE_CAP_STRINGS,
    kZarrExtensions, kZarrMetadata)
