// Format detection: one probe of a path, every format's score, and why none won.
#include <stowage/stowage.hpp>

#include <stowage/plugin_util.hpp>  // redact_userinfo
#include <stowage/storage.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace stowage {

namespace {

// Why the storage could not be read: detection's message says so (an HTTP
// status, a refused connection, a timeout, a symlink loop), not "no format".
struct StorageFailure {
  ErrorCode code;
  std::string message;
};

template <class F>
std::optional<StorageFailure> failure_of(F&& call) {
  try {
    call();
  } catch (const sdk::Error& e) {
    return StorageFailure{static_cast<ErrorCode>(e.code()), e.what()};
  } catch (const Error& e) {
    return StorageFailure{e.code(), e.what()};
  } catch (const std::exception& e) {
    return StorageFailure{ErrorCode::io, e.what()};
  }
  return std::nullopt;
}

// What every format's identify is given, read once (GDAL's GDALOpenInfo):
// the path's kind and size, a file's first and last bytes, a directory's
// names. Over HTTP that is a HEAD and two ranged GETs, or one listing,
// where six formats probing on their own made 10-15 requests.
struct PathProbe {
  stowage_probe probe{};
  std::string header, trailer, entries;
  // The storage failed: kind is STOWAGE_PROBE_KIND_UNKNOWN (formats that
  // name paths of their own, a URI scheme of their own, still can decide).
  std::optional<StorageFailure> failure;
  std::optional<StorageFailure> list_failure;  // a directory that could not be listed

  // `metadata_files`: every format's root file names, asked for by name
  // where the path reads as absent (an object store's prefix).
  PathProbe(Registry& registry, const std::string& path,
            const std::vector<std::string>& metadata_files) {
    probe.struct_size = sizeof(stowage_probe);
    probe.path = path.data();
    probe.path_size = path.size();
    probe.kind = STOWAGE_PROBE_KIND_UNKNOWN;
    failure = failure_of([&] {
      Registry::StorageBackend b = registry.storage(path);
      sdk::Storage storage(b.vtable, b.handle, b.capabilities);
      probe.kind = storage.kind(path, &probe.size);
      if (probe.kind == STOWAGE_ENTRY_ABSENT && holds_any(storage, path, metadata_files)) {
        probe.kind = STOWAGE_ENTRY_DIRECTORY;  // listed stays 0: formats ask by name
        return;
      }
      if (probe.kind == STOWAGE_ENTRY_FILE) read_ends(storage, path);
      if (probe.kind == STOWAGE_ENTRY_DIRECTORY) list(storage, path);
    });
    if (failure) {  // no half-read file for a format to judge
      probe.kind = STOWAGE_PROBE_KIND_UNKNOWN;
      header.clear();
      trailer.clear();
    }
    probe.header = header.size() ? reinterpret_cast<const uint8_t*>(header.data()) : nullptr;
    probe.header_size = header.size();
    probe.trailer = trailer.size() ? reinterpret_cast<const uint8_t*>(trailer.data()) : nullptr;
    probe.trailer_size = trailer.size();
  }

 private:
  // A "folder" of an object store (S3's HTTP interface, nginx serving files
  // only) is no object: its HEAD is 404 though files are under it. It is a
  // directory when a format's metadata file is there (a HEAD each, only for
  // a path that reads as absent).
  static bool holds_any(const sdk::Storage& storage, const std::string& path,
                        const std::vector<std::string>& names) {
    const std::string dir = !path.empty() && path.back() == '/' ? path : path + "/";
    return std::any_of(names.begin(), names.end(), [&](const std::string& name) {
      try {
        return storage.kind(dir + name) == STOWAGE_ENTRY_FILE;
      } catch (const sdk::Error&) {  // a name the server refuses: not this one
        return false;
      }
    });
  }
  void read_ends(const sdk::Storage& storage, const std::string& path) {
    header =
        storage.read(path, 0, std::min<uint64_t>(probe.size, STOWAGE_PROBE_HEADER_SIZE)).text();
    const uint64_t tail = std::min<uint64_t>(probe.size, STOWAGE_PROBE_TRAILER_SIZE);
    if (probe.size <= header.size())  // the whole file is in the header
      trailer = header.substr(header.size() - std::min<size_t>(tail, header.size()));
    else
      trailer = storage.read(path, probe.size - tail, tail).text();
  }
  // A server without listings leaves `listed` at 0: formats ask for the
  // names they need; why it could not list is kept for the message.
  void list(const sdk::Storage& storage, const std::string& path) {
    list_failure = failure_of([&] {
      for (const std::string& name : storage.list(path)) entries.append(name).push_back('\0');
      probe.entries = entries.data();
      probe.entries_size = entries.size();
      probe.listed = 1;
    });
  }
};

using Scores = std::vector<std::pair<std::string, int32_t>>;

// Every format's score for the probe; a plugin that fails to load scores
// nothing (plugin-list says why).
Scores score_formats(Registry& registry, const std::vector<std::string>& ids,
                     const PathProbe& probe) {
  Scores scores;
  for (const std::string& id : ids) {
    const stowage_plugin* d = nullptr;
    try {
      d = registry.load("format", id);
    } catch (const Error&) {
      continue;
    }
    auto* vt = static_cast<const stowage_format_vtable*>(d->vtable);
    scores.emplace_back(id, vt->identify(registry.host(), &probe.probe));
  }
  return scores;
}

// The formats that scored best (several: a tie; none: no format claims it).
std::vector<std::string> best_of(const Scores& scores) {
  int32_t best = 0;
  std::vector<std::string> winners;
  for (const auto& [id, score] : scores) {
    if (score > best) {
      best = score;
      winners = {id};
    } else if (score == best && score > 0) {
      winners.push_back(id);
    }
  }
  return winners;
}

std::string joined(const std::vector<std::string>& names) {
  std::string all;
  for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
  return all;
}

const char* const kNameTheFormat =
    "name the format explicitly (stowage-info --format, stowage-convert --from)";

// Why no format claims `path`: the storage failed, it is absent, or it is
// none of the formats'.
[[noreturn]] void throw_unrecognised(const std::string& path, const PathProbe& probe,
                                     const Scores& scores) {
  if (probe.failure) {
    std::string why = probe.failure->message;
    const std::string named =
        sdk::redact_userinfo(path) + ": ";  // (the storage shows no password either)
    if (why.rfind(named, 0) == 0) why.erase(0, named.size());  // named once is enough
    throw Error(probe.failure->code, path + ": cannot detect its format: " + why, path);
  }
  if (probe.probe.kind == STOWAGE_ENTRY_ABSENT)
    throw Error(ErrorCode::not_found, path + ": no such file or directory", path);
  std::vector<std::string> tried;
  for (const auto& s : scores) tried.push_back(s.first);
  std::string listing;
  if (probe.list_failure && probe.list_failure->code != ErrorCode::unsupported)
    listing = "; listing it failed: " + probe.list_failure->message;
  throw Error(ErrorCode::unsupported,
              path + ": no format plugin recognises it (tried: " +
                  (tried.empty() ? "none" : joined(tried)) + ")" + listing + "; " + kNameTheFormat,
              path);
}

// Every loadable format's metadata file names, each once, in plugin order.
std::vector<std::string> metadata_files(Registry& registry, const std::vector<std::string>& ids) {
  std::vector<std::string> names;
  for (const std::string& id : ids) {
    try {
      registry.load("format", id);
    } catch (const Error&) {
      continue;
    }
    if (std::optional<PluginInfo> info = registry.find("format", id))
      for (const std::string& name : info->metadata_files)
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

// The ids of the active (not shadowed) format plugins, loaded or not.
std::vector<std::string> format_ids(Registry& registry) {
  std::vector<std::string> ids;
  for (const PluginInfo& info : registry.plugins(false))
    if (info.kind == "format" && info.state != PluginState::shadowed) ids.push_back(info.id);
  return ids;
}

}  // namespace

std::vector<std::pair<std::string, int32_t>> Registry::identify(const std::string& path) {
  const std::vector<std::string> ids = format_ids(*this);
  return score_formats(*this, ids, PathProbe(*this, path, metadata_files(*this, ids)));
}

std::string Registry::detect_format(const std::string& path) {
  const std::vector<std::string> ids = format_ids(*this);
  const PathProbe probe(*this, path, metadata_files(*this, ids));
  const Scores scores = score_formats(*this, ids, probe);
  const std::vector<std::string> winners = best_of(scores);
  if (winners.empty()) throw_unrecognised(path, probe, scores);
  if (winners.size() > 1)
    throw Error(
        ErrorCode::invalid_argument,
        path + ": several formats claim it equally (" + joined(winners) + "); " + kNameTheFormat,
        path);
  return winners.front();
}

std::optional<std::string> Registry::format_for_extension(const std::string& path) {
  std::vector<std::string> matches;
  for (const PluginInfo& info : plugins(true)) {
    if (info.kind != "format" || info.state != PluginState::loaded) continue;
    for (const std::string& ext : info.extensions)
      if (path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0)
        matches.push_back(info.id);
  }
  if (matches.size() == 1) return matches.front();
  return std::nullopt;
}

}  // namespace stowage
