/* A format plugin built against the first format vtable (up to `command`,
 * without move_node) and the first records table, in plain C: a read-only
 * record set of the keys "a" and "b". The ABI suite checks that the registry
 * loads it, that the host reads it through a node handle, and that what it
 * leaves NULL (append, write_strings, move_node) is refused, not called. */
#include <stowage/plugin.h>

#include <string.h>

static int ok(stowage_error* err) {
  (void)err;
  return STOWAGE_OK;
}
static int not_found(stowage_error* err) {
  err->code = STOWAGE_NOT_FOUND;
  strcpy(err->message, "only the root");
  return STOWAGE_NOT_FOUND;
}
static int32_t identify(const stowage_host* host, const stowage_probe* probe) {
  (void)host, (void)probe;
  return 0; /* opened by name only */
}
static int open_store(const stowage_host* host, const char* path, size_t n, uint32_t mode,
                      const char* opts, size_t on, stowage_store_handle* out, stowage_error* err) {
  (void)host, (void)path, (void)n, (void)mode, (void)opts, (void)on;
  *out = (stowage_store_handle)1;
  return ok(err);
}
static int close_store(stowage_store_handle h, stowage_error* err) {
  (void)h;
  return ok(err);
}
static int list(stowage_store_handle h, const char* node, size_t n, stowage_sink* names,
                stowage_error* err) {
  (void)h, (void)node, (void)names;
  return n ? not_found(err) : ok(err);
}
static int describe(stowage_store_handle h, const char* node, size_t n, stowage_sink* json,
                    stowage_error* err) {
  static const char text[] = "{\"kind\": \"records\", \"count\": 2}";
  (void)h, (void)node;
  if (n != 0) return not_found(err);
  return json->write(json->ctx, text, sizeof text - 1) ? STOWAGE_INTERNAL : STOWAGE_OK;
}

/* The records table: the handle is unused (one record set). */
static int record_count(stowage_node_handle h, uint64_t* count, stowage_error* err) {
  (void)h;
  *count = 2;
  return ok(err);
}
static int contains_keys(stowage_node_handle h, uint64_t count, const char* const* keys,
                         const uint64_t* sizes, uint8_t* present, stowage_error* err) {
  (void)h;
  for (uint64_t i = 0; i < count; ++i)
    present[i] = sizes[i] == 1 && (keys[i][0] == 'a' || keys[i][0] == 'b');
  return ok(err);
}
static const stowage_records_vtable records = {
    .struct_size = STOWAGE_RECORDS_VTABLE_V1_SIZE,
    .count = record_count,
    .contains_keys = contains_keys,
    /* read, key, find_key: not called by the test; append NULL: read only */
};

static int open_node(stowage_store_handle h, const char* node, size_t n, stowage_node* out,
                     stowage_error* err) {
  (void)h, (void)node;
  if (n != 0) return not_found(err);
  out->kind = STOWAGE_NODE_RECORDS;
  out->handle = NULL;
  out->table = &records;
  return ok(err);
}
static void close_node(stowage_store_handle h, stowage_node_handle node) { (void)h, (void)node; }

/* Designated initializers: every other entry is NULL, never called here. */
static const stowage_format_vtable vtable = {
    .struct_size = STOWAGE_FORMAT_VTABLE_V1_SIZE,
    .identify = identify,
    .open = open_store,
    .close = close_store,
    .list = list,
    .describe = describe,
    .open_node = open_node,
    .close_node = close_node,
};

static const stowage_plugin descriptor = {STOWAGE_PLUGIN_ABI,
                                          sizeof(stowage_plugin),
                                          STOWAGE_KIND_FORMAT,
                                          "v1records",
                                          "0.0.1",
                                          "first-vtable test plugin",
                                          "{}",
                                          STOWAGE_CAP_READ | STOWAGE_CAP_RECORDS,
                                          &vtable,
                                          "a format plugin built against the first vtable",
                                          NULL,
                                          NULL};
STOWAGE_PLUGIN_EXPORT const stowage_plugin* stowage_plugin_entry(const stowage_host* host) {
  (void)host;
  return &descriptor;
}
