// Storage choice: a location's scheme picks its backend, opened once per
// scheme and storage options per registry; options bound to a location
// prefix reach every location under it.
#include "params.hpp"
#include "plugin_call.hpp"
#include "storage_choice.hpp"
#include "registry_impl.hpp"

#include <stowage/plugin_util.hpp>  // redact_userinfo
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

namespace {

// Whether options bound to `prefix` hold for `location`: it starts with it,
// so the files a format finds beside its path (datg's "x.datg" for "x",
// datadings' "x.offsets") are read with them too.
bool under(std::string_view location, std::string_view prefix) {
  return location.substr(0, prefix.size()) == prefix;
}

// Whether `location` is `prefix` or a location inside it.
bool at_or_below(std::string_view location, std::string_view prefix) {
  return under(location, prefix) &&
         (location.size() == prefix.size() || location[prefix.size()] == '/');
}

std::string trimmed(std::string location) {
  while (location.size() > 1 && location.back() == '/' &&
         location.find("://") + 3 < location.size())
    location.pop_back();
  return location;
}

}  // namespace

Registry::StorageBackend Registry::storage(std::string_view location) {
  const std::string scheme = storage_scheme(location);
  std::lock_guard<std::mutex> lock(impl_->storage_mutex);
  for (auto l = impl_->layers.rbegin(); l != impl_->layers.rend(); ++l)
    if (at_or_below(location, l->prefix))
      return {l->backend.vt, l->backend.handle, l->backend.capabilities};
  std::string options;  // the innermost binding's (the longest prefix; the newest of equals)
  size_t longest = 0;
  for (const Impl::Binding& b : impl_->bindings)
    if (under(location, b.prefix) && b.prefix.size() >= longest &&
        storage_scheme(b.prefix) == scheme)
      options = b.options, longest = b.prefix.size();
  auto it = impl_->storages.find({scheme, options});
  if (it == impl_->storages.end()) {
    const stowage_plugin* d = load("storage", scheme, location);
    Impl::OpenStorage s;
    s.vt = static_cast<const stowage_storage_vtable*>(d->vtable);
    s.capabilities = sdk::storage_capabilities(s.vt, d->capabilities);  // the parts its tables have
    detail::CallError err;
    int rc = s.vt->open(&impl_->host, options.data(), options.size(), &s.handle, &err);
    if (rc != STOWAGE_OK) detail::throw_status(rc, err, std::string(location), "storage " + scheme);
    it = impl_->storages.emplace(std::make_pair(scheme, options), s).first;
  }
  return {it->second.vt, it->second.handle, it->second.capabilities};
}

std::shared_ptr<void> Registry::bind_storage_options(const std::string& location,
                                                     const json& options) {
  if (options.is_null() || (options.is_object() && options.empty())) return nullptr;
  const std::string scheme = storage_scheme(location);
  const stowage_plugin* d = load("storage", scheme, location);
  json schema = json::parse(d->params_schema ? d->params_schema : "{}", nullptr, false);
  if (!schema.is_object()) schema = json::object();
  try {
    detail::check_params(schema, options, scheme + " storage");
  } catch (const Error& e) {
    throw Error(e.code(), sdk::redact_userinfo(location) + ": " + e.what(), location);
  }
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(impl_->storage_mutex);
    id = impl_->next_binding++;
    impl_->bindings.push_back({id, trimmed(location), options.dump()});
  }
  try {
    storage(location);  // a backend refusing its options says so now, not at the first read
  } catch (...) {
    std::lock_guard<std::mutex> lock(impl_->storage_mutex);
    impl_->bindings.pop_back();
    throw;
  }
  return impl_->unbinder(&Impl::bindings, id);
}

std::shared_ptr<void> Registry::bind_storage_layer(const std::string& location,
                                                   StorageBackend layer) {
  Impl::OpenStorage backend;
  backend.vt = layer.vtable;
  backend.handle = layer.handle;
  backend.capabilities = layer.capabilities;
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(impl_->storage_mutex);
    id = impl_->next_binding++;
    impl_->layers.push_back({id, trimmed(location), backend});
  }
  return impl_->unbinder(&Impl::layers, id);
}

}  // namespace stowage
