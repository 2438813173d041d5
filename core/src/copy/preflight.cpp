// Every refusal stowage::copy makes before a byte is written: the paths, the
// formats and codec asked for, the open options against what the format
// declares, and what the open destination says it takes.
#include "internal.hpp"
#include "../params.hpp"
#include "../storage_choice.hpp"

#include <stowage/plugin.h>

#include <algorithm>
#include <sstream>

namespace stowage::copying {

namespace fs = std::filesystem;

Place place_of(const std::string& path, const std::string& node) {
  std::error_code ec;
  Place p;
  if (storage_scheme(path) !=
      "file")  // a URL is its own place, not a path below the working directory
    p.path = fs::path(path).lexically_normal();
  else if (fs::path real = fs::weakly_canonical(fs::absolute(path), ec); !ec)
    p.path = real;
  else
    p.path = fs::absolute(path).lexically_normal();
  std::stringstream ss(node);
  std::string part;
  while (std::getline(ss, part, '/'))
    if (!part.empty() && part != ".") p.node.push_back(part);
  return p;
}

// Whether `inner` is `outer` or below it (paths or node paths, by component).
template <class Seq>
bool within(const Seq& inner, const Seq& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i)
    if (i == inner.end() || *i != *o) return false;
  return true;
}

// Refuses, before anything is written, a copy whose destination is its source,
// lies inside it (the copy would read what it writes: t.n5 -> t.n5::copy
// recursed without end), or holds it (replacing the destination would delete
// the source).
void refuse_overlap(const std::string& source, const std::string& destination, const Place& src,
                    const Place& dst) {
  auto refuse = [&](const std::string& why) {
    throw Error(ErrorCode::invalid_argument,
                "'" + source + "' -> '" + destination + "': " + why + "; nothing was written");
  };
  const bool same_container = src.path == dst.path;
  if (same_container && src.node == dst.node) refuse("the source and the destination are the same");
  if (same_container ? within(dst.node, src.node) : within(dst.path, src.path))
    refuse("the destination is inside the source; write it elsewhere");
  if (same_container ? within(src.node, dst.node) : within(src.path, dst.path))
    refuse("the source is inside the destination, which the copy would replace");
}

// --overwrite replaces a dataset of the destination's format, never anything
// else that happens to have its name (a directory of notes, another format's
// files).
void refuse_replacing_other(const std::string& dst_path, const std::string& to,
                            Registry& registry) {
  for (const auto& [id, score] : registry.identify(dst_path))
    if (id == to && score > 0) return;
  throw Error(ErrorCode::invalid_argument,
              dst_path + " exists and is not a dataset of format " + to +
                  "; --overwrite replaces only a dataset of the "
                  "destination's format, so remove or rename it yourself if it is to go");
}

// ---- what the user asked for, checked before any byte is written ---------------------------

// The formats that declare capability `cap` (for shards: zarr).
std::string ids_with(Registry& registry, uint64_t cap) {
  std::string list;
  for (const PluginInfo& p : registry.plugins(true))
    if (p.kind == "format" && p.state == PluginState::loaded && (p.capabilities & cap))
      list += (list.empty() ? "" : ", ") + p.id;
  return list.empty() ? "none found on the plugin path" : list;
}

// Codecs: the bytes -> bytes ones, which a compression slot takes (loaded
// to know their kind: this is the error path).
std::string ids_of(Registry& registry, const char* kind) {
  std::string list;
  const bool codecs = std::string(kind) == "codec";
  for (const PluginInfo& p : registry.plugins(codecs))
    if (p.kind == kind && p.state != PluginState::shadowed && p.codec_kind != "array")
      list += (list.empty() ? "" : ", ") + p.id;
  return list.empty() ? "none found on the plugin path" : list;
}

// A format id the registry has (else the valid ones are listed).
void require_format(Registry& registry, const std::string& id, const char* role) {
  if (!id.empty() && !registry.find("format", id))
    throw Error(ErrorCode::invalid_argument,
                std::string(role) + " format '" + id +
                    "' is not known; the formats: " + ids_of(registry, "format"));
}

// The codec asked for must exist, take every parameter given (a misspelt
// 'lvl' was written into the metadata and ignored) and accept their values.
// Returns its canonical id (the registry resolves aliases), "" for none.
std::string require_codec(Registry& registry, const json& compression) {
  if (compression.is_null()) return {};
  Codec codec;
  try {
    codec = registry.codec(compression);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::not_found)
      throw Error(ErrorCode::invalid_argument,
                  "compression '" + compression.value("type", "") +
                      "' is not known; the codecs: " + ids_of(registry, "codec"));
    throw Error(ErrorCode::invalid_argument,
                std::string("compression ") + compression.dump() + ": " + e.what());
  }
  std::optional<PluginInfo> info = registry.find("codec", codec.id());
  json schema = json::parse(info ? info->params_schema : "{}", nullptr, false);
  for (const auto& [key, value] : compression.items()) {
    if (key == "type" || (schema.is_object() && schema.contains(key))) continue;
    std::string known;
    for (const auto& [name, spec] : schema.items()) known += (known.empty() ? "" : ", ") + name;
    throw Error(ErrorCode::invalid_argument,
                "compression " + compression.dump() + ": " + codec.id() + " has no parameter '" +
                    key + "'; its parameters: " + (known.empty() ? "none" : known));
  }
  return codec.id();
}

// Dimension names must be given and distinct (Daf and datg key labels by them).
void require_axes(const std::vector<std::string>& axes) {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].empty())
      throw Error(ErrorCode::invalid_argument,
                  "--axes: name " + std::to_string(i + 1) + " is empty");
    for (size_t j = 0; j < i; ++j)
      if (axes[j] == axes[i])
        throw Error(ErrorCode::invalid_argument,
                    "--axes: '" + axes[i] + "' names two dimensions; each needs its own name");
  }
}

// The open options for the destination, checked against those its format
// declares (its params_schema) before anything is written: an unknown or
// invalid one is refused naming it, the format and what it takes. A new
// store gets the defaults of the options that set what it is made as
// ("on_create"), so the summary says what was written. --shards needs a
// format that declares STOWAGE_CAP_SHARDS.
json destination_options(const CopyOptions& options, const std::string& to, bool new_store,
                         Registry& registry) {
  json open = options.open_options.is_null() ? json::object() : options.open_options;
  if (!open.is_object())
    throw Error(ErrorCode::invalid_argument,
                "the open options must be a JSON object, not " + open.dump());
  const stowage_plugin* format = registry.load("format", to, "");
  json schema = json::parse(format->params_schema ? format->params_schema : "{}", nullptr, false);
  if (!schema.is_object()) schema = json::object();
  for (const auto& [key, value] : open.items()) {
    if (!schema.contains(key))
      throw Error(ErrorCode::invalid_argument,
                  "open option '" + key + "': format " + to +
                      " has no such option; its open options: " + detail::options_text(schema));
    if (!detail::takes(schema[key], value))
      throw Error(ErrorCode::invalid_argument, "open option " + key + "=" + value.dump() +
                                                   ": format " + to + " takes " +
                                                   detail::takes_text(schema[key]) + " for " + key);
  }
  if (new_store)
    for (const auto& [key, spec] : schema.items())
      if (spec.value("on_create", false) && !open.contains(key) && spec.contains("default"))
        open[key] = spec["default"];
  if (!options.shards.empty() && !(format->capabilities & STOWAGE_CAP_SHARDS))
    throw Error(ErrorCode::invalid_argument,
                "--shards: format " + to + " writes no shards; the formats that do: " +
                    ids_with(registry, STOWAGE_CAP_SHARDS) + " (leave out --shards or give --to)");
  return open;
}

// What the open destination declares it writes (plugin.h, the root's
// "store"), checked before any data is written: shards where it takes
// none (a Zarr v2 store says why). A single-dataset format (.npy) has no
// root to describe until it is created, and declares nothing.
json destination_facts(const Store& dst, const CopyOptions& options, Registry& registry) {
  json facts = json::object();
  const std::optional<PluginInfo> format = registry.find("format", dst.format());
  if (format && (format->capabilities & STOWAGE_CAP_GROUPS)) {
    const NodeInfo root = dst.describe("");
    if (root.raw.contains("store") && root.raw["store"].is_object()) facts = root.raw["store"];
  }
  const json shards = facts.value("shards", json(true));
  if (!options.shards.empty() && shards != true)
    throw Error(ErrorCode::invalid_argument,
                "--shards: " + dst.path() + " takes no shards" +
                    (shards.is_string() ? ": " + shards.get<std::string>() : std::string()) +
                    "; leave out --shards or the open options that made it so",
                dst.path());
  return facts.value("multiscales", json::object());
}

}  // namespace stowage::copying
