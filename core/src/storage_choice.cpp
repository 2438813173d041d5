// Storage choice: a location's scheme picks its backend, opened once per scheme per registry.
#include "plugin_call.hpp"
#include "storage_choice.hpp"
#include "registry_impl.hpp"

#include <stowage/storage.hpp>

#include <mutex>
#include <string>

namespace stowage {

// "http://h/x.n5" -> "http"; a location without "<scheme>://" is a path: "file".
std::string storage_scheme(std::string_view location) {
  size_t colon = location.find("://");
  if (colon == std::string_view::npos || colon == 0) return "file";
  std::string scheme(location.substr(0, colon));
  for (char& c : scheme) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return "file";  // "C:/x", "a b://"
  }
  return scheme;
}

Registry::StorageBackend Registry::storage(std::string_view location) {
  const std::string scheme = storage_scheme(location);
  std::lock_guard<std::mutex> lock(impl_->storage_mutex);
  auto it = impl_->storages.find(scheme);
  if (it == impl_->storages.end()) {
    const stowage_plugin* d = load("storage", scheme, location);
    Impl::OpenStorage s;
    s.vt = static_cast<const stowage_storage_vtable*>(d->vtable);
    s.capabilities = sdk::storage_capabilities(s.vt, d->capabilities);  // the parts its tables have
    detail::CallError err;
    int rc = s.vt->open(&impl_->host, "", 0, &s.handle, &err);
    if (rc != STOWAGE_OK) detail::throw_status(rc, err, std::string(location), "storage " + scheme);
    it = impl_->storages.emplace(scheme, s).first;
  }
  return {it->second.vt, it->second.handle, it->second.capabilities};
}

}  // namespace stowage
