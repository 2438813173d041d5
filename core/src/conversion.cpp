// stowage::copy (copy.hpp): the conversion of any dataset, or node, into any
// format, through the core API only, so a format plugin added later converts
// without a change here.
//
// The output is built in a hidden temporary directory beside the destination
// and renamed into place at the end: an error, a cancellation or a kill
// leaves no destination (at most a temporary, which the next copy to the same
// destination removes). A node added to an existing container (DST::node) is
// written under a hidden name inside it and moved into place whole where the
// format can move nodes (NodeStaging), else written in place.
#include "internal.hpp"
#include "ome_zarr.hpp"

#include <stowage/copy.hpp>
#include <stowage/plugin_util.hpp>  // kStagingPrefix, c_order_chunks
#include <stowage/storage.hpp>      // publishing the staged output: one rename, or a journaled set

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <sstream>

namespace stowage {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

}  // namespace

// ---- the option parsers the front ends share ---------------------------------------

json parse_compression_spec(const std::string& spec) {
  if (spec.empty()) return nullptr;
  if (spec.front() == '{') {
    json j = json::parse(spec, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("type"))
      throw Error(ErrorCode::invalid_argument, "--compression: not a JSON object with a \"type\": " + spec);
    return j;
  }
  size_t colon = spec.find(':');
  json j = {{"type", spec.substr(0, colon)}};
  if (colon == std::string::npos) return j;
  std::stringstream ss(spec.substr(colon + 1));
  std::string kv;
  while (std::getline(ss, kv, ',')) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(ErrorCode::invalid_argument, "--compression: expected key=value, got '" + kv + "'");
    std::string value = kv.substr(eq + 1);
    json v = json::parse(value, nullptr, false);
    j[kv.substr(0, eq)] = v.is_discarded() ? json(value) : v;
  }
  return j;
}

std::vector<uint64_t> parse_positive_list(const std::string& text, const char* what) {
  std::vector<uint64_t> out;
  std::stringstream ss(text);
  std::string item;
  auto refuse = [&] {
    throw Error(ErrorCode::invalid_argument, std::string(what) + ": '" + text + "' is not a list of positive integers");
  };
  while (std::getline(ss, item, ',')) {
    // Digits only: strtoull alone takes "-1" as 18446744073709551615.
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos) refuse();
    errno = 0;
    unsigned long long v = std::strtoull(item.c_str(), nullptr, 10);
    if (v == 0 || errno == ERANGE) refuse();
    out.push_back(v);
  }
  if (out.empty() || (!text.empty() && text.back() == ',')) refuse();
  return out;
}

std::vector<std::string> parse_name_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  if (!text.empty() && text.back() == ',') out.emplace_back();  // "gene," names an empty second axis
  return out;
}

namespace {

// ---- progress -------------------------------------------------------------------

// Counts what was copied, reports it to the caller's callback one call at a
// time, and stops the copy when the caller cancels it.
class Progress {
 public:
  Progress(const CopyOptions& options, uint64_t total_bytes)
      : callback_(options.progress), cancel_(options.cancel), start_(Clock::now()) {
    state_.bytes_total = total_bytes;
  }
  void add(uint64_t bytes, uint64_t chunks) {
    std::lock_guard<std::mutex> lock(mutex_);
    state_.bytes_done += bytes;
    state_.chunks += chunks;
    state_.seconds = seconds();
    if (callback_) callback_(state_);
  }
  void check_cancel() const {
    if (cancel_ && cancel_->load(std::memory_order_relaxed))
      throw Error(ErrorCode::io, "interrupted; no destination was written");
  }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  uint64_t bytes() const { return state_.bytes_done; }
  uint64_t chunks() const { return state_.chunks; }

 private:
  std::function<void(const CopyProgress&)> callback_;
  const std::atomic<bool>* cancel_;
  Clock::time_point start_;
  std::mutex mutex_;
  CopyProgress state_;
};

// ---- element casts ----------------------------------------------------------------

// Whether `v` survives the conversion to To: an integer in To's range; for a
// float going to an integer type, finite and in range once truncated toward
// zero (as numpy's astype and C++ truncate); for float64 -> float32, not a
// finite value that would become infinite. Any value fits a float from an
// integer, and bool (non-zero is true).
template <class To, class From>
bool fits(From v) {
  using Lim = std::numeric_limits<To>;
  if constexpr (std::is_floating_point_v<To>) {
    if constexpr (std::is_floating_point_v<From>)
      return !std::isfinite(v) || std::fabs(static_cast<long double>(v)) <= static_cast<long double>(Lim::max());
    else
      return true;
  } else if constexpr (std::is_floating_point_v<From>) {
    // long double holds every int64/uint64 bound exactly.
    return std::isfinite(v) && static_cast<long double>(v) > static_cast<long double>(Lim::min()) - 1 &&
           static_cast<long double>(v) < static_cast<long double>(Lim::max()) + 1;
  } else if constexpr (std::is_signed_v<From>) {
    return v < 0 ? std::is_signed_v<To> && static_cast<int64_t>(v) >= static_cast<int64_t>(Lim::min())
                 : static_cast<uint64_t>(v) <= static_cast<uint64_t>(Lim::max());
  } else {
    return static_cast<uint64_t>(v) <= static_cast<uint64_t>(Lim::max());
  }
}

template <class T>
std::string value_text(T v) {
  if constexpr (std::is_floating_point_v<T>)
    if (!std::isfinite(v)) return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
  return json(v).dump();
}

// The nearest value To can hold (NaN -> 0), for CastOverflow::clip.
template <class To, class From>
To clipped(From v) {
  using Lim = std::numeric_limits<To>;
  if constexpr (std::is_floating_point_v<From>) {
    if (std::isnan(v)) return To(0);
    if constexpr (std::is_floating_point_v<To>) return v > 0 ? Lim::max() : Lim::lowest();
  }
  if constexpr (std::is_signed_v<From> || std::is_floating_point_v<From>)
    if (v < 0) return Lim::lowest();
  return Lim::max();
}

// Converts n elements of type `from` at `in` to type `to` at `out`. A value the
// new type cannot hold is an error naming it and `where(i)` (its index), unless
// `overflow` asks to clip it or (integers) wrap it modulo 2^bits. To bool, any
// non-zero value is true, as in numpy.
void cast_elements(DType from, DType to, const void* in, void* out, size_t n, CastOverflow overflow,
                   const std::function<std::string(size_t)>& where) {
  visit_dtype(to, [&](auto to_tag) {
    using To = decltype(to_tag);
    visit_dtype(from, [&](auto from_tag) {
      using From = decltype(from_tag);
      const From* p = static_cast<const From*>(in);
      To* q = static_cast<To*>(out);
      if (to == DType::boolean) {
        for (size_t i = 0; i < n; ++i) q[i] = p[i] != From(0);
        return;
      }
      for (size_t i = 0; i < n; ++i) {
        const From v = p[i];
        if (fits<To>(v)) {
          q[i] = static_cast<To>(v);
          continue;
        }
        const bool wraps = overflow == CastOverflow::wrap && std::is_integral_v<From> && std::is_integral_v<To>;
        if (wraps)
          q[i] = static_cast<To>(v);  // modulo 2^bits (gcc, and C++20 for every compiler)
        else if (overflow == CastOverflow::clip)
          q[i] = clipped<To>(v);
        else
          throw Error(ErrorCode::invalid_argument,
                      std::string(dtype_name(to)) + " cannot hold the " + dtype_name(from) + " value " +
                          value_text(v) +
                          " at " + where(i) + (std::is_floating_point_v<From> ? "; pass --cast-overflow clip to clip values into range"
                                                                             : "; pass --cast-overflow clip (or wrap) to clip (or wrap) values into range"));
      }
    });
  });
}

// "[2, 5] of in.n5::raw/s0": element i of the C-order region (offset, extent) of a node.
std::string index_text(const std::string& node, const std::vector<uint64_t>& offset,
                       const std::vector<uint64_t>& extent, size_t i) {
  std::vector<uint64_t> at(extent.size());
  for (size_t d = extent.size(); d-- > 0;) {
    at[d] = offset[d] + i % extent[d];
    i /= extent[d];
  }
  std::string text = "[";
  for (size_t d = 0; d < at.size(); ++d) text += (d ? ", " : "") + std::to_string(at[d]);
  return text + "] of " + node;
}

// ---- the conversion ------------------------------------------------------------------

uint64_t product(const std::vector<uint64_t>& v) {
  return std::accumulate(v.begin(), v.end(), uint64_t{1}, std::multiplies<>());
}

std::string join(const std::string& a, const std::string& b) {
  return a.empty() ? b : b.empty() ? a : a + "/" + b;
}

// Labels carried in attributes by formats that have no label storage (N5).
constexpr const char* kLabelsAttribute = "stowage_labels";

class Converter {
 public:
  // `codec_id`: the canonical id of opts.compression ("gzip" for "zlib"), "" if none.
  Converter(const CopyOptions& opts, Registry& registry, std::string codec_id)
      : opts_(opts), registry_(registry), codec_id_(std::move(codec_id)) {}

  uint64_t total_bytes(const Store& src, const std::string& node) const {
    NodeInfo info = src.describe(node);
    uint64_t esize = dtype_size(info.dtype);
    switch (info.kind) {
      case NodeKind::group: {
        uint64_t sum = 0;
        for (const auto& child : src.list(node)) sum += total_bytes(src, join(node, child));
        return sum;
      }
      case NodeKind::array: return info.element_count() * esize;
      case NodeKind::sparse: return info.nnz * (esize + 4);
      default: return 0;
    }
  }

  void copy(const Store& src, const std::string& src_node, Store& dst, const std::string& dst_node,
            Progress& progress) {
    progress.check_cancel();
    NodeInfo info = src.describe(src_node);
    switch (info.kind) {
      case NodeKind::group: return copy_group(src, src_node, info, dst, dst_node, progress);
      case NodeKind::array: return copy_dense(src, src_node, info, dst, dst_node, progress);
      case NodeKind::sparse: return copy_sparse(src, src_node, info, dst, dst_node, progress);
      case NodeKind::strings: return copy_strings(src, src_node, dst, dst_node);
      case NodeKind::records: return copy_records(src, src_node, info, dst, dst_node, progress);
    }
  }

  uint64_t nodes() const { return nodes_; }
  // The multiscale convention the open destination writes, as its root
  // description declares it ({"convention": "ome-ngff", "version": "0.5"}).
  void set_multiscales(json convention) { multiscales_ = std::move(convention); }

  DType target_dtype(DType from) const {
    auto it = opts_.casts.find(from);
    if (it != opts_.casts.end()) return it->second;
    return opts_.cast_all ? *opts_.cast_all : from;
  }
  std::vector<std::string> notes;

 private:
  // --part I/N: the destination was made by --create-only; write our share of chunks.
  bool filling_part() const { return opts_.part_count > 0; }

  bool same_format(const Store& src, const Store& dst) const { return src.format() == dst.format(); }

  bool format_has(const Store& store, uint64_t cap) const {
    auto info = registry_.find("format", store.format());
    return info && (info->capabilities & cap);
  }

  void copy_group(const Store& src, const std::string& src_node, const NodeInfo& info, Store& dst,
                  const std::string& dst_node, Progress& progress) {
    ++nodes_;
    if (!format_has(dst, STOWAGE_CAP_GROUPS))
      throw Error(ErrorCode::invalid_argument,
                  dst.path() + ": format " + dst.format() + " holds one dataset, and " + spec_of(src, src_node) +
                      " is a group; name one of its nodes (SOURCE::inner/node)",
                  dst.path());
    const json attributes = with_multiscales(src, src_node, info.attributes, dst);
    if (filling_part())
      ;  // the structure exists already (--create-only)
    else if (!dst_node.empty())
      dst.create(dst_node, {{"kind", "group"}, {"attributes", attributes}});
    else if (!attributes.empty())
      dst.set_attributes("", attributes);
    for (const std::string& child : src.list(src_node))
      copy(src, join(src_node, child), dst, join(dst_node, child), progress);
  }

  // A group's attributes with its multiscale metadata in the convention the
  // destination declares, between formats: OME-NGFF `multiscales` from
  // n5-viewer's keys, n5-viewer's keys from OME-NGFF (ome_zarr.hpp).
  // The source's own keys stay (the metadata rule: nothing dropped unasked);
  // the datasets' n5-viewer keys are added when they are copied.
  json with_multiscales(const Store& src, const std::string& node, const json& attributes, const Store& dst) {
    if (same_format(src, dst) || !attributes.is_object()) return attributes;
    const std::string where = node.empty() ? std::string("the root group") : node;
    const std::string convention = multiscales_.value("convention", "");
    const std::string ngff = multiscales_.value("version", "0.4");
    std::string why;
    json out = attributes;
    if (convention == "ome-ngff" && !attributes.contains("multiscales") && !attributes.contains("ome")) {
      std::vector<ome::Level> levels;
      for (const std::string& child : src.list(node)) {
        const NodeInfo level = src.describe(join(node, child));
        if (level.kind != NodeKind::array) continue;
        std::vector<std::string> dims;
        for (const auto& d : level.dims) dims.push_back(d.name);
        levels.push_back({child, level.attributes, dims, level.shape.size()});
      }
      const json ome = ome::multiscales_from_n5(attributes, levels, ngff, &why);
      if (!ome.is_null()) {
        for (const auto& [key, value] : ome.items()) out[key] = value;
        notes.push_back(where + ": wrote OME-NGFF " + ngff + " multiscales for its n5-viewer levels");
      }
    } else if (convention == "n5-viewer") {
      if (auto viewer = ome::n5_viewer_from_multiscales(attributes, &why)) {
        for (const auto& [key, value] : viewer->group.items()) out[key] = value;
        for (const auto& [path, extra] : viewer->datasets) level_attributes_[join(node, path)] = extra;
        notes.push_back(where + ": wrote n5-viewer's scales, resolution and downsamplingFactors for its OME-NGFF multiscales");
      }
    }
    if (!why.empty()) notes.push_back(where + ": no multiscale metadata written: " + why);
    return out;
  }

  // Names and labels of each dimension of a source node.
  struct DimLabels {
    std::string name;
    std::vector<std::string> labels;  // empty: none
  };
  std::vector<DimLabels> source_dims(const Store& src, const std::string& node, const NodeInfo& info) const {
    std::vector<DimLabels> dims(info.shape.size());
    for (size_t d = 0; d < dims.size() && d < info.dims.size(); ++d) {
      dims[d].name = info.dims[d].name;
      if (!info.dims[d].labels.empty()) dims[d].labels = src.read_strings(info.dims[d].labels);
    }
    // Labels kept in attributes by a format without label storage.
    if (info.attributes.contains(kLabelsAttribute)) {
      const json& stored = info.attributes[kLabelsAttribute];
      for (size_t d = 0; d < dims.size() && d < stored.size(); ++d) {
        if (stored[d].contains("name") && dims[d].name.empty()) dims[d].name = stored[d]["name"];
        if (stored[d].contains("labels") && dims[d].labels.empty())
          dims[d].labels = stored[d]["labels"].get<std::vector<std::string>>();
      }
    }
    if (!opts_.axes.empty() && opts_.axes.size() != dims.size())
      throw Error(ErrorCode::invalid_argument,
                  "--axes gives " + std::to_string(opts_.axes.size()) + " names, but " +
                      (node.empty() ? std::string("the array") : "'" + node + "'") + " has " +
                      std::to_string(dims.size()) + " dimensions");
    for (size_t d = 0; d < dims.size(); ++d) {
      if (d < opts_.axes.size()) dims[d].name = opts_.axes[d];
      if (dims[d].name.empty() && dims.size() == 2) dims[d].name = d == 0 ? "rows" : "cols";
    }
    return dims;
  }

  json dims_json(const std::vector<DimLabels>& dims) const {
    json j = json::array();
    for (const auto& d : dims) j.push_back({{"name", d.name}});
    return j;
  }

  // A node's attributes as written: without the labels kept in them, with
  // the n5-viewer keys of a multiscale level (with_multiscales).
  json attributes_for(const NodeInfo& info, const std::string& node = "") const {
    json attrs = info.attributes;
    attrs.erase(kLabelsAttribute);
    if (auto it = level_attributes_.find(node); it != level_attributes_.end())
      for (const auto& [key, value] : it->second.items()) attrs[key] = value;
    return attrs;
  }

  // The metadata rule (README, "stowage-convert"): attributes and labels go
  // wherever the destination keeps them; what it cannot keep is an error
  // naming it, unless --drop-metadata, which drops just that and says so in
  // the notes. A format's storage parameters ("storage", e.g. BPCells'
  // packing) go only to the same format, as its codec does.
  void create_node(Store& dst, const std::string& node, json desc, const std::string& what,
                   const json& storage = nullptr) {
    if (storage.is_object()) desc["storage"] = storage;
    const std::string dtype = desc.value("dtype", "");
    try {
      create_keeping_codec(dst, node, desc);
    } catch (const Error& e) {
      const json& attrs = desc.contains("attributes") ? desc["attributes"] : json::object();
      if (e.code() != ErrorCode::unsupported || attrs.empty() || !created_without_attributes(dst, node, desc))
        cannot_create(e, dst, what, dtype.empty() ? nullptr : dtype.c_str());
      const std::string keys = key_list(attrs), where = node.empty() ? std::string("the array") : node;
      require_codec_kept(dst, node, what);  // the mistake to report first, if both
      if (!opts_.drop_metadata)
        throw Error(ErrorCode::invalid_argument,
                    dst.path() + ": format " + dst.format() + " cannot keep the attributes " + keys + " of " + where +
                        "; pass --drop-metadata to convert without them",
                    dst.path());
      notes.push_back(where + ": dropped the attributes " + keys + ", which " + dst.format() + " cannot keep");
    }
    require_codec_kept(dst, node, what);
  }

  json storage_for(const Store& src, const Store& dst, const NodeInfo& info) const {
    return same_format(src, dst) && info.raw.contains("storage") ? info.raw["storage"] : json();
  }

  static std::string key_list(const json& object) {
    std::string keys;
    for (const auto& [key, value] : object.items()) keys += (keys.empty() ? "'" : ", '") + key + "'";
    return keys;
  }

  // A codec the user asked for must be the one the node was written with:
  // .npy and BPCells, for instance, have no such codecs, and silently
  // ignoring --compression there hid the mistake.
  void require_codec_kept(Store& dst, const std::string& node, const std::string& what) {
    if (codec_id_.empty()) return;
    const std::string& wanted = codec_id_;
    const json made = dst.describe(node).codec;
    if (made.is_object() && made.value("type", "") == wanted) return;
    throw Error(ErrorCode::invalid_argument,
                dst.path() + ": format " + dst.format() + " does not compress " + what + " with a " + wanted +
                    " codec, so the compression asked for would be ignored; leave out --compression",
                dst.path());
  }

  // Creates the node without its attributes; false if the format refuses
  // that too (the attributes were not the problem).
  bool created_without_attributes(Store& dst, const std::string& node, const json& desc) {
    json bare = desc;
    bare["attributes"] = json::object();
    try {
      create_keeping_codec(dst, node, bare);
      return true;
    } catch (const Error&) {
      return false;
    }
  }

  // After create: write labels where the destination keeps them; elsewhere
  // keep them in the node's attributes so they survive a round trip.
  void write_labels(Store& dst, const std::string& dst_node, const std::vector<DimLabels>& dims,
                    const std::vector<uint64_t>& shape) {
    NodeInfo created = dst.describe(dst_node);
    json in_attributes = json::array();
    bool any_in_attributes = false;
    for (size_t d = 0; d < dims.size(); ++d) {
      std::string path = d < created.dims.size() ? created.dims[d].labels : "";
      std::vector<std::string> labels = dims[d].labels;
      if (!path.empty()) {
        if (labels.empty()) {
          labels.reserve(shape[d]);
          for (uint64_t i = 0; i < shape[d]; ++i) labels.push_back(std::to_string(i));
          notes.push_back(dst_node.empty() ? "" : dst_node + ": ");
          notes.back() += "dimension " + std::to_string(d) + " ('" + dims[d].name +
                          "') has no labels in the source; wrote the indices 0.." + std::to_string(shape[d] - 1);
        }
        dst.write_strings(path, labels);
        in_attributes.push_back({{"name", dims[d].name}});
      } else {
        json entry = {{"name", dims[d].name}};
        if (!labels.empty()) {
          entry["labels"] = labels;
          any_in_attributes = true;
        }
        in_attributes.push_back(entry);
      }
    }
    if (!any_in_attributes) return;
    json attrs = dst.describe(dst_node).attributes;  // what create kept
    attrs[kLabelsAttribute] = in_attributes;
    try {
      dst.set_attributes(dst_node, attrs);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::unsupported) throw;
      const std::string where = dst_node.empty() ? std::string("the array") : dst_node;
      if (!opts_.drop_metadata)
        throw Error(ErrorCode::invalid_argument,
                    dst.path() + ": format " + dst.format() + " has no place for the labels of " + where +
                        "; pass --drop-metadata to convert without them",
                    dst.path());
      notes.push_back(where + ": dropped its labels, which " + dst.format() + " cannot keep");
    }
  }

  // --compression; else the source's codec: as it is within one format,
  // across formats as the codec plugin's canonical config (its defaults
  // filled in, so the destination need not know them), which the
  // destination may refuse (create_keeping_codec); else the destination's
  // default.
  json codec_for(const Store& src, const Store& dst, const NodeInfo& info) const {
    if (!opts_.compression.is_null()) return opts_.compression;
    if (info.codec.is_null()) return nullptr;
    if (same_format(src, dst)) return info.codec;
    try {
      return registry_.codec(info.codec).config();
    } catch (const Error&) {
      return nullptr;  // a codec this host lacks: the destination's default
    }
  }

  // The shard shape for an array of these chunks: one entry per dimension,
  // each a multiple of the chunk (Zarr v3's sharding_indexed).
  std::vector<uint64_t> shards_for(const std::vector<uint64_t>& chunks) const {
    if (opts_.shards.size() != chunks.size())
      throw Error(ErrorCode::invalid_argument, "--shards has " + std::to_string(opts_.shards.size()) +
                                                   " entries, the array has " + std::to_string(chunks.size()) +
                                                   " dimensions");
    for (size_t d = 0; d < chunks.size(); ++d)
      if (opts_.shards[d] % chunks[d] != 0)
        throw Error(ErrorCode::invalid_argument,
                    "--shards " + json(opts_.shards).dump() + " is not a multiple of the chunks " + json(chunks).dump() +
                        " in dimension " + std::to_string(d) + "; a shard holds whole chunks (give --chunks to choose them)");
    return opts_.shards;
  }

  // Creates the node. A codec carried over from another format that the
  // destination refuses as UNSUPPORTED (N5's lz4 framing in a format with
  // no such codec) gives way to the destination's default, noted; any other
  // error is the caller's.
  void create_keeping_codec(Store& dst, const std::string& node, json desc) {
    try {
      dst.create(node, desc);
    } catch (const Error& e) {
      const bool inherited = opts_.compression.is_null() && desc.contains("codec");
      if (e.code() != ErrorCode::unsupported || !inherited) throw;
      const std::exception_ptr original = std::current_exception();
      const json codec = desc["codec"];
      desc.erase("codec");
      try {
        dst.create(node, desc);
      } catch (const Error&) {
        std::rethrow_exception(original);  // the codec was not (only) the problem
      }
      notes.push_back((node.empty() ? std::string("the array") : node) + ": " + dst.format() +
                      " cannot keep the codec " + codec.dump() + " (" + e.what() + "); wrote its default codec");
    }
  }

  // "Cannot hold" is the user's to fix (another format, a cast, --drop-metadata):
  // a usage error, whatever the plugin called it; an I/O failure stays one.
  // The cast hint only where the plugin refused the dtype itself.
  [[noreturn]] void cannot_create(const Error& e, const Store& dst, const std::string& what,
                                  const char* dtype = nullptr) const {
    const std::string why = e.what();
    const bool usage = e.code() == ErrorCode::unsupported || e.code() == ErrorCode::invalid_argument;
    if (!usage) throw e;  // the storage failed (a name too long, a full disk): not the format's doing
    const bool dtype_refused = dtype && why.find(dtype) != std::string::npos;
    throw Error(ErrorCode::invalid_argument,
                dst.path() + ": format " + dst.format() + " cannot hold " + what + ": " + why +
                    (dtype_refused && !opts_.cast_all && opts_.casts.empty() ? "; convert the values with --cast (e.g. --cast float64)" : ""),
                dst.path());
  }

  void copy_dense(const Store& src, const std::string& src_node, const NodeInfo& info, Store& dst,
                  const std::string& dst_node, Progress& progress) {
    ++nodes_;
    Array in = src.array(src_node);
    DType to = target_dtype(info.dtype);
    std::vector<DimLabels> dims = source_dims(src, src_node, info);
    json attrs = attributes_for(info, src_node);
    json desc = {{"kind", "array"}, {"dtype", dtype_name(to)}, {"shape", info.shape},
                 {"chunks", opts_.chunks.empty() ? default_chunks(src, dst, src_node, info, to) : opts_.chunks},
                 {"attributes", attrs}, {"dims", dims_json(dims)}};
    if (opts_.chunks.size() && opts_.chunks.size() != info.shape.size())
      throw Error(ErrorCode::invalid_argument, "--chunks has " + std::to_string(opts_.chunks.size()) +
                                                   " entries, the array has " + std::to_string(info.shape.size()) +
                                                   " dimensions");
    if (!opts_.shards.empty()) desc["shards"] = shards_for(desc["chunks"].get<std::vector<uint64_t>>());
    json codec = codec_for(src, dst, info);
    if (!codec.is_null()) desc["codec"] = codec;
    if (info.fill_value != 0) desc["fill_value"] = fill_value_json(info.fill_value);
    if (!filling_part()) {
      create_node(dst, dst_node, desc,
                  std::string(dtype_name(to)) + " array of rank " + std::to_string(info.shape.size()),
                  storage_for(src, dst, info));
      write_labels(dst, dst_node, dims, info.shape);
    }
    if (opts_.create_only) return;
    Array out = dst.array(dst_node);
    if (out.shape() != info.shape || out.dtype() != to)
      throw Error(ErrorCode::invalid_argument, dst.path() + "::" + dst_node + " exists with another shape or dtype");
    // Parts take chunks in turn: two runs would each rewrite a shard that
    // holds chunks of both, and one would lose the other's. A format
    // describes a sharded array with "shards", as create takes it (zarr v3).
    if (filling_part() && out.info().raw.contains("shards") && !out.info().raw["shards"].is_null())
      throw Error(ErrorCode::unsupported, (dst_node.empty() ? dst.path() : dst.path() + "::" + dst_node) +
                                              " is sharded, and --part runs would rewrite each other's shards; "
                                              "convert it in one run",
                  dst.path());
    if (in.dtype() == out.dtype() && copy_chunks(in, out, progress)) return;
    copy_tiles(in, out, progress, spec_of(src, src_node), format_has(src, STOWAGE_CAP_PARTIAL));
  }

  // The source's chunks, except where one is too large to write as one (a
  // whole Daf vector, a one-block N5 dataset going to another format): then
  // slabs of about 4 MiB, so that progress, Ctrl-C and readers of the
  // destination are not held by one chunk (gzip -9 of 48 MB: 6 s). A copy
  // into the same format keeps its chunks as they are.
  std::vector<uint64_t> default_chunks(const Store& src, const Store& dst, const std::string& node,
                                       const NodeInfo& info, DType to) {
    const uint64_t too_large = 16ull << 20, slab = 4ull << 20;
    if (same_format(src, dst) || product(info.chunks) * dtype_size(to) <= too_large) return info.chunks;
    std::vector<uint64_t> chunks = sdk::c_order_chunks(info.shape, dtype_size(to), slab);
    notes.push_back((node.empty() ? std::string("the array") : node) + ": chunks " + json(info.chunks).dump() +
                    " are over 16 MiB; wrote chunks " + json(chunks).dump() + " (give --chunks to choose)");
    return chunks;
  }

  // The source node as the user would name it: "in.n5::raw/s0", "x.npy".
  static std::string spec_of(const Store& src, const std::string& node) {
    return node.empty() ? src.path() : src.path() + "::" + node;
  }

  // Same chunk shape on both sides: chunk by chunk, with no region buffer
  // in between (the core converts byte and element order in the chunk).
  // The same disjoint parts as copy_tiles: chunk i belongs to part i % N.
  bool copy_chunks(const Array& in, const Array& out, Progress& progress) {
    return in.copy_chunks_to(out, opts_.part_index, std::max<uint64_t>(opts_.part_count, 1), [&](uint64_t bytes) {
      progress.check_cancel();
      progress.add(bytes, 1);
    });
  }

  // Copies in tiles aligned to the destination's chunks, each holding
  // several chunks so the core decodes and encodes a tile's chunks in
  // parallel, and about 8 MiB so progress and Ctrl-C are heard every 0.1-0.2
  // s even at gzip -9's 50 MB/s (64 MiB tiles before: 1-2 s between
  // reports). A source that cannot read part of a chunk (a compressed one)
  // gets tiles of at least one of its chunks, or each tile would decode the
  // same chunk again.
  void copy_tiles(const Array& in, const Array& out, Progress& progress, const std::string& label,
                  bool source_reads_part) {
    const auto& shape = in.shape();
    const size_t nd = shape.size();
    size_t in_size = dtype_size(in.dtype()), out_size = dtype_size(out.dtype());
    std::vector<uint64_t> tile = out.info().chunks;
    for (size_t d = 0; d < nd; ++d) tile[d] = std::min(tile[d], shape[d]);
    const bool partial = filling_part();
    const uint64_t budget = std::max<uint64_t>(8ull << 20, source_reads_part ? 0 : product(in.info().chunks) * in_size);
    if (!partial) {
      // Grow the tile from the last dimension to the first while it fits.
      for (size_t d = nd; d-- > 0;) {
        uint64_t others = product(tile) / std::max<uint64_t>(tile[d], 1);
        uint64_t fit = std::max<uint64_t>(1, budget / std::max<uint64_t>(others * in_size, 1));
        uint64_t chunk = std::max<uint64_t>(out.info().chunks[d], 1);
        uint64_t want = std::min(shape[d], std::max(tile[d], fit / chunk * chunk));
        tile[d] = std::max<uint64_t>(want, std::min(tile[d], shape[d]));
        if (tile[d] < shape[d]) break;
      }
    }
    std::vector<uint64_t> grid(nd);
    for (size_t d = 0; d < nd; ++d) grid[d] = tile[d] ? (shape[d] + tile[d] - 1) / tile[d] : 0;
    uint64_t tiles = nd == 0 ? 1 : product(grid);
    std::vector<char> buffer, converted;
    for (uint64_t t = 0; t < tiles; ++t) {
      progress.check_cancel();
      if (partial && t % opts_.part_count != opts_.part_index) continue;
      std::vector<uint64_t> offset(nd), extent(nd);
      uint64_t rest = t;
      for (size_t d = nd; d-- > 0;) {
        uint64_t i = rest % grid[d];
        rest /= grid[d];
        offset[d] = i * tile[d];
        extent[d] = std::min(tile[d], shape[d] - offset[d]);
      }
      buffer.resize(product(extent) * in_size);
      in.read(offset, extent, buffer.data());
      // Written in slabs of whole destination chunk rows, about 8 MiB each:
      // a tile that had to cover a large source chunk still reports often.
      const uint64_t row = nd == 0 ? 1 : product(extent) / std::max<uint64_t>(extent[0], 1);
      const uint64_t rows = nd == 0 ? 1 : extent[0];
      const uint64_t chunk_rows = nd == 0 ? 1 : std::max<uint64_t>(out.info().chunks[0], 1);
      const uint64_t step = std::max<uint64_t>(chunk_rows, (8ull << 20) / std::max<uint64_t>(row * in_size, 1) / chunk_rows * chunk_rows);
      for (uint64_t r = 0; r < rows; r += step) {
        progress.check_cancel();
        std::vector<uint64_t> slab_offset = offset, slab_extent = extent;
        if (nd > 0) slab_offset[0] += r, slab_extent[0] = std::min(step, rows - r);
        const uint64_t n = product(slab_extent);
        const char* data = buffer.data() + r * row * in_size;
        if (in.dtype() != out.dtype()) {
          converted.resize(n * out_size);
          cast_elements(in.dtype(), out.dtype(), data, converted.data(), n, opts_.cast_overflow,
                        [&](size_t i) { return index_text(label, slab_offset, slab_extent, i); });
          data = converted.data();
        }
        out.write(slab_offset, slab_extent, data);
        progress.add(n * in_size, 1);
      }
    }
  }

  void copy_sparse(const Store& src, const std::string& src_node, const NodeInfo& info, Store& dst,
                   const std::string& dst_node, Progress& progress) {
    ++nodes_;
    Sparse in = src.sparse(src_node);
    std::vector<DimLabels> dims = source_dims(src, src_node, info);
    json attrs = attributes_for(info, src_node);
    if (!format_has(dst, STOWAGE_CAP_SPARSE)) {
      notes.push_back((src_node.empty() ? "the matrix" : src_node) + ": " + dst.format() + " has no sparse storage; wrote it dense");
      return densify(in, info, dims, attrs, dst, dst_node, progress, spec_of(src, src_node));
    }
    if (target_dtype(info.dtype) != info.dtype)
      throw Error(ErrorCode::unsupported, "--cast is not supported for sparse matrices");
    json desc = {{"kind", "sparse"}, {"dtype", dtype_name(info.dtype)}, {"shape", info.shape},
                 {"layout", info.csr ? "csr" : "csc"}, {"attributes", attrs}, {"dims", dims_json(dims)}};
    create_node(dst, dst_node, desc, std::string("a ") + dtype_name(info.dtype) + " sparse matrix",
                storage_for(src, dst, info));
    write_labels(dst, dst_node, dims, info.shape);
    Sparse out = dst.sparse(dst_node);
    const uint64_t majors = in.majors();
    const uint64_t per_major = majors ? std::max<uint64_t>(1, info.nnz / majors) : 1;
    const uint64_t batch = std::max<uint64_t>(1, (8ull << 20) / per_major);
    const size_t esize = dtype_size(info.dtype);
    SparseSlice s;
    for (uint64_t m = 0; m < majors; m += batch) {
      progress.check_cancel();
      uint64_t end = std::min(majors, m + batch);
      in.read_into(m, end, s);
      out.append(s, end - m);
      progress.add(s.indices.size() * (esize + 4), end - m);
    }
  }

  void densify(const Sparse& in, const NodeInfo& info, const std::vector<DimLabels>& dims,
               const json& attrs, Store& dst, const std::string& dst_node, Progress& progress,
               const std::string& label) {
    DType to = target_dtype(info.dtype);
    uint64_t rows = info.shape[0], cols = info.shape[1];
    std::vector<uint64_t> chunks = opts_.chunks.empty() ? std::vector<uint64_t>{std::min<uint64_t>(rows, 1024),
                                                                          std::min<uint64_t>(cols, 1024)}
                                                   : opts_.chunks;
    json desc = {{"kind", "array"}, {"dtype", dtype_name(to)}, {"shape", info.shape},
                 {"chunks", chunks}, {"attributes", attrs}, {"dims", dims_json(dims)}};
    if (!opts_.compression.is_null()) desc["codec"] = opts_.compression;
    create_node(dst, dst_node, desc, std::string("a dense ") + dtype_name(to) + " matrix");
    write_labels(dst, dst_node, dims, info.shape);
    Array out = dst.array(dst_node);
    size_t in_size = dtype_size(info.dtype), out_size = dtype_size(to);
    // Bands of about 8 MiB, for the same reason as copy_tiles.
    uint64_t band = std::max<uint64_t>(1, std::min<uint64_t>(rows, (8ull << 20) / std::max<uint64_t>(cols * in_size, 1)));
    band = std::max<uint64_t>(out.info().chunks[0], band / out.info().chunks[0] * out.info().chunks[0]);
    std::vector<char> buffer, converted;
    for (uint64_t r = 0; r < rows; r += band) {
      progress.check_cancel();
      uint64_t n = std::min(band, rows - r);
      buffer.resize(n * cols * in_size);
      in.read_dense(r, 0, n, cols, buffer.data());
      const void* data = buffer.data();
      if (to != info.dtype) {
        converted.resize(n * cols * out_size);
        cast_elements(info.dtype, to, buffer.data(), converted.data(), n * cols, opts_.cast_overflow,
                      [&](size_t i) { return index_text(label, {r, 0}, {n, cols}, i); });
        data = converted.data();
      }
      out.write({r, 0}, {n, cols}, data);
      progress.add(n * cols * in_size, 1);
    }
  }

  void copy_strings(const Store& src, const std::string& src_node, Store& dst, const std::string& dst_node) {
    ++nodes_;
    if (filling_part()) return;
    if (format_has(dst, STOWAGE_CAP_GROUPS)) {
      // In a container a string node is a node of its own: its attributes,
      // and within the format its blocks and codec, go with it.
      const NodeInfo info = src.describe(src_node);
      json desc = {{"kind", "strings"}, {"shape", info.shape}, {"attributes", attributes_for(info, src_node)}};
      add_layout(desc, src, dst, info);
      create_node(dst, dst_node, desc, "a string array");
    }
    dst.write_strings(dst_node, src.read_strings(src_node));
  }

  // The blocks and codec of a string or record node, where the destination
  // is the source's format or --compression names a codec.
  void add_layout(json& desc, const Store& src, const Store& dst, const NodeInfo& info) const {
    if (same_format(src, dst) && info.raw.contains("chunks")) desc["chunks"] = info.raw["chunks"];
    json codec = codec_for(src, dst, info);
    if (!codec.is_null()) desc["codec"] = codec;
  }

  void copy_records(const Store& src, const std::string& src_node, const NodeInfo& info, Store& dst,
                    const std::string& dst_node, Progress& progress) {
    ++nodes_;
    if (filling_part()) return;
    json desc = {{"kind", "records"}, {"count", info.count}, {"attributes", attributes_for(info, src_node)}};
    if (same_format(src, dst) && info.raw.contains("shape")) desc["shape"] = info.raw["shape"];
    add_layout(desc, src, dst, info);
    if (!format_has(dst, STOWAGE_CAP_RECORDS))
      throw Error(ErrorCode::invalid_argument,
                  dst.path() + ": format " + dst.format() + " cannot hold a record set (" + spec_of(src, src_node) + ")",
                  dst.path());
    create_node(dst, dst_node, desc, "a record set");
    Records in = src.records(src_node);
    Records out = dst.records(dst_node);
    uint64_t n = in.size();
    const uint64_t batch = 4096;
    std::vector<std::string> records;
    for (uint64_t i = 0; i < n; i += batch) {
      progress.check_cancel();
      records.clear();
      uint64_t bytes = 0;
      in.read_range(i, std::min(n, i + batch), [&](std::string_view r) {
        records.emplace_back(r);
        bytes += r.size();
      });
      out.append(records);  // bytes unchanged
      progress.add(bytes, 1);
    }
  }

  const CopyOptions& opts_;
  Registry& registry_;
  const std::string codec_id_;
  uint64_t nodes_ = 0;
  json multiscales_ = json::object();  // the destination's declared convention (set_multiscales)
  std::map<std::string, json> level_attributes_;  // source node -> n5-viewer keys to add (with_multiscales)
};

// ---- where the output goes ------------------------------------------------------------

bool process_alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

const std::string kTempPrefix = sdk::kStagingPrefix;

// The hidden name a copy by process `pid` stages `name` under:
// ".stowage-convert.<pid>.<name>", with the name cut so the whole stays
// within the 255 bytes a file name may have (a 245-character destination
// failed with "File name too long" before).
std::string staged_name(long pid, const std::string& name) {
  std::string head = kTempPrefix + std::to_string(pid) + ".";
  return head + name.substr(0, std::min(name.size(), 255 - std::min<size_t>(head.size(), 255)));
}

// Removes temporaries left by killed conversions to the same destination.
void clean_stale_temporaries(const fs::path& parent, const std::string& name) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    std::string f = entry.path().filename().string();
    if (f.rfind(kTempPrefix, 0) != 0) continue;
    long pid = std::atol(f.c_str() + kTempPrefix.size());
    if (f != staged_name(pid, name)) continue;
    if (!process_alive(pid)) fs::remove_all(entry.path(), ec);
  }
}

uint64_t disk_bytes(const fs::path& p) {
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return fs::file_size(p, ec);
  uint64_t sum = 0;
  for (auto it = fs::recursive_directory_iterator(p, ec); it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec)) sum += it->file_size(ec);
  return sum;
}

// A hidden directory beside the destination that holds everything the
// conversion writes until publish() renames it into place.
class StagingArea {
 public:
  StagingArea(const std::string& destination, Registry& registry) : typed_(destination) {
    try {
      make(fs::path(destination), registry);
    } catch (const fs::filesystem_error& e) {
      throw Error(ErrorCode::io, destination + ": cannot write there: " + e.code().message(), destination);
    } catch (const sdk::Error& e) {  // finishing what a killed conversion left
      throw Error(static_cast<ErrorCode>(e.code()), in_user_words(e.what()), destination);
    }
  }
  ~StagingArea() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path target() const { return dir_ / name_; }

  // The error with every mention of the hidden staging path (".stowage-convert.<pid>.x/x",
  // a temporary in it) replaced by the destination as the user named it.
  Error in_user_words(const Error& e) const {
    return Error(e.code(), in_user_words(e.what()), in_user_words(e.path()), e.plugin());
  }
  std::string in_user_words(std::string text) const {
    text = sdk::without_temporaries(std::move(text));
    if (dir_.empty()) return text;  // (not made yet)
    const size_t slash = typed_.rfind('/');
    const std::string typed_parent = slash == std::string::npos ? "" : typed_.substr(0, slash + 1);
    const std::pair<std::string, std::string> renames[] = {
        {target().string(), typed_}, {dir_.string() + "/", typed_parent}, {dir_.string(), typed_}};
    for (const auto& [hidden, shown] : renames)
      for (size_t at; (at = text.find(hidden)) != std::string::npos;) text.replace(at, hidden.size(), shown);
    const std::string twice = typed_ + ": " + typed_ + ": ";  // the store's path and its staged file's
    for (size_t at; (at = text.find(twice)) != std::string::npos;) text.erase(at, typed_.size() + 2);
    return text;
  }

  // publish_staged, its errors in the user's words.
  uint64_t publish(bool overwrite) {
    try {
      return publish_staged(overwrite);
    } catch (const Error& e) {
      throw in_user_words(e);
    } catch (const sdk::Error& e) {
      throw Error(static_cast<ErrorCode>(e.code()), in_user_words(e.what()), typed_);
    } catch (const fs::filesystem_error& e) {
      throw Error(ErrorCode::io, typed_ + ": cannot publish it: " + e.code().message(), typed_);
    }
  }

 private:
  void make(const fs::path& destination, Registry& registry) {
    parent_ = destination.has_parent_path() ? destination.parent_path() : fs::path(".");
    fs::create_directories(parent_);
    name_ = destination.filename().string();
    // "x.datg" becomes "./x.datg": a file set's journal and files are then
    // named from the same directory.
    destination_ = parent_ / name_;
    Registry::StorageBackend b = registry.storage(destination_.string());
    storage_ = sdk::Storage(b.vtable, b.handle, b.capabilities);
    // A conversion killed while publishing several files left a journal
    // whose temporaries are in its staging directory: finish it first.
    storage_.recover(destination_.string());
    clean_stale_temporaries(parent_, name_);
    dir_ = parent_ / staged_name(::getpid(), name_);
    fs::create_directories(dir_);
  }

  // Puts what the format wrote in place of the destination, so that a kill
  // at any moment leaves the old destination or the new one. A single entry
  // (a container directory, an .npy file) takes the destination's name in
  // one rename, or one exchange with an existing destination, which then
  // goes with the staging area. Several files (datg's matrix and name files,
  // datadings' six) go as one journaled file set, which the format's next
  // open -- or the next conversion to this destination -- finishes.
  uint64_t publish_staged(bool overwrite) {
    std::vector<fs::path> produced;
    for (const auto& e : fs::directory_iterator(dir_)) produced.push_back(e.path());
    uint64_t bytes = 0;
    for (const auto& p : produced) {
      std::error_code ec;
      if (!overwrite && fs::exists(parent_ / p.filename(), ec))
        throw Error(ErrorCode::invalid_argument, (parent_ / p.filename()).string() + " exists; use --overwrite");
      bytes += disk_bytes(p);
    }
    // The destination's own file goes first: it names the set's journal.
    std::stable_partition(produced.begin(), produced.end(),
                          [&](const fs::path& p) { return p.filename() == destination_.filename(); });
    std::vector<std::pair<std::string, std::string>> renames;
    for (const auto& p : produced) renames.emplace_back(p.string(), (parent_ / p.filename()).string());
    storage_.move(renames, STOWAGE_PUBLISH_REPLACE);
    return bytes;
  }

  sdk::Storage storage_;
  fs::path destination_, parent_, dir_;
  std::string name_, typed_;
};

// A node added to (or replacing one in) an existing container, written
// under a hidden sibling name and moved into place whole when complete
// (Store::move): a kill, a full disk or a cancelled copy leaves the old node
// or none, never a part. Used where the format moves nodes (N5).
class NodeStaging {
 public:
  NodeStaging(Store& dst, const std::string& node) : dst_(dst), final_(node) {
    size_t slash = node.rfind('/');
    std::string parent = slash == std::string::npos ? "" : node.substr(0, slash);
    leaf_ = slash == std::string::npos ? node : node.substr(slash + 1);
    hidden_leaf_ = staged_name(::getpid(), leaf_);
    staged_ = join(parent, hidden_leaf_);
    // A format that moves nodes keeps node a/b in the directory <root>/a/b:
    // what killed copies left there goes first (and our own last attempt).
    const fs::path parent_dir = fs::path(dst.path()) / parent;
    clean_stale_temporaries(parent_dir, leaf_);
    std::error_code ec;
    fs::remove_all(parent_dir / hidden_leaf_, ec);
    node_dir_ = parent_dir / hidden_leaf_;
  }
  const std::string& node() const { return staged_; }
  uint64_t bytes() const { return disk_bytes(node_dir_); }

  void publish(bool replace) {
    dst_.move(staged_, final_, replace);
    published_ = true;
  }
  // Removes the partial node, quietly: the error that stopped the copy is the one to report.
  void discard() noexcept {
    if (published_) return;
    try {
      dst_.remove(staged_);
    } catch (...) {
    }
    std::error_code ec;
    fs::remove_all(node_dir_, ec);
  }
  Error in_user_words(const Error& e) const {
    auto rewrite = [&](std::string text) {
      text = sdk::without_temporaries(std::move(text));
      for (size_t at; (at = text.find(hidden_leaf_)) != std::string::npos;) text.replace(at, hidden_leaf_.size(), leaf_);
      return text;
    };
    return Error(e.code(), rewrite(e.what()), rewrite(e.path()), e.plugin());
  }

 private:
  Store& dst_;
  std::string final_, leaf_, hidden_leaf_, staged_;
  fs::path node_dir_;
  bool published_ = false;
};

// ---- what the copy must never do -----------------------------------------------------------

// Where a dataset lives: its real path (symlinks and '..' resolved, as far as
// it exists) and the node path inside it, one component per entry.
struct Place {
  fs::path path;
  std::vector<std::string> node;
};

Place place_of(const std::string& path, const std::string& node) {
  std::error_code ec;
  Place p;
  if (storage_scheme(path) != "file")  // a URL is its own place, not a path below the working directory
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
void refuse_overlap(const std::string& source, const std::string& destination, const Place& src, const Place& dst) {
  auto refuse = [&](const std::string& why) {
    throw Error(ErrorCode::invalid_argument, "'" + source + "' -> '" + destination + "': " + why + "; nothing was written");
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
void refuse_replacing_other(const std::string& dst_path, const std::string& to, Registry& registry) {
  for (const auto& [id, score] : registry.identify(dst_path))
    if (id == to && score > 0) return;
  throw Error(ErrorCode::invalid_argument,
              dst_path + " exists and is not a dataset of format " + to + "; --overwrite replaces only a dataset of the "
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

std::string ids_of(Registry& registry, const char* kind) {
  std::string list;
  for (const PluginInfo& p : registry.plugins())
    if (p.kind == kind && p.state != PluginState::shadowed) list += (list.empty() ? "" : ", ") + p.id;
  return list.empty() ? "none found on the plugin path" : list;
}

// A format id the registry has (else the valid ones are listed).
void require_format(Registry& registry, const std::string& id, const char* role) {
  if (!id.empty() && !registry.find("format", id))
    throw Error(ErrorCode::invalid_argument,
                std::string(role) + " format '" + id + "' is not known; the formats: " + ids_of(registry, "format"));
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
      throw Error(ErrorCode::invalid_argument, "compression '" + compression.value("type", "") +
                                                   "' is not known; the codecs: " + ids_of(registry, "codec"));
    throw Error(ErrorCode::invalid_argument, std::string("compression ") + compression.dump() + ": " + e.what());
  }
  std::optional<PluginInfo> info = registry.find("codec", codec.id());
  json schema = json::parse(info ? info->params_schema : "{}", nullptr, false);
  for (const auto& [key, value] : compression.items()) {
    if (key == "type" || (schema.is_object() && schema.contains(key))) continue;
    std::string known;
    for (const auto& [name, spec] : schema.items()) known += (known.empty() ? "" : ", ") + name;
    throw Error(ErrorCode::invalid_argument, "compression " + compression.dump() + ": " + codec.id() +
                                                 " has no parameter '" + key + "'; its parameters: " +
                                                 (known.empty() ? "none" : known));
  }
  return codec.id();
}

// Dimension names must be given and distinct (Daf and datg key labels by them).
void require_axes(const std::vector<std::string>& axes) {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].empty()) throw Error(ErrorCode::invalid_argument, "--axes: name " + std::to_string(i + 1) + " is empty");
    for (size_t j = 0; j < i; ++j)
      if (axes[j] == axes[i])
        throw Error(ErrorCode::invalid_argument, "--axes: '" + axes[i] + "' names two dimensions; each needs its own name");
  }
}

// What a declared option takes, for messages: "2 or 3", "true or false",
// "an integer from 0", "one of [1,0], [1,1]" (the schema of plugin.h).
std::string takes_text(const json& spec) {
  auto either = [](const std::vector<std::string>& values) {
    std::string text;
    for (size_t i = 0; i < values.size(); ++i)
      text += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + values[i];
    return text;
  };
  std::vector<std::string> values;
  if (spec.contains("enum") && spec["enum"].is_array())
    for (const json& v : spec["enum"]) values.push_back(v.dump());
  const std::string type = spec.value("type", "");
  const bool bounded = spec.contains("min") && spec.contains("max") && spec["min"].is_number_integer() &&
                       spec["max"].is_number_integer();
  if (values.empty() && type == "integer" && bounded && spec["max"].get<int64_t>() - spec["min"].get<int64_t>() < 4)
    for (int64_t v = spec["min"]; v <= spec["max"].get<int64_t>(); ++v) values.push_back(std::to_string(v));
  if (!values.empty()) return either(values);
  if (type == "boolean") return "true or false";
  if (type == "integer" && bounded) return "an integer from " + spec["min"].dump() + " to " + spec["max"].dump();
  if (type == "integer" && spec.contains("min")) return "an integer from " + spec["min"].dump();
  return (type == "integer" || type == "array" ? "an " : "a ") + (type.empty() ? std::string("value") : type);
}

// "zarr_version (2 or 3, default 3), consolidated (true or false)".
std::string options_text(const json& schema) {
  std::string text;
  for (const auto& [key, spec] : schema.items()) {
    text += (text.empty() ? "" : ", ") + key + " (" + takes_text(spec);
    if (spec.contains("default") && !spec["default"].is_null()) text += ", default " + spec["default"].dump();
    text += ")";
  }
  return text.empty() ? "none" : text;
}

// Whether `value` is one a declared option takes: its type, range and set.
bool takes(const json& spec, const json& value) {
  const std::string type = spec.value("type", "");
  const bool typed = type == "integer"   ? value.is_number_integer()
                     : type == "boolean" ? value.is_boolean()
                     : type == "string"  ? value.is_string()
                     : type == "number"  ? value.is_number()
                     : type == "array"   ? value.is_array()
                                         : true;
  if (!typed) return false;
  if (spec.contains("enum") && spec["enum"].is_array() &&
      std::find(spec["enum"].begin(), spec["enum"].end(), value) == spec["enum"].end())
    return false;
  if (type == "integer" && spec.contains("min") && value.get<int64_t>() < spec["min"].get<int64_t>()) return false;
  if (type == "integer" && spec.contains("max") && value.get<int64_t>() > spec["max"].get<int64_t>()) return false;
  return true;
}

// The open options for the destination, checked against those its format
// declares (its params_schema) before anything is written: an unknown or
// invalid one is refused naming it, the format and what it takes. A new
// store gets the defaults of the options that set what it is made as
// ("on_create"), so the summary says what was written. --shards needs a
// format that declares STOWAGE_CAP_SHARDS.
json destination_options(const CopyOptions& options, const std::string& to, bool new_store, Registry& registry) {
  json open = options.open_options.is_null() ? json::object() : options.open_options;
  if (!open.is_object()) throw Error(ErrorCode::invalid_argument, "the open options must be a JSON object, not " + open.dump());
  const stowage_plugin* format = registry.load("format", to, "");
  json schema = json::parse(format->params_schema ? format->params_schema : "{}", nullptr, false);
  if (!schema.is_object()) schema = json::object();
  for (const auto& [key, value] : open.items()) {
    if (!schema.contains(key))
      throw Error(ErrorCode::invalid_argument, "open option '" + key + "': format " + to +
                                                   " has no such option; its open options: " + options_text(schema));
    if (!takes(schema[key], value))
      throw Error(ErrorCode::invalid_argument, "open option " + key + "=" + value.dump() + ": format " + to +
                                                   " takes " + takes_text(schema[key]) + " for " + key);
  }
  if (new_store)
    for (const auto& [key, spec] : schema.items())
      if (spec.value("on_create", false) && !open.contains(key) && spec.contains("default")) open[key] = spec["default"];
  if (!options.shards.empty() && !(format->capabilities & STOWAGE_CAP_SHARDS))
    throw Error(ErrorCode::invalid_argument, "--shards: format " + to + " writes no shards; the formats that do: " +
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

bool has_node(const Store& store, const std::string& node) {
  try {
    store.describe(node);
    return true;
  } catch (const Error& e) {
    if (e.code() != ErrorCode::not_found) throw;
    return false;
  }
}

// Writes a node under a hidden name and moves it into place once whole.
// Returns the bytes it wrote.
uint64_t copy_node_staged(Converter& converter, const Store& src, const std::string& src_node, Store& dst,
                          const std::string& dst_node, Progress& progress, bool replace) {
  NodeStaging staged(dst, dst_node);
  try {
    converter.copy(src, src_node, dst, staged.node(), progress);
    progress.check_cancel();
    const uint64_t bytes = staged.bytes();
    staged.publish(replace);
    return bytes;
  } catch (const Error& e) {
    staged.discard();
    throw staged.in_user_words(e);
  } catch (...) {
    staged.discard();
    throw;
  }
}

// ---- the one entry point ----------------------------------------------------------------

CopyResult copy_with(const std::string& source, const std::string& destination, const CopyOptions& options,
                     Registry& registry) {
  auto [src_path, src_node] = split_dataset_spec(source);
  auto [dst_path, dst_node] = split_dataset_spec(destination);
  if (dst_path.empty()) throw Error(ErrorCode::invalid_argument, "no destination given");
  // The destination is staged and published in the local file system (a
  // source may be a URL): refuse any other before a folder named "http:"
  // appears in the working directory.
  require_writable_storage(dst_path, registry);
  if (storage_scheme(dst_path) != "file")
    throw Error(ErrorCode::unsupported, dst_path + ": a copy's destination must be a local path", dst_path);
  require_format(registry, options.from, "source");
  require_format(registry, options.to, "destination");
  const std::string codec_id = require_codec(registry, options.compression);
  require_axes(options.axes);
  if (options.part_count > 0 && (!options.compression.is_null() || !options.chunks.empty()))
    throw Error(ErrorCode::invalid_argument,
                "a --part run writes with the codec and chunks the destination was created with; give "
                "--compression and --chunks to the --create-only run instead");
  Store src = Store::open(src_path, Mode::read, options.from, json::object(), registry);

  CopyResult result;
  result.from = src.format();
  result.to = options.to;
  if (result.to.empty()) {
    auto by_ext = registry.format_for_extension(dst_path);
    if (!by_ext)
      throw Error(ErrorCode::invalid_argument,
                  dst_path + ": cannot tell the destination format from its name; give --to ID");
    result.to = *by_ext;
  }

  refuse_overlap(source, destination, place_of(src_path, src_node), place_of(dst_path, dst_node));
  std::error_code ec;
  const bool exists = fs::exists(dst_path, ec);
  const bool filling_part = options.part_count > 0;
  // A node added to an existing container is written in place (each plugin
  // writes its files atomically); anything new is staged and renamed.
  const bool in_place = exists && (!dst_node.empty() || filling_part);
  if (!in_place && exists && !options.overwrite)
    throw Error(ErrorCode::invalid_argument, dst_path + " exists; use --overwrite to replace it");
  if (filling_part && !exists)
    throw Error(ErrorCode::invalid_argument,
                dst_path + " does not exist; create it first with --create-only, then run the parts");
  if (exists && (options.overwrite || in_place)) refuse_replacing_other(dst_path, result.to, registry);
  result.open_options = destination_options(options, result.to, !in_place, registry);
  result.shards = options.shards;

  Converter converter(options, registry, codec_id);
  Progress progress(options, converter.total_bytes(src, src_node));
  if (in_place) {
    // Add (or with a part run, fill) a node of an existing container.
    Store dst = Store::open(dst_path, Mode::update, result.to, result.open_options, registry);
    converter.set_multiscales(destination_facts(dst, options, registry));
    const bool adding_node = !filling_part && !dst_node.empty();
    const bool present = adding_node && has_node(dst, dst_node);
    if (present && !options.overwrite)
      throw Error(ErrorCode::invalid_argument, dst_path + "::" + dst_node + " exists; use --overwrite to replace it");
    if (adding_node && dst.can_move_nodes()) {
      result.bytes_out = copy_node_staged(converter, src, src_node, dst, dst_node, progress, options.overwrite);
    } else {
      // The format cannot move a node: it is written in place (Daf keeps
      // what it writes pending until close, where each file is renamed in).
      if (present) dst.remove(dst_node);
      const uint64_t before = disk_bytes(dst_path);
      converter.copy(src, src_node, dst, dst_node, progress);
      dst.close();  // before measuring: some formats write at close
      const uint64_t after = disk_bytes(dst_path);
      result.bytes_out = after > before ? after - before : 0;
    }
    dst.close();
  } else {
    StagingArea staging(dst_path, registry);
    try {
      Store dst = Store::open(staging.target().string(), Mode::truncate, result.to, result.open_options, registry);
      try {
        converter.set_multiscales(destination_facts(dst, options, registry));
        converter.copy(src, src_node, dst, dst_node, progress);
      } catch (...) {
        // The staged output goes with the staging area: close it quietly (its
        // destructor would report the half-written store under its hidden name).
        try {
          dst.close();
        } catch (const Error&) {
        }
        throw;
      }
      dst.close();
    } catch (const Error& e) {
      throw staging.in_user_words(e);
    }
    progress.check_cancel();
    result.bytes_out = staging.publish(options.overwrite);
  }
  result.nodes = converter.nodes();
  result.chunks = progress.chunks();
  result.bytes_in = progress.bytes();
  result.seconds = progress.seconds();
  result.notes = converter.notes;
  return result;
}

}  // namespace

// The plugins' warnings during a copy (a datg name it had to change, a codec
// it ignores) belong to its result: they go into the notes, which --json
// prints, instead of standard error; a failed copy still shows them there.
CopyResult copy(const std::string& source, const std::string& destination, const CopyOptions& options,
                Registry& registry) {
  std::vector<std::string> warnings;
  try {
    detail::LogCapture capture(warnings);
    CopyResult result = copy_with(source, destination, options, registry);
    result.notes.insert(result.notes.end(), warnings.begin(), warnings.end());
    return result;
  } catch (...) {
    for (const std::string& w : warnings)  // not those about the discarded staging output
      if (w.find(kTempPrefix) == std::string::npos) std::cerr << "stowage warning: " << w << "\n";
    throw;
  }
}

CastOverflow parse_cast_overflow(const std::string& name) {
  if (name == "error") return CastOverflow::error;
  if (name == "clip") return CastOverflow::clip;
  if (name == "wrap") return CastOverflow::wrap;
  throw Error(ErrorCode::invalid_argument, "cast overflow must be error, clip or wrap, not '" + name + "'");
}

void set_part(CopyOptions& options, uint64_t index, uint64_t count) {
  if (count == 0 || index >= count)
    throw Error(ErrorCode::invalid_argument, "a part is I of N with 0 <= I < N, not " + std::to_string(index) +
                                                 " of " + std::to_string(count));
  options.part_index = index;
  options.part_count = count;
}

void parse_part_spec(const std::string& spec, CopyOptions& options) {
  unsigned long long i = 0, n = 0;
  char tail = 0;
  if (std::sscanf(spec.c_str(), "%llu/%llu%c", &i, &n, &tail) != 2)
    throw Error(ErrorCode::invalid_argument, "--part takes I/N with 0 <= I < N, got '" + spec + "'");
  set_part(options, i, n);
}

void parse_open_option(const std::string& spec, CopyOptions& options) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error(ErrorCode::invalid_argument, "--open-option takes KEY=VALUE, got '" + spec + "'");
  const std::string value = spec.substr(eq + 1);
  json v = json::parse(value, nullptr, false);
  if (options.open_options.is_null()) options.open_options = json::object();
  options.open_options[spec.substr(0, eq)] = v.is_discarded() ? json(value) : v;
}

void parse_cast_spec(const std::string& spec, CopyOptions& options) {
  for (const std::string& item : parse_name_list(spec)) {
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      options.cast_all = parse_dtype(item);
    else
      options.casts[parse_dtype(item.substr(0, eq))] = parse_dtype(item.substr(eq + 1));
  }
}

}  // namespace stowage
