/* Deliberately broken codec plugins written in plain C against plugin.h,
 * one per file name, selected by -DBROKEN_<KIND> at compile time, and one
 * that is not broken (future: a larger vtable than the host knows). The ABI
 * test suite checks the exact state and message the registry gives each. */
#include <stowage/plugin.h>

#include <string.h>

static int create(const stowage_host* host, const char* json, size_t n, stowage_codec_config* out,
                  stowage_sink* canonical, stowage_error* err) {
  (void)host, (void)json, (void)n, (void)err;
  *out = (stowage_codec_config)1;
  return canonical->write(canonical->ctx, "{}", 2) ? STOWAGE_INTERNAL : STOWAGE_OK;
}
static void destroy(stowage_codec_config c) { (void)c; }
static uint64_t bound(stowage_codec_config c, uint64_t n) {
  (void)c;
  return n;
}
static int copy(stowage_codec_config c, stowage_codec_context cx, const void* in, size_t n,
                void* out, size_t cap, size_t* w, stowage_error* err) {
  (void)c, (void)cx, (void)err;
  if (n > cap) return STOWAGE_CORRUPT;
  memcpy(out, in, n);
  *w = n;
  return STOWAGE_OK;
}

/* A codec vtable as a later ABI 2 might declare it: one more field. */
struct future_vtable {
  stowage_codec_vtable v1;
  void (*added_later)(void);
};

/* No contexts: this codec has no scratch state. */
static const struct future_vtable future_vtable = {
#if defined(BROKEN_FUTURE)
    {sizeof(struct future_vtable),
#elif defined(BROKEN_TOOSHORT)
    /* A table that ends before decode. */
    {STOWAGE_CODEC_VTABLE_V1_SIZE - sizeof(void*),
#else
    {sizeof(stowage_codec_vtable),
#endif
     create, destroy, NULL, NULL, bound, copy, copy},
    NULL};
#define vtable future_vtable.v1

#if defined(BROKEN_BADABI)
#define ABI 99
#define ID "badabi"
#elif defined(BROKEN_ABI1)
/* What every plugin built before issue 19 declares. */
#define ABI 1
#define ID "abi1"
#elif defined(BROKEN_WRONGID)
#define ABI STOWAGE_PLUGIN_ABI
#define ID "otherid"
#elif defined(BROKEN_TOOSHORT)
#define ABI STOWAGE_PLUGIN_ABI
#define ID "tooshort"
#elif defined(BROKEN_FUTURE)
/* Not broken: a larger vtable than this host knows loads. */
#define ABI STOWAGE_PLUGIN_ABI
#define ID "future"
#elif defined(BROKEN_UNRESOLVED)
#define ABI STOWAGE_PLUGIN_ABI
#define ID "unresolved"
/* Defined nowhere: dlopen with RTLD_NOW must fail naming it. */
extern void stowage_test_undefined_function(void);
STOWAGE_PLUGIN_EXPORT void* stowage_test_reference = (void*)&stowage_test_undefined_function;
#endif

#if defined(BROKEN_NOENTRY)
STOWAGE_PLUGIN_EXPORT int not_the_entry_point(void) { return 42; }
#else
static const stowage_plugin descriptor = {ABI,
                                          sizeof(stowage_plugin),
                                          STOWAGE_KIND_CODEC,
                                          ID,
                                          "0.0.1",
                                          "broken test plugin",
                                          "{}",
                                          STOWAGE_CAP_READ | STOWAGE_CAP_WRITE,
                                          &vtable,
                                          "broken on purpose",
                                          NULL,
                                          NULL};
STOWAGE_PLUGIN_EXPORT const stowage_plugin* stowage_plugin_entry(const stowage_host* host) {
  (void)host;
  return &descriptor;
}
#endif
