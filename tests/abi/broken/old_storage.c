/* A storage plugin as the first storage layer had it: one flat table of
 * 21 functions after struct_size, no `abi` field (its padding reads 0). The
 * ABI suite checks the registry refuses it with the storage ABI it was
 * built for, before any of its functions is called. */
#include <stowage/plugin.h>

struct flat_storage_vtable {
  uint32_t struct_size;
  void (*functions[21])(void);
};

static void never_called(void) {}

static const struct flat_storage_vtable vtable = {
    sizeof(struct flat_storage_vtable),
    {never_called, never_called, never_called, never_called, never_called, never_called,
     never_called, never_called, never_called, never_called, never_called, never_called,
     never_called, never_called, never_called, never_called, never_called, never_called,
     never_called, never_called, never_called}};

static const stowage_plugin descriptor = {STOWAGE_PLUGIN_ABI,
                                          sizeof(stowage_plugin),
                                          STOWAGE_KIND_STORAGE,
                                          "flattable",
                                          "0.0.1",
                                          "old storage test plugin",
                                          "{}",
                                          STOWAGE_CAP_READ,
                                          &vtable,
                                          "built against the flat storage table",
                                          NULL,
                                          NULL};

STOWAGE_PLUGIN_EXPORT const stowage_plugin* stowage_plugin_entry(const stowage_host* host) {
  (void)host;
  return &descriptor;
}
