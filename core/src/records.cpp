// Records: the C++ face of a format plugin's records node table (keyed byte strings).
#include "plugin_call.hpp"
#include "store_state.hpp"

#include <mutex>
#include <optional>

namespace stowage {

using detail::live;
using detail::string_sink;

uint64_t Records::size() const {
  Store::State& st = live(store_);
  uint64_t n = 0;
  detail::CallError err;
  std::shared_lock<std::shared_mutex> lock(st.mutex);
  st.check(handle_->records().count(handle_->node.handle, &n, &err), err);
  return n;
}

void Records::read_range(uint64_t begin, uint64_t end,
                         const std::function<void(std::string_view)>& fn) const {
  Store::State& st = live(store_);
  detail::ItemSink items{fn, {}};
  stowage_sink sink = items.sink();
  detail::CallError err;
  std::shared_lock<std::shared_mutex> lock(st.mutex);
  int rc = handle_->records().read(handle_->node.handle, begin, end, &sink, &err);
  if (!items.error.empty()) throw Error(ErrorCode::internal, items.error, st.path);
  st.check(rc, err);
}

std::string Records::read(uint64_t index) const {
  std::string out;
  read_range(index, index + 1, [&](std::string_view r) { out.assign(r); });
  return out;
}

std::string Records::key(uint64_t index) const {
  Store::State& st = live(store_);
  std::string out;
  stowage_sink sink = string_sink(&out);
  detail::CallError err;
  std::shared_lock<std::shared_mutex> lock(st.mutex);
  st.check(handle_->records().key(handle_->node.handle, index, &sink, &err), err);
  return out;
}

std::optional<uint64_t> Records::find(std::string_view key) const {
  Store::State& st = live(store_);
  uint64_t index = 0;
  detail::CallError err;
  std::shared_lock<std::shared_mutex> lock(st.mutex);
  int rc = handle_->records().find_key(handle_->node.handle, key.data(), key.size(), &index, &err);
  if (rc == STOWAGE_NOT_FOUND) return std::nullopt;
  st.check(rc, err);
  return index;
}

bool Records::contains(std::string_view key) const {
  return contains(std::vector<std::string_view>{key})[0];
}

std::vector<bool> Records::contains(const std::vector<std::string_view>& keys) const {
  Store::State& st = live(store_);
  std::vector<const char*> data(keys.size());
  std::vector<uint64_t> sizes(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) data[i] = keys[i].data(), sizes[i] = keys[i].size();
  std::vector<uint8_t> present(keys.size());
  detail::CallError err;
  std::shared_lock<std::shared_mutex> lock(st.mutex);
  st.check(handle_->records().contains_keys(handle_->node.handle, keys.size(), data.data(),
                                            sizes.data(), present.data(), &err),
           err);
  return std::vector<bool>(present.begin(), present.end());
}

void Records::append(const std::vector<std::string>& records) const {
  Store::State& st = live(store_);
  std::vector<const void*> data;
  std::vector<uint64_t> sizes;
  for (const std::string& r : records) {
    data.push_back(r.data());
    sizes.push_back(r.size());
  }
  handle_->require(handle_->records().append != nullptr, "append records");
  detail::CallError err;
  std::unique_lock<std::shared_mutex> lock(st.mutex);
  st.check(handle_->records().append(handle_->node.handle, records.size(), data.data(),
                                     sizes.data(), &err),
           err);
}

}  // namespace stowage
