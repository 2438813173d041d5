/*
 * stowage/plugin.h -- the C ABI between stowage and its plugins.
 *
 * A plugin is a shared library named stowage_codec_<id>.<so|dylib|dll>,
 * stowage_format_<id>.<...> or stowage_storage_<scheme>.<...> (a storage
 * backend, stowage/storage.h) that exports exactly one symbol:
 *
 *     const stowage_plugin *stowage_plugin_entry(const stowage_host *host);
 *
 * Rules that keep plugins built with another compiler, standard library or
 * flags loadable:
 *   - only fixed-width integers, size_t, UTF-8 (pointer, length) pairs, opaque
 *     handles and C function pointers cross this boundary;
 *   - nothing allocated on one side is freed on the other: output goes into
 *     buffers the caller owns, or through a stowage_sink the caller provides;
 *   - no exception ever crosses: every function returns a stowage_status and
 *     fills a stowage_error on failure;
 *   - JSON crosses as text, records (datadings samples) as msgpack bytes.
 *
 * Growing the ABI: fields are only ever appended to a struct, and every
 * struct starts with its own size, so a reader uses a field only if the
 * writer's struct is large enough to contain it. Each table has the size of
 * its first version (STOWAGE_CODEC_VTABLE_V1_SIZE,
 * STOWAGE_FORMAT_VTABLE_V1_SIZE, STOWAGE_HOST_V1_SIZE): the host accepts any
 * struct_size at least that large and reads a later field only when
 * struct_size covers it; a plugin does the same with the host table.
 * Changing the meaning of an existing field bumps STOWAGE_PLUGIN_ABI, and
 * the host refuses a plugin built for another ABI with the reason "built for
 * ABI 1, this host speaks 2".
 *
 * ABI 2 (from 1): codecs are an immutable configuration plus per-thread
 * contexts the host pools; the host table is one per registry and is passed
 * to codec create() and format open(); format plugins use codecs through the
 * host's codec_* functions and do all I/O through the host's storage layer;
 * a format's data calls go to node handles (open_node), one table per node
 * kind, instead of a path on every call.
 *
 * C authors fill the structs by hand; C++ authors use stowage/plugin.hpp.
 */
#ifndef STOWAGE_PLUGIN_H
#define STOWAGE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include <stowage/version.h> /* STOWAGE_SDK_VERSION */

#ifdef __cplusplus
extern "C" {
#endif

/* The plugin ABI: the one place it is written (meson.build reads it from here
 * for the plugin directory, plugins-<ABI>, and pkg-config's plugin_abi). */
#define STOWAGE_PLUGIN_ABI 2

#if defined(_WIN32)
#define STOWAGE_PLUGIN_EXPORT __declspec(dllexport)
#else
#define STOWAGE_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ---- status codes ------------------------------------------------------ */

typedef enum stowage_status {
  STOWAGE_OK = 0,
  STOWAGE_NOT_FOUND = 1,        /* no such node, key, plugin or file */
  STOWAGE_MISSING = 2,          /* a chunk that was never written: a state, not an error */
  STOWAGE_INVALID_ARGUMENT = 3, /* the caller asked for something impossible */
  STOWAGE_CORRUPT = 4,          /* the data on disk or in the buffer is malformed */
  STOWAGE_UNSUPPORTED = 5,      /* valid, but this plugin does not do it */
  STOWAGE_IO = 6,               /* the operating system said no */
  STOWAGE_ABI_MISMATCH = 7,     /* plugin and host disagree on the ABI */
  STOWAGE_INTERNAL = 8          /* a bug; the message says where */
} stowage_status;

#define STOWAGE_ERROR_MESSAGE_SIZE 1024

/* Filled by the callee when it returns anything but STOWAGE_OK (and, for
 * STOWAGE_MISSING, left untouched). The message is NUL-terminated UTF-8 and
 * names the file and what is wrong with it. */
typedef struct stowage_error {
  int32_t code;
  char message[STOWAGE_ERROR_MESSAGE_SIZE];
} stowage_error;

/* ---- sinks: how variable-sized output crosses without allocations ------ */

/* The callee calls write() as often as it likes. Whether each call is a
 * fragment of one byte stream (JSON text) or one whole item (a string of a
 * string array, a record) is stated by the function taking the sink.
 * write() returns 0 on success and nonzero when the caller cannot take the
 * bytes; the callee then stops and returns STOWAGE_INTERNAL. */
typedef struct stowage_sink {
  void* ctx;
  int (*write)(void* ctx, const void* data, size_t size);
} stowage_sink;

/* ---- storage backends (kind "storage"): stowage/storage.h ----------------- */

#ifdef __cplusplus
}
#endif
#include <stowage/storage.h>
#ifdef __cplusplus
extern "C" {
#endif

/* ---- codecs (kinds "codec.bytes" and "codec.array") -------------------- */

struct stowage_host;

/* zstd's model: a configuration is immutable once created and is used by
 * many threads at once; all scratch state (compression contexts, deflate
 * streams) lives in a context, which one thread uses at a time. The host
 * keeps a small pool of contexts per configuration, so a plugin never needs
 * thread-local state. */
typedef struct stowage_codec_config_state* stowage_codec_config;
typedef struct stowage_codec_context_state* stowage_codec_context;

typedef struct stowage_codec_vtable {
  uint32_t struct_size;
  /* Parses and validates the codec's JSON config (an N5 "compression"
   * object) into an immutable configuration, and streams its canonical JSON
   * (defaults filled, keys sorted) into `canonical` as one byte stream.
   * Unknown keys are kept and ignored, out-of-range values are
   * INVALID_ARGUMENT naming the key and range. `host` is the table of the
   * registry creating it, valid as long as the configuration lives (for
   * log()); it is the same table the plugin's entry point received. */
  int (*create)(const struct stowage_host* host, const char* config_json, size_t config_size,
                stowage_codec_config* out, stowage_sink* canonical, stowage_error* err);
  /* Frees a configuration after all its contexts are destroyed. */
  void (*destroy)(stowage_codec_config config);
  /* A context for one thread at a time. NULL (the function, or *out) means
   * the codec needs none, and encode/decode then receive NULL. A context
   * stays usable after a call on it failed (the host reuses it). */
  int (*context_create)(stowage_codec_config config, stowage_codec_context* out,
                        stowage_error* err);
  void (*context_destroy)(stowage_codec_context context);
  /* Worst-case encoded size of `size` input bytes (UINT64_MAX: too large).
   * Depends on the configuration alone, so it takes no context. */
  uint64_t (*bound)(stowage_codec_config config, uint64_t size);
  /* Encodes in[0..in_size) into out[0..out_capacity); out_capacity >=
   * bound(in_size) always suffices. `context` is one of this
   * configuration's contexts, used by no other thread during the call. */
  int (*encode)(stowage_codec_config config, stowage_codec_context context, const void* in,
                size_t in_size, void* out, size_t out_capacity, size_t* written,
                stowage_error* err);
  /* Decodes into out[0..out_capacity). The caller knows the decoded size
   * and passes it as the capacity; output never runs past it. A payload
   * that decodes to more than out_capacity, is truncated or is corrupt is
   * STOWAGE_CORRUPT. *written is the number of bytes produced. */
  int (*decode)(stowage_codec_config config, stowage_codec_context context, const void* in,
                size_t in_size, void* out, size_t out_capacity, size_t* written,
                stowage_error* err);

  /* -- fields added later go here; the host reads them only when
   *    struct_size covers them (see STOWAGE_CODEC_VTABLE_V1_SIZE). -- */

  /* The codec's names in other formats' codec registries ("dialects"), so
   * a format asks the host (codec_resolve, codec_export) instead of keeping
   * a table. All three are optional; a codec that declares no names (NULL)
   * gets the default rule: its numcodecs id is its plugin id, its zarr3
   * names its id and "numcodecs.<id>", and configurations pass through
   * unchanged but for the name key ("id" / "name" + "configuration") and
   * "type". Dialects:
   *   "numcodecs": a Zarr v2 compressor's "id" (zarr-python 3 writes these
   *                into v3 as "numcodecs.<id>" with numcodecs' keys);
   *   "zarr3":     a Zarr v3 codec's "name" with its "configuration".
   * N5 needs none: its "type" is the plugin id or an alias.
   * `names`: JSON text {"numcodecs": ["zlib", "gzip"], "zarr3": ["gzip"]},
   * the names this codec answers to in each dialect (the first is the one
   * it writes). A codec declaring names has no default rule in any
   * dialect; one with no "zarr3" names is written into v3 as
   * "numcodecs.<its numcodecs id>". */
  const char* names;
  /* A dialect's entry as written (numcodecs: {"id": name, ...}; zarr3:
   * {"name": name, "configuration": {...}}) into this codec's own JSON
   * config, the one create() takes, with "type". `item_size` is the
   * array's element size, for what the dialect leaves to the array (blosc's
   * typesize). A bad key is CORRUPT naming it; a valid entry this codec
   * cannot read UNSUPPORTED. NULL: the default rule's pass-through. */
  int (*import_config)(const char* dialect, size_t dialect_size, const char* name, size_t name_size,
                       const char* entry_json, size_t entry_size, uint64_t item_size,
                       stowage_sink* config, stowage_error* err);
  /* A config of this codec (canonical, from create()) into the dialect's
   * entry, name included, for elements of `item_size` bytes (0: unknown).
   * UNSUPPORTED when the dialect has no counterpart (an lz4 frame in
   * numcodecs). NULL: the default rule's pass-through. */
  int (*export_config)(const char* config_json, size_t config_size, const char* dialect,
                       size_t dialect_size, uint64_t item_size, stowage_sink* entry,
                       stowage_error* err);

  /* Array -> array codecs (descriptor kind STOWAGE_KIND_ARRAY_CODEC) only,
   * which set this and leave create() NULL: an element-wise transform of a
   * chunk that must know its elements (numcodecs' delta, shuffle, astype;
   * Zarr v3's array -> array codecs). `chunk_json` is the chunk it is
   * applied to, {"dtype": a numpy typestr ("<i4", ">f8", "|b1") in the
   * chunk's byte order, "shape": [...] (C order)}; `encoded` receives the
   * chunk it encodes into in the same form (delta's "astype" changes the
   * dtype, packbits the shape). A configuration serves chunks of that spec
   * only: bound(n) is the encoded chunk's size for n = the decoded chunk's,
   * encode takes whole decoded chunks and decode fills whole ones. Errors,
   * canonical config and contexts are as for create(). */
  int (*create_array)(const struct stowage_host* host, const char* config_json, size_t config_size,
                      const char* chunk_json, size_t chunk_size, stowage_codec_config* out,
                      stowage_sink* canonical, stowage_sink* encoded, stowage_error* err);
} stowage_codec_vtable;

/* The size of the first codec vtable of ABI 2 (up to `decode`): the least a
 * plugin may declare. */
#define STOWAGE_CODEC_VTABLE_V1_SIZE (offsetof(stowage_codec_vtable, decode) + sizeof(void*))

/* ---- formats (kind "format") ------------------------------------------- */

typedef struct stowage_store_state* stowage_store_handle;
typedef struct stowage_node_state* stowage_node_handle;
typedef struct stowage_chunk_lock_state* stowage_chunk_lock;

/* Open modes, with Julia's Daf meaning. */
typedef enum stowage_open_mode {
  STOWAGE_MODE_READ = 0,    /* "r":  existing, read only */
  STOWAGE_MODE_UPDATE = 1,  /* "r+": existing, read and write */
  STOWAGE_MODE_CREATE = 2,  /* "w+": create if absent, else read and write */
  STOWAGE_MODE_TRUNCATE = 3 /* "w":  create, replacing what was there */
} stowage_open_mode;

/* What a node is; each kind but a group has a table of its own. */
typedef enum stowage_node_kind {
  STOWAGE_NODE_GROUP = 0,
  STOWAGE_NODE_ARRAY = 1,   /* stowage_array_vtable */
  STOWAGE_NODE_SPARSE = 2,  /* stowage_sparse_vtable */
  STOWAGE_NODE_STRINGS = 3, /* stowage_strings_vtable */
  STOWAGE_NODE_RECORDS = 4  /* stowage_records_vtable */
} stowage_node_kind;

/*
 * Nodes are addressed by '/'-separated paths relative to the store's root;
 * "" is the root. A plugin refuses paths with "..", "." or empty components,
 * and absolute paths, with INVALID_ARGUMENT.
 *
 * describe() streams one JSON object:
 *   every node:   "kind": "group" | "array" | "sparse" | "strings" | "records",
 *                 "attributes": { ... user attributes, preserved exactly ... }
 *   "array":      "dtype": "bool"|"int8".."int64"|"uint8".."uint64"|"float32"|"float64"|
 *                 "float16"|"complex64"|"complex128" (complex: real part first),
 *                 "shape": [..] and "chunks": [..] in C order (slowest first),
 *                 "byte_order": "little"|"big"   (of the bytes read_chunk yields),
 *                 "order": "C"|"F"               (element order inside a chunk),
 *                 "codec": {...} or null, "fill_value": number (default 0),
 *                 "NaN", "Infinity" or "-Infinity"; complex: [re, im] of those
 *   "sparse":     "dtype", "shape": [rows, cols], "layout": "csc"|"csr",
 *                 "nnz": n  (major axis: columns for csc, rows for csr)
 *   "strings":    "shape": [n]
 *   "records":    "count": n
 *   optional on arrays/sparse/strings: "dims": [{"name": "gene",
 *                 "labels": "<path of a strings node>" or null}, ...]
 *                 A labels path may be hidden (not returned by list()).
 *   optional on the root (""): "store": what this open store writes, for
 *                 a converter to ask instead of knowing format ids:
 *                 "shards": true, or why this store of a STOWAGE_CAP_SHARDS
 *                 format takes none (a Zarr v2 store); "multiscales": {"convention":
 *                 "ome-ngff", "version": "0.5"} (or "n5-viewer"), the
 *                 multiscale metadata its groups' attributes hold.
 *
 * Node handles. The host opens a node once (open_node) and makes every data
 * call on the handle, through the table of the node's kind, so a plugin
 * parses a node's metadata once per handle instead of looking a path up on
 * every chunk. A handle keeps what it parsed: a node changed through another
 * handle (create over it, remove) is seen by handles opened after the
 * change. The host closes every handle (close_node) before it closes the
 * store.
 *
 * Threading: the host calls describe/list/open_node/close_node and the
 * tables' read functions concurrently from many threads, and write_chunk
 * concurrently for distinct chunks. create, set_attributes, remove,
 * write_strings, move_node, the tables' append functions and close are never
 * called concurrently with anything else on the same store.
 */

/* -- dense arrays: chunk primitives; the host does region I/O -- */
typedef struct stowage_array_vtable {
  uint32_t struct_size;
  /* Reads chunk `chunk_index` (ndim entries, C order) into out: the chunk's
   * elements in the declared byte_order and order. *chunk_shape (ndim
   * entries) receives the stored chunk's shape, which may be smaller than
   * "chunks" (cropped edge chunks) or larger than the array's remaining
   * extent (padded edge chunks); the host clips. Returns STOWAGE_MISSING
   * for a chunk that was never written. */
  int (*read_chunk)(stowage_node_handle node, const uint64_t* chunk_index, void* out,
                    size_t out_capacity, uint64_t* chunk_shape, stowage_error* err);
  /* Writes a chunk whose shape (clipped to the array) is chunk_shape, with
   * elements in the declared byte_order and order. NULL: read only. */
  int (*write_chunk)(stowage_node_handle node, const uint64_t* chunk_index, const void* in,
                     size_t in_size, const uint64_t* chunk_shape, stowage_error* err);
  /* *exists = 1 if the chunk is stored, 0 if it was never written (it reads
   * as the fill value). Looks, never decodes: a stat, an index entry. */
  int (*chunk_exists)(stowage_node_handle node, const uint64_t* chunk_index, int32_t* exists,
                      stowage_error* err);
  /* -- fields added later go here (see STOWAGE_ARRAY_VTABLE_V1_SIZE) -- */

  /* Writers taking turns where a region write covers a chunk in part: the
   * host calls lock_chunk before it reads the chunk it merges its part
   * into, writes it (write_chunk), and calls unlock_chunk. In between no
   * other writer (thread, handle or process) changes the storage holding
   * that chunk: its file, or the shard holding it when the description
   * has "shards" (the host then locks once for all the chunks of a shard
   * it writes in part). unlock_chunk publishes what was written under the
   * lock (a shard, merged with what is stored) and then lets go; the lock
   * is released even when it fails. *out may be NULL (nothing to hold). */
  int (*lock_chunk)(stowage_node_handle node, const uint64_t* chunk_index, stowage_chunk_lock* out,
                    stowage_error* err);
  int (*unlock_chunk)(stowage_node_handle node, stowage_chunk_lock lock, stowage_error* err);
  /* Publishes whatever write_chunk left pending on this node (a shard of
   * which only some chunks were written), each merged with what is stored
   * under its lock. The host calls it before a region write returns: a
   * write that returns is published. */
  int (*flush)(stowage_node_handle node, stowage_error* err);
  /* Reads chunk `chunk_index` as read_chunk does, but hands its elements to
   * `sink` in pieces of whole slabs (a slab: the elements at one index of
   * the chunk's first dimension, C order), of about
   * STOWAGE_SLAB_PIECE_BYTES each, so that each piece is still in the CPU's
   * cache when the host copies it into the caller's array: one pass over
   * memory instead of two. Only slabs [slab_begin, slab_end) are needed;
   * the plugin may hand over only those, or all of them, in order.
   * *chunk_shape is set before the first piece. Returns STOWAGE_MISSING as
   * read_chunk does, and STOWAGE_UNSUPPORTED, before handing over anything,
   * where the chunk must be decoded whole (compressed, Fortran order): the
   * host then calls read_chunk. NULL: read_chunk only. */
  int (*read_chunk_slabs)(stowage_node_handle node, const uint64_t* chunk_index,
                          uint64_t slab_begin, uint64_t slab_end, stowage_sink* sink,
                          uint64_t* chunk_shape, stowage_error* err);
} stowage_array_vtable;
/* The size of the pieces read_chunk_slabs hands over: a CPU's cache holds it. */
#define STOWAGE_SLAB_PIECE_BYTES (1u << 20)
#define STOWAGE_ARRAY_VTABLE_V1_SIZE (offsetof(stowage_array_vtable, chunk_exists) + sizeof(void*))

/* -- sparse matrices (CSC or CSR; indptr is 64-bit, indices 32-bit) -- */
typedef struct stowage_sparse_vtable {
  uint32_t struct_size;
  /* Number of stored values in majors [begin, end). */
  int (*count)(stowage_node_handle node, uint64_t major_begin, uint64_t major_end, uint64_t* nnz,
               stowage_error* err);
  /* indptr gets end-begin+1 entries starting at 0; indices and values get
   * nnz entries (values in the host's byte order, dtype as described). */
  int (*read)(stowage_node_handle node, uint64_t major_begin, uint64_t major_end, uint64_t* indptr,
              uint32_t* indices, void* values, uint64_t nnz_capacity, stowage_error* err);
  /* Appends n_major majors in order (indptr has n_major+1 entries starting
   * at 0). The matrix is complete when every major has been appended. NULL:
   * read only. */
  int (*append)(stowage_node_handle node, uint64_t n_major, const uint64_t* indptr,
                const uint32_t* indices, const void* values, stowage_error* err);
} stowage_sparse_vtable;
#define STOWAGE_SPARSE_VTABLE_V1_SIZE (offsetof(stowage_sparse_vtable, append) + sizeof(void*))

/* -- string arrays (written whole with the format's write_strings) -- */
typedef struct stowage_strings_vtable {
  uint32_t struct_size;
  /* One sink item per string, for elements [begin, end). */
  int (*read)(stowage_node_handle node, uint64_t begin, uint64_t end, stowage_sink* items,
              stowage_error* err);
} stowage_strings_vtable;
#define STOWAGE_STRINGS_VTABLE_V1_SIZE (offsetof(stowage_strings_vtable, read) + sizeof(void*))

/* -- record sets (msgpack samples with keys) -- */
typedef struct stowage_records_vtable {
  uint32_t struct_size;
  int (*count)(stowage_node_handle node, uint64_t* count, stowage_error* err);
  /* One sink item per record (its msgpack bytes), for records [begin, end). */
  int (*read)(stowage_node_handle node, uint64_t begin, uint64_t end, stowage_sink* items,
              stowage_error* err);
  /* The key of record `index`, as one sink item. */
  int (*key)(stowage_node_handle node, uint64_t index, stowage_sink* key, stowage_error* err);
  /* The index of a key, or STOWAGE_NOT_FOUND. */
  int (*find_key)(stowage_node_handle node, const char* key, size_t key_size, uint64_t* index,
                  stowage_error* err);
  /* present[i] = 1 if keys[i] is in the key table (after the format's fast
   * check, a Bloom filter say), else 0; many keys in one call, so a format
   * can overlap one key's memory accesses with the next key's hashing. */
  int (*contains_keys)(stowage_node_handle node, uint64_t count, const char* const* keys,
                       const uint64_t* key_sizes, uint8_t* present, stowage_error* err);
  /* Appends msgpack records in order; each must carry its key as the
   * format requires. NULL: read only. */
  int (*append)(stowage_node_handle node, uint64_t count, const void* const* records,
                const uint64_t* sizes, stowage_error* err);
} stowage_records_vtable;
#define STOWAGE_RECORDS_VTABLE_V1_SIZE (offsetof(stowage_records_vtable, append) + sizeof(void*))

/* What open_node fills: the node's kind, its handle and its kind's table
 * (NULL for a group, whose handle the plugin may leave NULL too). The host
 * sets struct_size to the size it knows before the call. */
typedef struct stowage_node {
  uint32_t struct_size;
  uint32_t kind; /* stowage_node_kind */
  stowage_node_handle handle;
  const void* table; /* stowage_array_vtable*, stowage_sparse_vtable*, ... */
} stowage_node;

/* What the host learned about a path before asking any format what it is,
 * read once for all of them (GDAL's GDALOpenInfo): the entry's kind and size,
 * a file's first and last bytes, a directory's entry names. Over HTTP that is
 * a stat, two ranged reads or one listing, instead of each format's own
 * requests. Valid during the identify call only. */
#define STOWAGE_PROBE_HEADER_SIZE 1024  /* a file's first bytes the host reads */
#define STOWAGE_PROBE_TRAILER_SIZE 64   /* and its last (footers: datg, Parquet, zip) */
#define STOWAGE_PROBE_KIND_UNKNOWN (-1) /* the storage could not tell (an error, no backend) */
typedef struct stowage_probe {
  uint32_t struct_size;
  int32_t kind; /* stowage_entry_kind of the path, or STOWAGE_PROBE_KIND_UNKNOWN */
  const char* path;
  size_t path_size;
  uint64_t size; /* a file's size */
  /* A file's first min(size, STOWAGE_PROBE_HEADER_SIZE) bytes, and its last
   * min(size, STOWAGE_PROBE_TRAILER_SIZE); empty for anything else. */
  const uint8_t* header;
  size_t header_size;
  const uint8_t* trailer;
  size_t trailer_size;
  /* A directory's entry names as the storage lists them (a subdirectory's
   * with a trailing '/'), each followed by a NUL, when listed is 1;
   * listed is 0 when the path is no directory or the backend cannot list it
   * (an HTTP server without directory listings): then a format asks the
   * storage about the names it needs. */
  const char* entries;
  size_t entries_size;
  uint32_t listed;
} stowage_probe;

typedef struct stowage_format_vtable {
  uint32_t struct_size;

  /* 0 = not this format, 100 = certain. Decides from the probe; reads more
   * through the host's storage layer only where the probe cannot tell (a
   * sibling file, a small metadata file). Never fails: 0 when unsure. */
  int32_t (*identify)(const struct stowage_host* host, const stowage_probe* probe);
  /* options_json: a JSON object (may be empty); see the plugin's schema.
   * `host` is the table of the registry opening the store, valid while the
   * store is open: the store logs and creates codecs through it. */
  int (*open)(const struct stowage_host* host, const char* path, size_t path_size, uint32_t mode,
              const char* options_json, size_t options_size, stowage_store_handle* out,
              stowage_error* err);
  /* Commits pending writes and frees the store, even when it fails. */
  int (*close)(stowage_store_handle store, stowage_error* err);

  /* -- the tree -- */
  /* One sink item per child name (not full paths), in a stable order. */
  int (*list)(stowage_store_handle store, const char* node, size_t node_size, stowage_sink* names,
              stowage_error* err);
  int (*describe)(stowage_store_handle store, const char* node, size_t node_size,
                  stowage_sink* json, stowage_error* err);
  /* Creates a node from a description in describe()'s schema (shape,
   * chunks, dtype, codec...; byte_order/order are the plugin's choice). */
  int (*create)(stowage_store_handle store, const char* node, size_t node_size, const char* json,
                size_t json_size, stowage_error* err);
  /* Replaces the user attributes of a node. */
  int (*set_attributes)(stowage_store_handle store, const char* node, size_t node_size,
                        const char* json, size_t json_size, stowage_error* err);
  int (*remove)(stowage_store_handle store, const char* node, size_t node_size, stowage_error* err);

  /* -- node handles: the data of one node, through its kind's table -- */
  int (*open_node)(stowage_store_handle store, const char* node, size_t node_size,
                   stowage_node* out, stowage_error* err);
  void (*close_node)(stowage_store_handle store, stowage_node_handle node);

  /* Writes a whole string array (creating or replacing the node). NULL:
   * the format holds no strings or is read only. */
  int (*write_strings)(stowage_store_handle store, const char* node, size_t node_size,
                       uint64_t count, const char* const* data, const uint64_t* sizes,
                       stowage_error* err);

  /* -- anything else: a named command, JSON in and JSON out (e.g.
   *    datadings "verify"). UNSUPPORTED for names the plugin does not know. */
  int (*command)(stowage_store_handle store, const char* node, size_t node_size, const char* name,
                 size_t name_size, const char* args_json, size_t args_size, stowage_sink* result,
                 stowage_error* err);

  /* -- added after the first version: the host reads these only when
   *    struct_size covers them (see STOWAGE_FORMAT_VTABLE_V1_SIZE). -- */

  /* Renames node `from` to `to` (siblings or not, in this store) in one
   * step that a kill cannot leave half done: stowage::copy writes a node
   * into an existing container under a hidden name and publishes it with
   * this. With `replace`, an existing `to` is swapped out and removed;
   * without, an existing `to` is INVALID_ARGUMENT. Called only when the
   * descriptor has STOWAGE_CAP_MOVE_NODES. */
  int (*move_node)(stowage_store_handle store, const char* from, size_t from_size, const char* to,
                   size_t to_size, int32_t replace, stowage_error* err);

  /* Frees the store without committing anything: what it has pending (a
   * staged file, a matrix being built, writes kept until close) is dropped;
   * what earlier calls published stays. The host calls it for
   * Store::discard(), and for a store being built in a staging directory
   * ("w") that is never closed. NULL (or a table too short to hold it): the
   * host calls close() instead. */
  void (*discard)(stowage_store_handle store);
} stowage_format_vtable;

/* The size of the first format vtable (up to `command`): the least a plugin
 * may declare. Later fields are optional. */
#define STOWAGE_FORMAT_VTABLE_V1_SIZE (offsetof(stowage_format_vtable, command) + sizeof(void*))

/* ---- what the host gives a plugin -------------------------------------- */

typedef enum stowage_log_level {
  STOWAGE_LOG_DEBUG = 0,
  STOWAGE_LOG_INFO = 1,
  STOWAGE_LOG_WARNING = 2,
  STOWAGE_LOG_ERROR = 3
} stowage_log_level;

/* A codec as the host hands it to a format plugin: a configuration plus
 * the host's pool of contexts, usable from many threads at once. */
typedef struct stowage_host_codec_state* stowage_host_codec;

/* One table per Registry: a plugin loaded by two registries in one process
 * receives two tables, so it keeps the table it was given with each object
 * it creates (codec create(host, ...), format open(host, ...)) instead of a
 * process-wide copy. Read a field only when struct_size covers it
 * (STOWAGE_HOST_V1_SIZE fields are always there). */
typedef struct stowage_host {
  uint32_t struct_size;
  uint32_t abi_version;
  void* ctx;
  void (*log)(void* ctx, int32_t level, const char* message, size_t size);
  /* How many worker threads the host uses (a plugin sizing its caches). */
  uint32_t (*thread_count)(void* ctx);
  /* Creates a codec through the host's registry from its JSON config, so a
   * format plugin never links a codec plugin, and streams its canonical JSON
   * into `canonical` (may be NULL). The codec is safe to use from many
   * threads at once: the host gives each call a context of its own.
   * Release it with codec_destroy. */
  int (*codec_create)(void* ctx, const char* config_json, size_t config_size,
                      stowage_host_codec* out, stowage_sink* canonical, stowage_error* err);
  void (*codec_destroy)(stowage_host_codec codec);
  uint64_t (*codec_bound)(stowage_host_codec codec, uint64_t size);
  int (*codec_encode)(stowage_host_codec codec, const void* in, size_t in_size, void* out,
                      size_t out_capacity, size_t* written, stowage_error* err);
  int (*codec_decode)(stowage_host_codec codec, const void* in, size_t in_size, void* out,
                      size_t out_capacity, size_t* written, stowage_error* err);

  /* The storage backend serving `location` (a path, mem://..., http://...),
   * chosen by its scheme and opened once per host; owned by the host, valid
   * while the host is. See stowage/storage.h. */
  int (*storage)(void* ctx, const char* location, size_t location_size,
                 const struct stowage_storage_vtable** vtable, stowage_storage_handle* handle,
                 uint64_t* capabilities, stowage_error* err);

  /* -- fields added later go here; a plugin reads them only when
   *    struct_size covers them. -- */

  /* Which codec a format's codec entry names, in a dialect of
   * stowage_codec_vtable.names ("numcodecs": {"id": ...}; "zarr3":
   * {"name": ..., "configuration": ...}, where "numcodecs.<id>" is looked
   * up as numcodecs id <id>): streams that codec's config, with "type",
   * into `config`. The codec plugins on the search path are loaded to learn
   * their names (once per host). An unknown name is NOT_FOUND naming the
   * name, the dialect and the directories searched. */
  int (*codec_resolve)(void* ctx, const char* dialect, size_t dialect_size, const char* entry_json,
                       size_t entry_size, uint64_t item_size, stowage_sink* config,
                       stowage_error* err);
  /* A codec config ({"type": ...}) as the dialect's entry, for elements of
   * `item_size` bytes (0: unknown); UNSUPPORTED when the codec has none. */
  int (*codec_export)(void* ctx, const char* config_json, size_t config_size, const char* dialect,
                      size_t dialect_size, uint64_t item_size, stowage_sink* entry,
                      stowage_error* err);
  /* An array -> array codec (stowage_codec_vtable.create_array) for chunks
   * of `chunk_json` ({"dtype", "shape"}), used through codec_bound, encode,
   * decode and destroy as any host codec; `encoded` (may be NULL) receives
   * the encoded chunk's {"dtype", "shape"}. A bytes -> bytes codec's config
   * here, or an array -> array one's in codec_create, is INVALID_ARGUMENT
   * naming its kind. */
  int (*codec_create_array)(void* ctx, const char* config_json, size_t config_size,
                            const char* chunk_json, size_t chunk_size, stowage_host_codec* out,
                            stowage_sink* canonical, stowage_sink* encoded, stowage_error* err);
} stowage_host;

/* The size of the first host table of ABI 2 (up to codec_decode). */
#define STOWAGE_HOST_V1_SIZE (offsetof(stowage_host, codec_decode) + sizeof(void*))

/* ---- the descriptor ----------------------------------------------------- */

#define STOWAGE_KIND_CODEC "codec.bytes"       /* bytes -> bytes: compressors, checksums */
#define STOWAGE_KIND_ARRAY_CODEC "codec.array" /* array -> array: create_array, filters */
#define STOWAGE_KIND_FORMAT "format"
#define STOWAGE_KIND_STORAGE "storage" /* a storage backend: stowage/storage.h */

/* Capability bits. */
#define STOWAGE_CAP_READ (1ull << 0)        /* r: decodes / reads */
#define STOWAGE_CAP_WRITE (1ull << 1)       /* w: encodes / writes */
#define STOWAGE_CAP_THREADSAFE (1ull << 2)  /* t: one instance, many threads */
#define STOWAGE_CAP_PARTIAL (1ull << 3)     /* p: reads part without the rest */
#define STOWAGE_CAP_DENSE (1ull << 8)       /* format holds dense arrays */
#define STOWAGE_CAP_SPARSE (1ull << 9)      /* format holds sparse matrices */
#define STOWAGE_CAP_STRINGS (1ull << 10)    /* format holds string arrays */
#define STOWAGE_CAP_RECORDS (1ull << 11)    /* format holds record sets */
#define STOWAGE_CAP_GROUPS (1ull << 12)     /* format holds a tree of nodes */
#define STOWAGE_CAP_MOVE_NODES (1ull << 13) /* move_node renames a node whole */
/* Writers through several handles or processes at once lose nothing: each
 * write is published when it returns (N5, Zarr). A format without it
 * publishes a whole file (or set) at close, so the host lets one writer at
 * a time open a dataset of it (the storage's lock_key on its path) and the
 * Python package refuses to send a writable store of it to other processes. */
#define STOWAGE_CAP_SHARED_WRITES (1ull << 14)
/* Writers in several processes each publish what they wrote at close,
 * merged with what the others published (Daf: property by property, under
 * the repository's lock): the host lets several open a dataset of it for
 * writing at once, though a store's writes are seen only after its close
 * (so the Python package still refuses to pickle a writable one). */
#define STOWAGE_CAP_MERGES_AT_CLOSE (1ull << 15)
/* create takes "shards" (C order, whole multiples of "chunks") in an array's
 * description and writes the array in shards of that shape (Zarr v3's
 * sharding_indexed); a store of the format that takes none says so in its
 * root description ("store": {"shards": "why not"}). Bits 16-23 are the storage
 * backends' (storage.h). */
#define STOWAGE_CAP_SHARDS (1ull << 24)

typedef struct stowage_plugin {
  uint32_t abi_version;   /* STOWAGE_PLUGIN_ABI the plugin was built with */
  uint32_t struct_size;   /* sizeof(stowage_plugin) the plugin was built with */
  const char* kind;       /* STOWAGE_KIND_CODEC, _ARRAY_CODEC, _FORMAT or _STORAGE */
  const char* id;         /* [a-z0-9_]+, equal to the id in the file name */
  const char* version;    /* the plugin's own version */
  const char* build_info; /* SDK version, compiler, build type, libraries */
  /* JSON: {"key": {"type","default","min","max","enum","description"}}: a
   * codec's parameters, a format's open options. "on_create": true marks a
   * format option that sets what a new store is made as (its default is what
   * a new store gets, Zarr's "zarr_version"). */
  const char* params_schema;
  uint64_t capabilities;
  const void* vtable; /* stowage_codec_vtable*, stowage_format_vtable* or stowage_storage_vtable* */
  const char* description;       /* one line for humans */
  const char* const* aliases;    /* NULL-terminated extra ids (e.g. "zlib"), or NULL */
  const char* const* extensions; /* NULL-terminated file extensions (".n5"), or NULL */
  /* A format's metadata files, NULL-terminated, or NULL: the names of the
   * files that make a directory a node and name its chunks (N5's
   * "attributes.json"; Zarr's ".zarray", "zarr.json", ...), in the order a
   * node's are to be put. On storage that cannot rename (s3) the host puts a
   * new dataset's metadata files after all its other files, so a reader never
   * finds metadata naming chunks not there yet; where a directory cannot be
   * listed, detection looks for them by name. */
  const char* const* metadata_files;
} stowage_plugin;

typedef const stowage_plugin* (*stowage_plugin_entry_fn)(const stowage_host* host);

#define STOWAGE_PLUGIN_ENTRY_SYMBOL "stowage_plugin_entry"

#ifdef __cplusplus
}
#endif

#endif /* STOWAGE_PLUGIN_H */
