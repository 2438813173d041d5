// What a Registry holds, shared by registry.cpp, loading.cpp, host.cpp and storage_choice.cpp.
#pragma once

#include <stowage/stowage.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace stowage {

// A plugin id as file names and descriptors may spell it: [a-z0-9_]+.
bool valid_id(std::string_view id);

struct Registry::Impl {
  Options options;
  std::mutex mutex;  // guards everything below and serializes dlopen
  bool scanned = false;
  std::vector<std::pair<std::string, bool>> search_path;
  std::map<std::pair<std::string, std::string>, PluginInfo> active;  // (kind, id)
  std::vector<PluginInfo> shadowed;
  std::map<std::pair<std::string, std::string>, const stowage_plugin*> descriptors;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  stowage_host host{};  // this registry's own table (issue 19: one per Registry)
  Registry* owner = nullptr;
  std::mutex log_mutex;  // guards log_sink
  LogSink log_sink;

  // The storage backends opened so far, one per scheme and options (their
  // JSON text, "" for none), closed with the registry.
  struct OpenStorage {
    const stowage_storage_vtable* vt = nullptr;
    stowage_storage_handle handle = nullptr;
    uint64_t capabilities = 0;
  };
  std::mutex storage_mutex;  // not `mutex`: opening a backend loads its plugin under that one
  std::map<std::pair<std::string, std::string>, OpenStorage> storages;
  // Storage options bound to locations (bind_storage_options), newest last.
  struct Binding {
    uint64_t id;
    std::string prefix, options;
  };
  std::vector<Binding> bindings;
  // Storage layers bound to locations (bind_storage_layer), newest last.
  struct Layer {
    uint64_t id;
    std::string prefix;
    OpenStorage backend;
  };
  std::vector<Layer> layers;
  uint64_t next_binding = 0;
  // A handle that drops entry `id` of `list` (bindings or layers) when it goes.
  template <class Entry>
  std::shared_ptr<void> unbinder(std::vector<Entry> Impl::* list, uint64_t id) {
    return std::shared_ptr<void>(nullptr, [this, list, id](void*) {
      std::lock_guard<std::mutex> lock(storage_mutex);
      auto& v = this->*list;
      v.erase(std::remove_if(v.begin(), v.end(), [&](const Entry& x) { return x.id == id; }),
              v.end());
    });
  }
  ~Impl() {
    for (auto& [scheme, s] : storages) s.vt->close(s.handle);
  }

  // Codec names (codec_names.cpp): (dialect, name) -> codec plugin id, of
  // every codec plugin that declares names, built once on first need.
  bool codec_names_indexed = false;
  std::map<std::pair<std::string, std::string>, std::string> codec_names;
  void index_codec_names_locked();

  void scan_locked();
  const stowage_plugin* load_locked(PluginInfo& info);
  std::string describe_search_locked() const;
  // Fills `host`, the table every plugin of `registry` is given (host.cpp).
  void fill_host(Registry* registry);
};

}  // namespace stowage
