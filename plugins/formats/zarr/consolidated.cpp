#include "consolidated.hpp"

#include "store.hpp"

#include <stowage/plugin.hpp>

#include <set>

namespace zarr {

namespace sdk = stowage::sdk;
using stowage::sdk::corrupt;
using stowage::sdk::invalid;
using stowage::sdk::unsupported;

namespace {

bool is_metadata_key(const std::string& key) {
  for (const char* name : {kGroupFile, kArrayFile, kAttributesFile}) {
    const std::string n = name;
    if (key == n || (key.size() > n.size() &&
                     key.compare(key.size() - n.size() - 1, std::string::npos, "/" + n) == 0))
      return true;
  }
  return false;
}

}  // namespace

Consolidated Consolidated::parse(std::string_view text, const std::string& file) {
  const json j = parse_object(text, file);
  if (!j.contains("zarr_consolidated_format"))
    corrupt(file + ": has no \"zarr_consolidated_format\"");
  if (j["zarr_consolidated_format"] != 1)
    unsupported(file + ": \"zarr_consolidated_format\" " + j["zarr_consolidated_format"].dump() +
                " (this reads 1)");
  if (!j.contains("metadata") || !j["metadata"].is_object())
    corrupt(file + ": \"metadata\" must be an object of metadata files, got " +
            (j.contains("metadata") ? j["metadata"].dump() : std::string("none")));
  Consolidated c;
  for (auto it = j["metadata"].begin(); it != j["metadata"].end(); ++it) {
    if (!is_metadata_key(it.key())) continue;  // zarr-python keeps only these; others are ignored
    if (!it.value().is_object())
      corrupt(file + ": \"" + it.key() + "\" must hold a JSON object, got " +
              std::string(it.value().type_name()));
    c.entries_[it.key()] = it.value();
  }
  if (!c.entries_.count(kGroupFile) && !c.entries_.count(kArrayFile))
    corrupt(file + ": holds no \"" + kGroupFile + "\" or \"" + kArrayFile + "\" for the root");
  return c;
}

std::optional<std::string> Consolidated::text(const std::string& key) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second.dump();
}

std::vector<std::string> Consolidated::children(const std::string& dir) const {
  const std::string prefix = dir.empty() ? "" : dir + "/";
  std::set<std::string> names;
  for (auto it = entries_.lower_bound(prefix);
       it != entries_.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    const std::string rest = it->first.substr(prefix.size());
    const size_t slash = rest.find('/');
    if (slash == std::string::npos || slash == 0) continue;
    const std::string file = rest.substr(slash + 1);
    if (file == kGroupFile || file == kArrayFile) names.insert(rest.substr(0, slash));
  }
  return {names.begin(), names.end()};
}

std::string consolidated_text(const std::map<std::string, json>& entries) {
  nlohmann::json metadata =
      nlohmann::json::object();  // std::map: keys sorted, as zarr-python's sort_keys
  for (const auto& [key, value] : entries) metadata[key] = nlohmann::json::parse(value.dump());
  const nlohmann::json j = {{"metadata", metadata}, {"zarr_consolidated_format", 1}};
  return j.dump(4, ' ', true, nlohmann::json::error_handler_t::strict);
}

// ---- the store's side -----------------------------------------------------------

// The open option "consolidated": true, false or absent. Read only, a
// .zmetadata is used unless it is false; writable, see README.md.
void ZarrStore::open_consolidated(const json& options, bool existed) {
  const json option = options.value("consolidated", json());
  if (!option.is_null() && !option.is_boolean())
    invalid("zarr: the open option \"consolidated\" must be true or false, got " + option.dump());
  if (version_ == 3) {  // v3 has no .zmetadata
    if (option == true)
      invalid(root_ + ": consolidated metadata (.zmetadata) is Zarr v2's; this store is v3");
    return;
  }
  const std::string file = root_ + "/" + kConsolidatedFile;
  if (writable_) {
    const bool had = existed && storage_.is_file(file);
    consolidate_on_close_ = option == true || (had && option != false);
    metadata_changed_ = !had;  // nothing to remove on the first change
    return;
  }
  if (option == false || !existed) return;
  std::optional<std::string> text = read_metadata(file);
  if (text) consolidated_ = Consolidated::parse(*text, file);
}

std::string ZarrStore::relative(const std::string& path) const {
  return path.size() > root_.size() ? path.substr(root_.size() + 1) : std::string();
}

// Metadata read from .zmetadata is named as what it is: "<root>/.zmetadata
// ("a/.zarray")", so a bad entry points at the file that holds it.
std::string ZarrStore::metadata_name(const std::string& file) const {
  if (!consolidated_) return file;
  return root_ + "/" + kConsolidatedFile + " (\"" + relative(file) + "\")";
}

// A store being written never holds a stale .zmetadata: the first change
// removes it; close() writes it again when asked.
void ZarrStore::metadata_changing() {
  if (metadata_changed_) return;
  storage_.remove_if_exists(root_ + "/" + kConsolidatedFile, 0);
  metadata_changed_ = true;
}

void ZarrStore::close_consolidated() {
  if (!writable_ || !consolidate_on_close_ || !metadata_changed_) return;
  write_consolidated();
  metadata_changed_ = false;
}

// Every node's metadata files under `dir`, read from the files themselves.
void ZarrStore::collect_metadata(const std::string& dir,
                                 std::map<std::string, json>& entries) const {
  const std::string prefix = dir == root_ ? "" : relative(dir) + "/";
  for (const char* name : {kGroupFile, kArrayFile, kAttributesFile})
    if (std::optional<std::string> text = read_metadata(dir + "/" + name))
      entries[prefix + name] = parse_object(*text, dir + "/" + name);
  if (kind_of(dir) != Kind::group) return;  // an array's directories are its chunks
  for (std::string& name : storage_.list(dir)) {
    if (name.empty() || name.back() != '/' || name.rfind(sdk::kStagingPrefix, 0) == 0) continue;
    name.pop_back();
    if (kind_of(dir + "/" + name) != Kind::none) collect_metadata(dir + "/" + name, entries);
  }
}

void ZarrStore::write_consolidated() {
  std::map<std::string, json> entries;
  collect_metadata(root_, entries);
  storage_.write(root_ + "/" + kConsolidatedFile, consolidated_text(entries));
}

}  // namespace zarr
