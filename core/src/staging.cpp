// Mode "w" as a transaction (staging.hpp): where a new dataset is built
// until close() publishes it, and how a message names it.
#include "staging.hpp"

#include "metadata_last.hpp"

#include "plugin_call.hpp"
#include "store_state.hpp"

#include <algorithm>
#include <cstring>

namespace stowage::detail {

std::string trimmed_location(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/' && p.compare(p.size() - 3, 3, "://") != 0) p.pop_back();
  return p;
}

sdk::Storage storage_of(Registry& registry, const std::string& location) {
  Registry::StorageBackend b = registry.storage(location);
  return sdk::Storage(b.vtable, b.handle, b.capabilities);
}

namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
    text.replace(at, from.size(), to);
}

// A name the storage backends or stowage::copy give their staging: the
// copy's ".stowage-convert.<token>.<name>", the backends' ".<name>.stowage-tmp.<pid>.<n>".
bool is_staging_component(std::string_view name) {
  return name.rfind(".stowage-", 0) == 0 || name.find(".stowage-tmp.") != std::string_view::npos;
}

}  // namespace

Staging::Staging(Registry& registry, const std::string& path,
                 const std::vector<std::string>& extensions)
    : storage_(storage_of(registry, path)), path_(trimmed_location(path)), extensions_(extensions) {
  const size_t slash = path_.rfind('/');
  parent_ = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
  name_ = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  directory_ = storage_call(path_, [&] { return storage_.stage_directory(path_); });
  location_ = directory_ + "/" + name_;
}

Staging::~Staging() {
  if (!done_) discard();
}

std::string user_words(std::string text, const std::string& directory, const std::string& location,
                       const std::string& path) {
  if (directory.empty()) return text;
  const std::string p = trimmed_location(path);
  const size_t slash = p.rfind('/');
  replace_all(text, location, p);
  // A plugin may have named it already without the staging component
  // (sdk::without_temporaries): "<parent>/<name>/<name>".
  replace_all(text, without_temporary_names(location), p);
  replace_all(text, directory + "/", slash == std::string::npos ? "" : p.substr(0, slash + 1));
  replace_all(text, directory, p);
  return text;
}

std::string without_temporary_names(std::string text) {
  static const std::string kTmp = ".stowage-tmp.";
  for (size_t at; (at = text.find(kTmp)) != std::string::npos;) {
    // ".<name>.stowage-tmp.<pid>.<n>" is one path component: it starts after
    // the '/' (or space, or quote) before it.
    const size_t before = at == 0 ? std::string::npos : text.find_last_of("/ '\"", at - 1);
    const size_t begin = before == std::string::npos ? 0 : before + 1;
    size_t end = at + kTmp.size();
    auto digits = [&] {
      while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    };
    digits();
    if (end + 1 < text.size() && text[end] == '.' && text[end + 1] >= '0' && text[end + 1] <= '9')
      ++end, digits();
    const size_t name = begin < at && text[begin] == '.' ? begin + 1 : begin;
    text.replace(begin, end - begin, text.substr(name, at - name));
  }
  return text;
}

std::string Staging::in_user_words(std::string text) const {
  return user_words(std::move(text), directory_, location_, path_);
}

void Staging::publish() {
  try {
    std::vector<std::string> made = storage_.list(directory_);
    for (std::string& m : made)
      if (!m.empty() && m.back() == '/') m.pop_back();
    // The entry with the user's name goes first (or, for a dataset named by
    // its base, "x" for x.datg, the one with the format's extension): a set
    // publish names its journal after it, which the format's open recovers.
    auto rank = [&](const std::string& m) {
      if (m == name_) return 0;
      for (const std::string& ext : extensions_)
        if (m == name_ + ext) return 1;
      return 2;
    };
    std::stable_sort(made.begin(), made.end(),
                     [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
    std::vector<std::pair<std::string, std::string>> renames;
    for (const std::string& m : made) renames.emplace_back(directory_ + "/" + m, parent_ + m);
    if (!renames.empty()) storage_.move(renames, STOWAGE_PUBLISH_REPLACE);
  } catch (const sdk::Error& e) {
    discard();
    throw Error(static_cast<ErrorCode>(e.code()), without_temporary_names(in_user_words(e.what())),
                path_);
  }
  done_ = true;
  try {
    storage_.remove_if_exists(
        directory_);  // what is left: the old dataset, swapped out, or nothing
  } catch (const sdk::Error&) {
  }
}

void Staging::discard() noexcept {
  done_ = true;
  try {
    storage_.remove_if_exists(directory_);
  } catch (...) {
  }
}

bool can_stage(Registry& registry, const std::string& path) {
  try {
    sdk::Storage storage = storage_of(registry, path);
    if (!storage.can(STOWAGE_CAP_MOVE | STOWAGE_CAP_LIST)) return false;
  } catch (const Error&) {
    return false;
  }
  const std::string p = trimmed_location(path);
  const size_t scheme = p.find("://");
  size_t begin = scheme == std::string::npos ? 0 : scheme + 3;
  for (size_t slash; (slash = p.find('/', begin)) != std::string::npos; begin = slash + 1)
    if (is_staging_component(std::string_view(p).substr(begin, slash - begin))) return false;
  return true;
}

// An identify() score from which a path is taken for a dataset of the
// format: datg gives 10 to any file named *.datg, a text file included.
constexpr int32_t kDatasetScore = 50;

Existing what_exists(Registry& registry, const std::string& path, const std::string& format) {
  Existing e;
  const std::string p = trimmed_location(path);
  sdk::Storage storage = storage_of(registry, p);
  uint64_t size = 0;
  const int32_t kind = storage_call(p, [&] { return storage.kind(p, &size); });
  e.entry = kind != STOWAGE_ENTRY_ABSENT;
  if (kind == STOWAGE_ENTRY_FILE) e.empty = size == 0;
  if (kind == STOWAGE_ENTRY_DIRECTORY) {
    try {
      e.empty = storage.list(p).empty();
    } catch (const sdk::Error&) {
    }
  }
  try {
    for (const auto& [id, score] : registry.identify(p))
      if (id == format && score >= kDatasetScore) e.of_format = true;
  } catch (const Error&) {
  }
  return e;
}

void refuse_replacing_other(const std::string& path, const std::string& format,
                            const Existing& existing) {
  if (!existing.entry || existing.empty || existing.of_format) return;
  throw Error(
      ErrorCode::invalid_argument,
      path + " exists and is not a dataset of format " + format +
          "; mode \"w\" replaces only a dataset of its format, so nothing was written (remove or rename it "
          "yourself if it is to go)",
      path);
}

namespace {

// A new dataset where nothing renames: its metadata is held until close()
// (metadata_last.hpp). Mode "w" over an old one removes it first, its
// metadata before its chunks, so no reader finds old metadata over new chunks.
void hold_metadata(Store::State& st, Mode mode) {
  Registry& registry = *st.registry;
  const std::string path = trimmed_location(st.path);
  const Existing existing = what_exists(registry, path, st.format);
  if (mode == Mode::create && (existing.entry || existing.of_format)) return;  // opened as it is
  refuse_replacing_other(st.path, st.format, existing);
  const std::vector<std::string> names = registry.find("format", st.format)->metadata_files;
  if (existing.entry)
    storage_call(st.path, [&] {
      sdk::Storage storage = storage_of(registry, path);
      for (const std::string& name : names) storage.remove_if_exists(path + "/" + name);
      storage.remove_if_exists(path);
    });
  st.metadata_last = std::make_unique<MetadataLast>(registry, path, names);
}

}  // namespace

void prepare_writing(Store::State& st, Mode mode, const stowage_plugin& plugin) {
  Registry& registry = *st.registry;
  const std::string path = trimmed_location(st.path);
  if ((mode == Mode::truncate || mode == Mode::create) && can_stage(registry, path)) {
    const Existing existing = what_exists(registry, path, st.format);
    if (mode == Mode::truncate || !(existing.entry || existing.of_format)) {
      if (mode == Mode::truncate) refuse_replacing_other(st.path, st.format, existing);
      std::vector<std::string> extensions;
      if (std::optional<PluginInfo> info = registry.find("format", st.format))
        extensions = info->extensions;
      try {
        st.staging = std::make_unique<Staging>(registry, path, extensions);
      } catch (const Error& e) {  // the directory beside it cannot be made: say what was being done
        throw Error(e.code(), st.path + ": cannot create the dataset: " + e.what(), st.path);
      }
      st.location = st.staging->location();
      st.staged_directory = st.staging->directory();
    }
  } else if ((mode == Mode::truncate || mode == Mode::create) &&
             publishes_metadata_last(registry, path, st.format)) {
    hold_metadata(st, mode);
  }
  if (plugin.capabilities & (STOWAGE_CAP_SHARED_WRITES | STOWAGE_CAP_MERGES_AT_CLOSE)) return;
  storage_call(st.path, [&] {
    sdk::Storage storage = storage_of(registry, path);
    if (!storage.can_lock_keys()) return;
    auto held = std::make_unique<WriterLock>();
    held->lock = storage.lock_key(path, true);
    if (!held->lock.held())
      throw Error(
          ErrorCode::invalid_argument,
          st.path + ": another writer has this dataset open (in this process or another); format " +
              st.format +
              " publishes the whole dataset at close, so two writers would lose one's writes. "
              "Close the other first, or write a format that takes several writers at once (n5, zarr)",
          st.path);
    st.writer_lock = std::move(held);
  });
}

}  // namespace stowage::detail

namespace stowage {

using detail::CallError;
using detail::throw_status;
using detail::user_words;

void Store::State::fail(int rc, const stowage_error& err) const {
  const std::string message(err.message, strnlen(err.message, sizeof err.message));
  if (staged_directory.empty() && message.find(".stowage-tmp.") == std::string::npos)
    throw_status(rc, err, path, plugin_name());
  CallError mapped;
  mapped.code = err.code;
  const std::string text =
      detail::without_temporary_names(user_words(message, staged_directory, location, path));
  const size_t n = std::min(text.size(), sizeof mapped.message - 1);
  std::memcpy(mapped.message, text.data(), n);
  mapped.message[n] = '\0';
  throw_status(rc, mapped, path, plugin_name());
}

}  // namespace stowage
