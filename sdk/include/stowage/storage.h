/*
 * stowage/storage.h -- the storage layer of the C ABI: where a format's bytes
 * live (a local file system, memory, an HTTP server), kept apart from what the
 * bytes mean (the format) and how they are compressed (the codec).
 *
 * In layers, as tensorstore's kvstore and zarrs' storage traits are: the
 * vtable holds open/close and one sub-table per part. Reading (stat, ranged
 * read, read_into, list) is required; every other part is NULL when the
 * backend lacks it, so a read-only backend (http) declares no write part
 * instead of a table of refusals, and a format asks for a part before it
 * relies on it:
 *   write        stage, staged_*, publish (put), remove, make_directory
 *   rename       move, stage_directory, recover  (atomic renames, journals)
 *   lock         lock, unlock, lock_key          (writers taking turns)
 *   conditional  publish_if: a put that succeeds only when the key's version
 *                is the one the caller read, or the key is absent (the shape
 *                of S3's If-Match / If-None-Match)
 *
 * Included by stowage/plugin.h. A storage backend is the third kind of
 * plugin, stowage_storage_<scheme>.<so|dylib|dll> (kind STOWAGE_KIND_STORAGE):
 * "file" (the default, for paths), "memory" (mem://...), "http" (http:// and
 * https://, read only). Format plugins never call open/pread/rename
 * themselves; they ask the host for the backend of a location
 * (stowage_host.storage) and do all I/O through these tables.
 *
 * Keys are locations as the user gave them: "data/x.n5/0/0/0" for a file,
 * "http://host:8080/x.n5/0/0/0" for HTTP, "mem://name/0/0/0" for memory. A
 * format builds keys by appending "/<name>" to its location, so every error
 * names the file or URL the way the user wrote it. "Directories" are key
 * prefixes ending before a '/'; a backend without real directories (memory,
 * HTTP) reports a prefix with keys under it as one.
 *
 * Everything a backend returns to a caller is lent, never transferred: read()
 * lends a view whose owner the caller hands back through view.release.
 */
#ifndef STOWAGE_STORAGE_H
#define STOWAGE_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The layout of these tables. A backend writes it in its vtable's `abi`
 * field; the host refuses another ("built for storage ABI 1, this host
 * speaks 2"). 1: the single flat table (no `abi` field: it read as 0). */
#define STOWAGE_STORAGE_ABI 2

struct stowage_error;
struct stowage_sink;
struct stowage_host;

typedef struct stowage_storage_state* stowage_storage_handle;
typedef struct stowage_staged_state* stowage_staged_handle;
typedef struct stowage_lock_state* stowage_lock_handle;

/* Bytes lent by a backend: data[0..size) stays valid until the caller calls
 * release(owner) (when release is not NULL). The file backend lends a memory
 * map where the caller asked to keep the bytes (STOWAGE_READ_KEEP), so formats
 * that parse a file in place keep their speed; other backends lend a buffer. */
typedef struct stowage_view {
  const void* data;
  uint64_t size;
  void* owner;
  void (*release)(void* owner);
} stowage_view;

/* A caller's buffer, for scattered reads. */
typedef struct stowage_buffer {
  void* data;
  uint64_t size;
} stowage_buffer;

/* What a key is (stat). */
typedef enum stowage_entry_kind {
  STOWAGE_ENTRY_ABSENT = 0,
  STOWAGE_ENTRY_FILE = 1,
  STOWAGE_ENTRY_DIRECTORY = 2
} stowage_entry_kind;

/* The version of a key's bytes: opaque bytes[0..size) that change whenever
 * the key is put again (file: device, inode, size and mtime in ns; memory: a
 * counter; http: the ETag). size 0: no version (absent, a directory, or a
 * backend that cannot tell). Compared byte for byte, never parsed. */
#define STOWAGE_VERSION_CAPACITY 256
typedef struct stowage_version {
  uint32_t size;
  uint8_t bytes[STOWAGE_VERSION_CAPACITY];
} stowage_version;

/* What stat() reports of a key. */
typedef struct stowage_stat {
  int32_t kind;  /* a stowage_entry_kind */
  uint64_t size; /* a file's size; 0 for a directory or an absent key */
  stowage_version version;
} stowage_stat;

/* read() flags. */
#define STOWAGE_READ_KEEP (1u << 0)  /* the view is kept long and read in place: map it */
#define STOWAGE_READ_WATCH (1u << 1) /* with KEEP: view_size() can tell the file's size now */

/* publish() and move() flags. */
#define STOWAGE_PUBLISH_REPLACE \
  (1u << 0) /* an existing key is replaced (else: INVALID_ARGUMENT "exists") */
#define STOWAGE_PUBLISH_DURABLE (1u << 1) /* flushed to stable storage before it is published */

/* remove() flags. */
#define STOWAGE_REMOVE_RECURSIVE (1u << 0) /* a directory and everything under it */

/* lock_key() flags. */
#define STOWAGE_LOCK_TRY (1u << 0) /* do not wait: *held = 0 when another writer holds it */

/* Capability bits of a storage plugin (stowage_plugin.capabilities) besides
 * STOWAGE_CAP_READ / STOWAGE_CAP_WRITE / STOWAGE_CAP_THREADSAFE. The parts'
 * bits say which sub-tables are there: the host derives them from the
 * tables (sdk::Storage::can) and refuses a plugin whose bits claim a part it
 * lacks. STOWAGE_CAP_MAP is a promise no table shows. */
#define STOWAGE_CAP_LIST (1ull << 16)        /* list(): always, it is in the read part */
#define STOWAGE_CAP_MOVE (1ull << 17)        /* the rename part */
#define STOWAGE_CAP_MAP (1ull << 18)         /* STOWAGE_READ_KEEP views are memory maps (no copy) */
#define STOWAGE_CAP_LOCK_KEY (1ull << 19)    /* the lock part */
#define STOWAGE_CAP_CONDITIONAL (1ull << 20) /* the conditional part */

/*
 * Threading: every function may be called from many threads at once; on one
 * staged file, staged_write and staged_read at distinct offsets too (Daf's
 * tiles are written in parallel into one file), but not with staged_resize,
 * publish or discard.
 *
 * Errors: a missing key is STOWAGE_NOT_FOUND from read/read_into/list/remove
 * (stat reports STOWAGE_ENTRY_ABSENT instead); a key that exists but cannot
 * be read is STOWAGE_IO; a body shorter than the server or the file system
 * announced is STOWAGE_CORRUPT ("truncated"). Messages name the key.
 *
 * Every sub-table starts with its own size; a later field is read only where
 * struct_size covers it, as in stowage/plugin.h.
 */

/* -- the read part: required -- */
typedef struct stowage_storage_read {
  uint32_t struct_size;
  /* What a key is, its size and its version (see stowage_stat). */
  int (*stat)(stowage_storage_handle storage, const char* key, size_t key_size, stowage_stat* out,
              struct stowage_error* err);
  /* Lends bytes [offset, offset + length) of a file; length UINT64_MAX means
   * "to the end". A range reaching past the end is cut at the end (the view is
   * shorter); an offset past the end gives an empty view. */
  int (*read)(stowage_storage_handle storage, const char* key, size_t key_size, uint64_t offset,
              uint64_t length, uint32_t flags, stowage_view* out, struct stowage_error* err);
  /* Copies the bytes from offset on into parts[0], then parts[1], ... (a
   * scattered read: a chunk's header into one buffer and its payload
   * straight into the caller's array, in one request); *got receives how
   * many bytes in all (fewer than the parts hold only at the end of the
   * file), and *file_size, when not NULL, the whole file's size. The chunk
   * hot path: no allocation, one preadv for a local file. */
  int (*read_into)(stowage_storage_handle storage, const char* key, size_t key_size,
                   uint64_t offset, const stowage_buffer* parts, uint64_t count, uint64_t* got,
                   uint64_t* file_size, struct stowage_error* err);
  /* One sink item per entry directly under a directory, in a stable order
   * (sorted by name): a file's name, or a directory's name followed by '/'.
   * Names that start with ".stowage-" (the backends' staging) are left out. */
  int (*list)(stowage_storage_handle storage, const char* key, size_t key_size,
              struct stowage_sink* names, struct stowage_error* err);
  /* Optional (NULL: the caller asks stat()). The size now of the file whose
   * bytes a view read with STOWAGE_READ_KEEP | STOWAGE_READ_WATCH lends, so
   * that a format reading a map in place finds a file cut short since (a
   * read of the lost pages would be SIGBUS) without a path lookup;
   * STOWAGE_UNSUPPORTED for other views. */
  int (*view_size)(stowage_storage_handle storage, const stowage_view* view, uint64_t* size,
                   struct stowage_error* err);
} stowage_storage_read;

/* -- the write part: nothing is visible under its key until published -- */
typedef struct stowage_storage_write {
  uint32_t struct_size;
  /* A new, empty staged file that will become `key` (parent directories are
   * created). Readers see nothing of it until publish(). */
  int (*stage)(stowage_storage_handle storage, const char* key, size_t key_size,
               stowage_staged_handle* out, struct stowage_error* err);
  /* Writes at any offset of a staged file (holes read as zeros). */
  int (*staged_write)(stowage_staged_handle staged, uint64_t offset, const void* data, size_t size,
                      struct stowage_error* err);
  /* Reads back bytes of a staged file (what was written; holes are zeros):
   * *got receives how many, fewer than capacity only at its end. */
  int (*staged_read)(stowage_staged_handle staged, uint64_t offset, void* buf, uint64_t capacity,
                     uint64_t* got, struct stowage_error* err);
  /* Sets the staged file's size (grows with zeros, or cuts). */
  int (*staged_resize)(stowage_staged_handle staged, uint64_t size, struct stowage_error* err);
  /* Drops a staged file that will not be published. */
  void (*discard)(stowage_staged_handle staged);
  /* Publishes `count` staged files as one change (a put): a reader sees all
   * the old keys or all the new, never a mix. With the rename part, a writer
   * killed part-way leaves a state that recover() completes (the file
   * backend's journal beside the first key, ".<name>.stowage-commit").
   * Concurrent publishes of the same keys take turns; the last wins whole.
   * The handles are consumed, whether it succeeds or not. */
  int (*publish)(stowage_storage_handle storage, uint64_t count,
                 const stowage_staged_handle* staged, uint32_t flags, struct stowage_error* err);
  /* Removes a file, or a directory with STOWAGE_REMOVE_RECURSIVE. */
  int (*remove)(stowage_storage_handle storage, const char* key, size_t key_size, uint32_t flags,
                struct stowage_error* err);
  /* Creates a directory and its parents; existing ones are fine. A backend
   * without directories notes the prefix (memory) or does nothing. */
  int (*make_directory)(stowage_storage_handle storage, const char* key, size_t key_size,
                        struct stowage_error* err);
} stowage_storage_write;

/* -- the rename part: entries change names in one step -- */
typedef struct stowage_storage_rename {
  uint32_t struct_size;
  /* Renames entries (files or directories) from[i] -> to[i] as one change.
   * One entry: a single step a kill cannot leave half done; with
   * STOWAGE_PUBLISH_REPLACE an existing `to` is swapped out and removed,
   * without it an existing `to` is INVALID_ARGUMENT "exists". Several: as
   * publish() does for a set (journal beside to[0], completed by recover()),
   * always replacing; every from[i] must be in to[0]'s directory or below. */
  int (*move)(stowage_storage_handle storage, uint64_t count, const char* const* from,
              const size_t* from_sizes, const char* const* to, const size_t* to_sizes,
              uint32_t flags, struct stowage_error* err);
  /* A new, empty, hidden directory beside `key` to build a whole tree in
   * (written with stage/publish, then put in place with move()). Its key is
   * one sink item. */
  int (*stage_directory)(stowage_storage_handle storage, const char* key, size_t key_size,
                         struct stowage_sink* staging_key, struct stowage_error* err);
  /* Completes a publish or move of a set whose first key is `key` that a
   * killed writer left half done; *recovered = 1 if there was one. Cheap
   * when there is none. Formats call it before reading a multi-file dataset. */
  int (*recover)(stowage_storage_handle storage, const char* key, size_t key_size,
                 int32_t* recovered, struct stowage_error* err);
} stowage_storage_rename;

/* -- the lock part: writers taking turns -- */
typedef struct stowage_storage_lock {
  uint32_t struct_size;
  /* Takes an exclusive lock named by a directory key, waiting for it; held
   * until unlock() or the process ends (never left behind by a killed
   * writer). Advisory: only writers that lock take turns. Publishing a set
   * takes the same lock on the first key's directory. A backend that cannot
   * lock (a file system refusing flock) holds nothing: *held = 0. */
  int (*lock)(stowage_storage_handle storage, const char* key, size_t key_size,
              stowage_lock_handle* out, int32_t* held, struct stowage_error* err);
  void (*unlock)(stowage_lock_handle lock);
  /* Takes an exclusive lock on one key (which may be absent), held until
   * unlock(): a writer that reads a key, changes part of it and publishes
   * it back (a chunk written in part, a shard) holds it from the read to the
   * publish, so that no other writer's change is lost. Threads, handles and
   * processes exclude each other; a killed holder's lock is free again.
   * Waits, or with STOWAGE_LOCK_TRY returns at once with *held = 0 when
   * another holds it. The file backend flocks ".<name>.stowage-lock". */
  int (*lock_key)(stowage_storage_handle storage, const char* key, size_t key_size, uint32_t flags,
                  stowage_lock_handle* out, int32_t* held, struct stowage_error* err);
} stowage_storage_lock;

/* -- the conditional part: put only over the version the writer read -- */
typedef struct stowage_storage_conditional {
  uint32_t struct_size;
  /* Publishes one staged file (replacing) only if its key's version is
   * *expected now, or, when expected->size is 0, only if the key is absent:
   * *published = 1. Otherwise nothing changes and *published = 0 (a state,
   * not an error). Atomic against other conditional puts and against
   * holders of the key's lock_key (the file backend takes that lock: a
   * caller must not hold it itself). The handle is consumed. */
  int (*publish_if)(stowage_storage_handle storage, stowage_staged_handle staged,
                    const stowage_version* expected, uint32_t flags, int32_t* published,
                    struct stowage_error* err);
} stowage_storage_conditional;

typedef struct stowage_storage_vtable {
  uint32_t struct_size;
  uint32_t abi; /* STOWAGE_STORAGE_ABI */

  /* One instance per host registry. options_json: the backend's options
   * (its params_schema), may be empty. The host outlives the instance. */
  int (*open)(const struct stowage_host* host, const char* options_json, size_t options_size,
              stowage_storage_handle* out, struct stowage_error* err);
  void (*close)(stowage_storage_handle storage);

  const stowage_storage_read* read;               /* required */
  const stowage_storage_write* write;             /* NULL: read only */
  const stowage_storage_rename* rename;           /* NULL: no atomic rename */
  const stowage_storage_lock* lock;               /* NULL: no locks */
  const stowage_storage_conditional* conditional; /* NULL: no conditional put */
} stowage_storage_vtable;

/* The least a storage plugin may declare (up to `read`); later fields are optional. */
#define STOWAGE_STORAGE_VTABLE_V1_SIZE (offsetof(stowage_storage_vtable, read) + sizeof(void*))

#ifdef __cplusplus
}
#endif

#endif /* STOWAGE_STORAGE_H */
