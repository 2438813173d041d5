/* Deliberately broken codec plugins written in plain C against plugin.h,
 * one per file name, selected by -DBROKEN_<KIND> at compile time. The ABI
 * test suite checks the exact state and message the registry gives each. */
#include <stowage/plugin.h>

#include <string.h>

static int create(const char *json, size_t n, stowage_codec_handle *out, stowage_error *err) {
  (void)json, (void)n, (void)err;
  *out = (stowage_codec_handle)1;
  return STOWAGE_OK;
}
static int canonical(stowage_codec_handle h, stowage_sink *sink, stowage_error *err) {
  (void)h, (void)err;
  return sink->write(sink->ctx, "{}", 2) ? STOWAGE_INTERNAL : STOWAGE_OK;
}
static uint64_t bound(stowage_codec_handle h, uint64_t n) { (void)h; return n; }
static int copy(stowage_codec_handle h, const void *in, size_t n, void *out, size_t cap, size_t *w,
                stowage_error *err) {
  (void)h, (void)err;
  if (n > cap) return STOWAGE_CORRUPT;
  memcpy(out, in, n);
  *w = n;
  return STOWAGE_OK;
}
static void destroy(stowage_codec_handle h) { (void)h; }

static const stowage_codec_vtable vtable = {sizeof(stowage_codec_vtable), create, canonical, bound, copy, copy,
                                            destroy};

#if defined(BROKEN_BADABI)
#define ABI 99
#define ID "badabi"
#elif defined(BROKEN_WRONGID)
#define ABI STOWAGE_PLUGIN_ABI
#define ID "otherid"
#elif defined(BROKEN_UNRESOLVED)
#define ABI STOWAGE_PLUGIN_ABI
#define ID "unresolved"
/* Defined nowhere: dlopen with RTLD_NOW must fail naming it. */
extern void stowage_test_undefined_function(void);
STOWAGE_PLUGIN_EXPORT void *stowage_test_reference = (void *)&stowage_test_undefined_function;
#endif

#if defined(BROKEN_NOENTRY)
STOWAGE_PLUGIN_EXPORT int not_the_entry_point(void) { return 42; }
#else
static const stowage_plugin descriptor = {ABI, sizeof(stowage_plugin), STOWAGE_KIND_CODEC, ID, "0.0.1",
                                          "broken test plugin", "{}",
                                          STOWAGE_CAP_READ | STOWAGE_CAP_WRITE, &vtable, "broken on purpose",
                                          NULL, NULL};
STOWAGE_PLUGIN_EXPORT const stowage_plugin *stowage_plugin_entry(const stowage_host *host) {
  (void)host;
  return &descriptor;
}
#endif
