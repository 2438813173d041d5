// Publishing a copy's new destination through the storage layer only: the
// host's staging (staging.hpp) and sdk::Storage's list, stat, lock, remove
// and move. A node staged in an existing container (NodeStaging) holds the
// storage's lock on its hidden name while it lives, so a later copy tells a
// killed copy's leftover (lock free) from a running one's (lock held) on any
// storage with a lock part, with no process ids.
#include "publish.hpp"

#include <cstdio>
#include <random>

namespace stowage::copying {

static const std::string kTempPrefix = sdk::kStagingPrefix;

std::string new_staging_token() {
  std::random_device device;
  const uint64_t bits = (uint64_t{device()} << 32) ^ device();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(bits));
  return hex;
}

// ".stowage-convert.<token>.<name>", with the name cut so the whole stays
// within the 255 bytes a file name may have.
std::string staged_name(const std::string& token, const std::string& name) {
  std::string head = kTempPrefix + token + ".";
  return head + name.substr(0, std::min(name.size(), 255 - std::min<size_t>(head.size(), 255)));
}

void clean_stale_temporaries(const sdk::Storage& storage, const std::string& parent,
                             const std::string& name) {
  std::vector<std::string> entries;
  try {
    entries = storage.list(parent);
  } catch (const sdk::Error&) {
    return;  // no such directory yet: nothing was left there
  }
  if (!storage.can_lock_keys()) return;  // a running copy's node cannot be told from a dead one's
  for (std::string f : entries) {
    if (!f.empty() && f.back() == '/') f.pop_back();
    if (f.rfind(kTempPrefix, 0) != 0) continue;
    const size_t dot = f.find('.', kTempPrefix.size());
    if (dot == std::string::npos ||
        f != staged_name(f.substr(kTempPrefix.size(), dot - kTempPrefix.size()), name))
      continue;
    try {
      // Free: its copy was killed (the kernel or the backend let the lock go).
      sdk::Lock writer = storage.lock_key(parent + "/" + f, /*try_only=*/true);
      if (writer.held()) storage.remove_if_exists(parent + "/" + f);
    } catch (const sdk::Error&) {
    }
  }
}

uint64_t stored_bytes(const sdk::Storage& storage, const std::string& key) {
  uint64_t size = 0;
  const int32_t kind = storage.kind(key, &size);
  if (kind == STOWAGE_ENTRY_FILE) return size;
  if (kind != STOWAGE_ENTRY_DIRECTORY) return 0;
  uint64_t sum = 0;
  for (std::string entry : storage.list(key)) {
    if (!entry.empty() && entry.back() == '/') entry.pop_back();
    sum += stored_bytes(storage, key + "/" + entry);
  }
  return sum;
}

namespace {

// "Read-only file system" out of "<path>: cannot create directory: Read-only file system".
std::string reason_of(const std::string& message) {
  const size_t colon = message.rfind(": ");
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

}  // namespace

// "x.datg" is staged as "./x.datg": a file set's journal and files are then
// named from the same directory.
NewDestination::NewDestination(Registry& registry, const std::string& path,
                               const std::string& format)
    : typed_(detail::trimmed_location(path)),
      path_(typed_.find('/') == std::string::npos ? "./" + typed_ : typed_),
      storage_(detail::storage_of(registry, path_)) {
  const size_t slash = path_.rfind('/');
  parent_ = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
  std::vector<std::string> extensions;
  if (std::optional<PluginInfo> info = registry.find("format", format))
    extensions = info->extensions;
  try {
    // A copy killed while publishing a file set left its journal: finish it first.
    detail::storage_call(path_, [&] { return storage_.recover(path_); });
    staging_ = std::make_unique<detail::Staging>(registry, path_, extensions);
  } catch (const Error& e) {
    throw Error(e.code(), path + ": cannot write there: " + reason_of(e.what()), path);
  }
}

std::string NewDestination::in_user_words(std::string text) const {
  text = sdk::without_temporaries(
      detail::without_temporary_names(staging_->in_user_words(std::move(text))));
  if (path_ != typed_)
    for (size_t at; (at = text.find(path_)) != std::string::npos;)
      text.replace(at, path_.size(), typed_);
  const std::string twice =
      typed_ + ": " + typed_ + ": ";  // the store's path and its staged file's
  for (size_t at; (at = text.find(twice)) != std::string::npos;) text.erase(at, typed_.size() + 2);
  return text;
}

Error NewDestination::in_user_words(const Error& e) const {
  return Error(e.code(), in_user_words(e.what()), in_user_words(e.path()), e.plugin());
}

uint64_t NewDestination::publish(bool overwrite) {
  uint64_t bytes = 0;
  try {
    const std::string dir = staging_->directory();
    for (std::string name : storage_.list(dir)) {
      if (!name.empty() && name.back() == '/') name.pop_back();
      if (!overwrite && storage_.exists(parent_ + name))
        throw Error(ErrorCode::invalid_argument,
                    in_user_words(parent_ + name) + " exists; use --overwrite");
      bytes += stored_bytes(storage_, dir + "/" + name);
    }
  } catch (const sdk::Error& e) {
    throw Error(static_cast<ErrorCode>(e.code()), in_user_words(e.what()), typed_);
  }
  try {
    staging_->publish();
  } catch (const Error& e) {
    throw in_user_words(e);
  }
  return bytes;
}

NodeStaging::NodeStaging(Registry& registry, Store& dst, const std::string& node)
    : dst_(dst), final_(node), storage_(detail::storage_of(registry, dst.path())) {
  size_t slash = node.rfind('/');
  std::string parent = slash == std::string::npos ? "" : node.substr(0, slash);
  leaf_ = slash == std::string::npos ? node : node.substr(slash + 1);
  hidden_leaf_ = staged_name(new_staging_token(), leaf_);
  staged_ = join(parent, hidden_leaf_);
  // A format that moves nodes keeps node a/b in the directory <root>/a/b:
  // what killed copies left there goes first.
  const std::string parent_dir = parent.empty() ? dst.path() : dst.path() + "/" + parent;
  clean_stale_temporaries(storage_, parent_dir, leaf_);
  node_dir_ = parent_dir + "/" + hidden_leaf_;
  if (storage_.can_lock_keys())
    writer_ = detail::storage_call(dst.path(), [&] { return storage_.lock_key(node_dir_); });
}

void NodeStaging::publish(bool replace) {
  dst_.move(staged_, final_, replace);
  published_ = true;
}

void NodeStaging::discard() noexcept {
  if (published_) return;
  try {
    dst_.remove(staged_);
  } catch (...) {
  }
  try {
    storage_.remove_if_exists(node_dir_);
  } catch (...) {
  }
}

Error NodeStaging::in_user_words(const Error& e) const {
  auto rewrite = [&](std::string text) {
    text = sdk::without_temporaries(std::move(text));
    for (size_t at; (at = text.find(hidden_leaf_)) != std::string::npos;)
      text.replace(at, hidden_leaf_.size(), leaf_);
    return text;
  };
  return Error(e.code(), rewrite(e.what()), rewrite(e.path()), e.plugin());
}

}  // namespace stowage::copying
