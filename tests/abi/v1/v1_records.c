/* A format plugin built against the first format vtable (up to `command`,
 * without contains_keys), in plain C: a record set of the keys "a" and "b".
 * The ABI suite checks that the registry still loads it and that the host
 * answers a batch of contains() by asking key by key. */
#include <stowage/plugin.h>

#include <string.h>

static int ok(stowage_error *err) {
  (void)err;
  return STOWAGE_OK;
}
static int32_t identify(const char *path, size_t n) {
  (void)path, (void)n;
  return 0; /* opened by name only */
}
static int open_store(const stowage_host *host, const char *path, size_t n, uint32_t mode, const char *opts,
                      size_t on, stowage_store_handle *out, stowage_error *err) {
  (void)host, (void)path, (void)n, (void)mode, (void)opts, (void)on;
  *out = (stowage_store_handle)1;
  return ok(err);
}
static int close_store(stowage_store_handle h, stowage_error *err) {
  (void)h;
  return ok(err);
}
static int describe(stowage_store_handle h, const char *node, size_t n, stowage_sink *json,
                    stowage_error *err) {
  static const char text[] = "{\"kind\": \"records\", \"count\": 2}";
  (void)h, (void)node;
  if (n != 0) {
    err->code = STOWAGE_NOT_FOUND;
    strcpy(err->message, "only the root");
    return STOWAGE_NOT_FOUND;
  }
  return json->write(json->ctx, text, sizeof text - 1) ? STOWAGE_INTERNAL : STOWAGE_OK;
}
static int record_count(stowage_store_handle h, const char *node, size_t n, uint64_t *count,
                        stowage_error *err) {
  (void)h, (void)node, (void)n;
  *count = 2;
  return ok(err);
}
static int contains_key(stowage_store_handle h, const char *node, size_t n, const char *key, size_t ks,
                        int32_t *present, stowage_error *err) {
  (void)h, (void)node, (void)n;
  *present = ks == 1 && (key[0] == 'a' || key[0] == 'b');
  return ok(err);
}

/* Designated initializers: every other entry is NULL, never called here. */
static const stowage_format_vtable vtable = {
    .struct_size = STOWAGE_FORMAT_VTABLE_V1_SIZE,
    .identify = identify,
    .open = open_store,
    .close = close_store,
    .describe = describe,
    .record_count = record_count,
    .contains_key = contains_key,
};

static const stowage_plugin descriptor = {STOWAGE_PLUGIN_ABI, sizeof(stowage_plugin), STOWAGE_KIND_FORMAT,
                                          "v1records", "0.0.1", "first-vtable test plugin", "{}",
                                          STOWAGE_CAP_READ | STOWAGE_CAP_RECORDS, &vtable,
                                          "a format plugin built against the first vtable", NULL, NULL};
STOWAGE_PLUGIN_EXPORT const stowage_plugin *stowage_plugin_entry(const stowage_host *host) {
  (void)host;
  return &descriptor;
}
