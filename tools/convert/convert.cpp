// stowage-convert: any supported dataset to any other, through the core API
// only, so a format plugin added later converts without a change here.
//
// The output is built in a hidden temporary directory beside the destination
// and renamed into place at the end: an error, Ctrl-C or a kill leaves no
// destination (at most a temporary, which the next run to the same
// destination removes). Adding a node to an existing container (DST::node)
// writes in place instead; each plugin writes its files atomically.
#include "tool.hpp"

#include <stowage/plugin_util.hpp>  // FileSetCommit: several output files published as one

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <numeric>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using stowage::DType;
using stowage::Error;
using stowage::ErrorCode;
using stowage::json;
using stowage::NodeInfo;
using stowage::NodeKind;
using stowage::Store;

using Clock = std::chrono::steady_clock;

std::atomic<bool> g_interrupted{false};
extern "C" void on_signal(int) { g_interrupted = true; }

void check_interrupt() {
  if (g_interrupted) throw Error(ErrorCode::io, "interrupted; no destination was written");
}

// ---- options ------------------------------------------------------------------

struct Options {
  std::string src, dst, from, to, compression, chunks, cast, axes, part;
  bool overwrite = false, quiet = false, as_json = false, create_only = false, drop_metadata = false;
  uint64_t part_index = 0, part_count = 1;
};

// "zstd", "gzip:level=9,useZlib=true" or a JSON object -> N5 compression JSON.
json parse_compression(const std::string& spec) {
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

std::vector<uint64_t> parse_list(const std::string& text, const char* what) {
  std::vector<uint64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(item.c_str(), &end, 10);
    if (item.empty() || *end || v == 0)
      throw Error(ErrorCode::invalid_argument, std::string(what) + ": '" + text + "' is not a list of positive integers");
    out.push_back(v);
  }
  return out;
}

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

// ---- progress -------------------------------------------------------------------

class Progress {
 public:
  Progress(bool enabled, uint64_t total_bytes) : enabled_(enabled), total_(total_bytes), start_(Clock::now()) {}
  void add(uint64_t bytes, uint64_t chunks) {
    done_ += bytes;
    chunks_ += chunks;
    if (!enabled_) return;
    auto now = Clock::now();
    if (now - last_ < std::chrono::milliseconds(200) && done_ < total_) return;
    last_ = now;
    double secs = seconds();
    double rate = secs > 0 ? done_ / secs : 0;
    double frac = total_ ? static_cast<double>(done_) / total_ : 1.0;
    int bar = static_cast<int>(frac * 30);
    double eta = rate > 0 ? (total_ - done_) / rate : 0;
    std::fprintf(stderr, "\r[%s%s] %5.1f%%  %.1f/%.1f MB  %llu chunks  %.1f MB/s  %.0fs left ",
                 std::string(bar, '#').c_str(), std::string(30 - bar, '.').c_str(), 100 * frac, done_ / 1e6,
                 total_ / 1e6, static_cast<unsigned long long>(chunks_), rate / 1e6, eta);
  }
  void finish() {
    if (enabled_) std::fprintf(stderr, "\n");
  }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  uint64_t bytes() const { return done_; }
  uint64_t chunks() const { return chunks_; }

 private:
  bool enabled_;
  uint64_t total_, done_ = 0, chunks_ = 0;
  Clock::time_point start_, last_{};
};

// ---- element casts ----------------------------------------------------------------

// Converts n elements of type `from` at `in` to type `to` at `out`, as C++
// converts them; to bool, any non-zero value is true.
void cast_elements(DType from, DType to, const void* in, void* out, size_t n) {
  stowage::visit_dtype(to, [&](auto to_tag) {
    using To = decltype(to_tag);
    stowage::visit_dtype(from, [&](auto from_tag) {
      using From = decltype(from_tag);
      const From* p = static_cast<const From*>(in);
      To* q = static_cast<To*>(out);
      if (to == DType::boolean)
        for (size_t i = 0; i < n; ++i) q[i] = p[i] != From(0);
      else
        for (size_t i = 0; i < n; ++i) q[i] = static_cast<To>(p[i]);
    });
  });
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
  Converter(const Options& opts, stowage::Registry& registry) : opts_(opts), registry_(registry) {
    compression_ = parse_compression(opts.compression);
    if (!opts.chunks.empty()) chunks_ = parse_list(opts.chunks, "--chunks");
    parse_casts(opts.cast);
    if (!opts.axes.empty()) axes_ = split_names(opts.axes);
  }

  uint64_t total_bytes(const Store& src, const std::string& node) const {
    NodeInfo info = src.describe(node);
    uint64_t esize = stowage::dtype_size(info.dtype);
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
    check_interrupt();
    NodeInfo info = src.describe(src_node);
    switch (info.kind) {
      case NodeKind::group: return copy_group(src, src_node, info, dst, dst_node, progress);
      case NodeKind::array: return copy_dense(src, src_node, info, dst, dst_node, progress);
      case NodeKind::sparse: return copy_sparse(src, src_node, info, dst, dst_node, progress);
      case NodeKind::strings: return copy_strings(src, src_node, dst, dst_node);
      case NodeKind::records: return copy_records(src, src_node, info, dst, dst_node);
    }
  }

  uint64_t nodes() const { return nodes_; }

  // --cast T (every array to T) or --cast FROM=TO[,FROM=TO...] (named conversions).
  void parse_casts(const std::string& spec) {
    for (const std::string& item : split_names(spec)) {
      size_t eq = item.find('=');
      if (eq == std::string::npos)
        cast_all_ = stowage::parse_dtype(item);
      else
        casts_[stowage::parse_dtype(item.substr(0, eq))] = stowage::parse_dtype(item.substr(eq + 1));
    }
  }
  DType target_dtype(DType from) const {
    auto it = casts_.find(from);
    if (it != casts_.end()) return it->second;
    return cast_all_ ? *cast_all_ : from;
  }
  std::vector<std::string> notes;

 private:
  // --part I/N: the destination was made by --create-only; write our share of chunks.
  bool filling_part() const { return !opts_.part.empty(); }

  bool same_format(const Store& src, const Store& dst) const { return src.format() == dst.format(); }

  bool dst_has(const Store& dst, uint64_t cap) const {
    auto info = registry_.find("format", dst.format());
    return info && (info->capabilities & cap);
  }

  void copy_group(const Store& src, const std::string& src_node, const NodeInfo& info, Store& dst,
                  const std::string& dst_node, Progress& progress) {
    ++nodes_;
    if (filling_part())
      ;  // the structure exists already (--create-only)
    else if (!dst_node.empty())
      dst.create(dst_node, {{"kind", "group"}, {"attributes", info.attributes}});
    else if (!info.attributes.empty())
      dst.set_attributes("", info.attributes);
    for (const std::string& child : src.list(src_node))
      copy(src, join(src_node, child), dst, join(dst_node, child), progress);
  }

  // Names and labels of each dimension of a source node.
  struct DimLabels {
    std::string name;
    std::vector<std::string> labels;  // empty: none
  };
  std::vector<DimLabels> source_dims(const Store& src, const NodeInfo& info) const {
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
    for (size_t d = 0; d < dims.size(); ++d) {
      if (d < axes_.size()) dims[d].name = axes_[d];
      if (dims[d].name.empty() && dims.size() == 2) dims[d].name = d == 0 ? "rows" : "cols";
    }
    return dims;
  }

  json dims_json(const std::vector<DimLabels>& dims) const {
    json j = json::array();
    for (const auto& d : dims) j.push_back({{"name", d.name}});
    return j;
  }

  json attributes_for(const NodeInfo& info) const {
    if (opts_.drop_metadata) return json::object();
    json attrs = info.attributes;
    attrs.erase(kLabelsAttribute);
    return attrs;
  }

  // Creates a node; when the destination cannot hold the attributes, says
  // exactly what would be lost and how to allow it.
  void create_node(Store& dst, const std::string& node, const json& desc, const std::string& what) {
    try {
      dst.create(node, desc);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::unsupported && attributes_are_the_problem(dst, node, desc))
        throw Error(ErrorCode::unsupported,
                    dst.path() + ": format " + dst.format() + " cannot keep the attributes " +
                        desc["attributes"].dump() + " of " + (node.empty() ? "the array" : node) +
                        " (nor its labels); pass --drop-metadata to convert the values only",
                    dst.path());
      cannot_create(e, dst, what);
    }
  }

  // Whether the same node without attributes would have been accepted.
  static bool attributes_are_the_problem(Store& dst, const std::string& node, const json& desc) {
    if (!desc.contains("attributes") || desc["attributes"].empty()) return false;
    json bare = desc;
    bare["attributes"] = json::object();
    try {
      dst.create(node, bare);
    } catch (const Error&) {
      return false;
    }
    try {
      dst.remove(node);
    } catch (const Error&) {
      // Staged output is discarded on error anyway.
    }
    return true;
  }

  // After create: write labels where the destination keeps them; elsewhere
  // keep them in the node's attributes so they survive a round trip.
  void write_labels(Store& dst, const std::string& dst_node, const std::vector<DimLabels>& dims,
                    const std::vector<uint64_t>& shape, const json& attributes) {
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
    if (any_in_attributes && !opts_.drop_metadata) {
      json attrs = attributes;
      attrs[kLabelsAttribute] = in_attributes;
      dst.set_attributes(dst_node, attrs);
    }
  }

  json codec_for(const Store& src, const Store& dst, const NodeInfo& info) const {
    if (!compression_.is_null()) return compression_;
    if (same_format(src, dst) && !info.codec.is_null()) return info.codec;
    return nullptr;  // the destination's default
  }

  [[noreturn]] void cannot_create(const Error& e, const Store& dst, const std::string& what) const {
    throw Error(e.code(),
                dst.path() + ": format " + dst.format() + " cannot hold " + what + ": " + e.what() +
                    (opts_.cast.empty() ? " (a cast such as --cast float64 may help)" : ""),
                dst.path());
  }

  void copy_dense(const Store& src, const std::string& src_node, const NodeInfo& info, Store& dst,
                  const std::string& dst_node, Progress& progress) {
    ++nodes_;
    stowage::Array in = src.array(src_node);
    DType to = target_dtype(info.dtype);
    std::vector<DimLabels> dims = source_dims(src, info);
    json attrs = attributes_for(info);
    json desc = {{"kind", "array"}, {"dtype", stowage::dtype_name(to)}, {"shape", info.shape},
                 {"chunks", chunks_.empty() ? info.chunks : chunks_}, {"attributes", attrs},
                 {"dims", dims_json(dims)}};
    if (chunks_.size() && chunks_.size() != info.shape.size())
      throw Error(ErrorCode::invalid_argument, "--chunks has " + std::to_string(chunks_.size()) +
                                                   " entries, the array has " + std::to_string(info.shape.size()) +
                                                   " dimensions");
    json codec = codec_for(src, dst, info);
    if (!codec.is_null()) desc["codec"] = codec;
    if (info.fill_value != 0) desc["fill_value"] = info.fill_value;
    if (!filling_part()) {
      create_node(dst, dst_node, desc,
                  std::string(stowage::dtype_name(to)) + " array of rank " + std::to_string(info.shape.size()));
      write_labels(dst, dst_node, dims, info.shape, attrs);
    }
    if (opts_.create_only) return;
    stowage::Array out = dst.array(dst_node);
    if (out.shape() != info.shape || out.dtype() != to)
      throw Error(ErrorCode::invalid_argument, dst.path() + "::" + dst_node + " exists with another shape or dtype");
    if (in.dtype() == out.dtype() && copy_chunks(in, out, progress)) return;
    copy_tiles(in, out, progress);
  }

  // Same chunk shape on both sides: chunk by chunk, with no region buffer
  // in between (the core converts byte and element order in the chunk).
  // The same disjoint parts as copy_tiles: chunk i belongs to part i % N.
  bool copy_chunks(const stowage::Array& in, const stowage::Array& out, Progress& progress) {
    std::mutex progress_mutex;
    return in.copy_chunks_to(out, opts_.part_index, opts_.part_count, [&](uint64_t bytes) {
      check_interrupt();
      std::lock_guard<std::mutex> lock(progress_mutex);
      progress.add(bytes, 1);
    });
  }

  // Copies in tiles aligned to the destination's chunks, each a few tens of
  // MB, so the core decodes and encodes many chunks of a tile in parallel.
  void copy_tiles(const stowage::Array& in, const stowage::Array& out, Progress& progress) {
    const auto& shape = in.shape();
    const size_t nd = shape.size();
    size_t in_size = stowage::dtype_size(in.dtype()), out_size = stowage::dtype_size(out.dtype());
    std::vector<uint64_t> tile = out.info().chunks;
    for (size_t d = 0; d < nd; ++d) tile[d] = std::min(tile[d], shape[d]);
    const bool partial = !opts_.part.empty();
    const uint64_t budget = 64ull << 20;
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
      check_interrupt();
      if (partial && t % opts_.part_count != opts_.part_index) continue;
      std::vector<uint64_t> offset(nd), extent(nd);
      uint64_t rest = t;
      for (size_t d = nd; d-- > 0;) {
        uint64_t i = rest % grid[d];
        rest /= grid[d];
        offset[d] = i * tile[d];
        extent[d] = std::min(tile[d], shape[d] - offset[d]);
      }
      uint64_t n = product(extent);
      buffer.resize(n * in_size);
      in.read(offset, extent, buffer.data());
      const void* data = buffer.data();
      if (in.dtype() != out.dtype()) {
        converted.resize(n * out_size);
        cast_elements(in.dtype(), out.dtype(), buffer.data(), converted.data(), n);
        data = converted.data();
      }
      out.write(offset, extent, data);
      progress.add(n * in_size, 1);
    }
  }

  void copy_sparse(const Store& src, const std::string& src_node, const NodeInfo& info, Store& dst,
                   const std::string& dst_node, Progress& progress) {
    ++nodes_;
    stowage::Sparse in = src.sparse(src_node);
    std::vector<DimLabels> dims = source_dims(src, info);
    json attrs = attributes_for(info);
    if (!dst_has(dst, STOWAGE_CAP_SPARSE)) {
      notes.push_back((src_node.empty() ? "the matrix" : src_node) + ": " + dst.format() + " has no sparse storage; wrote it dense");
      return densify(in, info, dims, attrs, dst, dst_node, progress);
    }
    if (target_dtype(info.dtype) != info.dtype)
      throw Error(ErrorCode::unsupported, "--cast is not supported for sparse matrices");
    json desc = {{"kind", "sparse"}, {"dtype", stowage::dtype_name(info.dtype)}, {"shape", info.shape},
                 {"layout", info.csr ? "csr" : "csc"}, {"attributes", attrs}, {"dims", dims_json(dims)}};
    create_node(dst, dst_node, desc, std::string("a ") + stowage::dtype_name(info.dtype) + " sparse matrix");
    write_labels(dst, dst_node, dims, info.shape, attrs);
    stowage::Sparse out = dst.sparse(dst_node);
    const uint64_t majors = in.majors();
    const uint64_t per_major = majors ? std::max<uint64_t>(1, info.nnz / majors) : 1;
    const uint64_t batch = std::max<uint64_t>(1, (8ull << 20) / per_major);
    const size_t esize = stowage::dtype_size(info.dtype);
    stowage::SparseSlice s;
    for (uint64_t m = 0; m < majors; m += batch) {
      check_interrupt();
      uint64_t end = std::min(majors, m + batch);
      in.read_into(m, end, s);
      out.append(s, end - m);
      progress.add(s.indices.size() * (esize + 4), end - m);
    }
  }

  void densify(const stowage::Sparse& in, const NodeInfo& info, const std::vector<DimLabels>& dims,
               const json& attrs, Store& dst, const std::string& dst_node, Progress& progress) {
    DType to = target_dtype(info.dtype);
    uint64_t rows = info.shape[0], cols = info.shape[1];
    std::vector<uint64_t> chunks = chunks_.empty() ? std::vector<uint64_t>{std::min<uint64_t>(rows, 1024),
                                                                          std::min<uint64_t>(cols, 1024)}
                                                   : chunks_;
    json desc = {{"kind", "array"}, {"dtype", stowage::dtype_name(to)}, {"shape", info.shape},
                 {"chunks", chunks}, {"attributes", attrs}, {"dims", dims_json(dims)}};
    if (!compression_.is_null()) desc["codec"] = compression_;
    create_node(dst, dst_node, desc, std::string("a dense ") + stowage::dtype_name(to) + " matrix");
    write_labels(dst, dst_node, dims, info.shape, attrs);
    stowage::Array out = dst.array(dst_node);
    size_t in_size = stowage::dtype_size(info.dtype), out_size = stowage::dtype_size(to);
    uint64_t band = std::max<uint64_t>(1, std::min<uint64_t>(rows, (64ull << 20) / std::max<uint64_t>(cols * in_size, 1)));
    band = std::max<uint64_t>(out.info().chunks[0], band / out.info().chunks[0] * out.info().chunks[0]);
    std::vector<char> buffer, converted;
    for (uint64_t r = 0; r < rows; r += band) {
      check_interrupt();
      uint64_t n = std::min(band, rows - r);
      buffer.resize(n * cols * in_size);
      in.read_dense(r, 0, n, cols, buffer.data());
      const void* data = buffer.data();
      if (to != info.dtype) {
        converted.resize(n * cols * out_size);
        cast_elements(info.dtype, to, buffer.data(), converted.data(), n * cols);
        data = converted.data();
      }
      out.write({r, 0}, {n, cols}, data);
      progress.add(n * cols * in_size, 1);
    }
  }

  void copy_strings(const Store& src, const std::string& src_node, Store& dst, const std::string& dst_node) {
    ++nodes_;
    if (filling_part()) return;
    dst.write_strings(dst_node, src.read_strings(src_node));
  }

  void copy_records(const Store& src, const std::string& src_node, const NodeInfo& info, Store& dst,
                    const std::string& dst_node) {
    ++nodes_;
    if (filling_part()) return;
    try {
      dst.create(dst_node, {{"kind", "records"}, {"attributes", info.attributes}});
    } catch (const Error& e) {
      if (e.code() != ErrorCode::unsupported || !dst_has(dst, STOWAGE_CAP_RECORDS))
        cannot_create(e, dst, "a record set");
    }
    stowage::Records in = src.records(src_node);
    stowage::Records out = dst.records(dst_node);
    uint64_t n = in.size();
    const uint64_t batch = 4096;
    std::vector<std::string> records;
    for (uint64_t i = 0; i < n; i += batch) {
      check_interrupt();
      records.clear();
      in.read_range(i, std::min(n, i + batch), [&](std::string_view r) { records.emplace_back(r); });
      out.append(records);  // bytes unchanged
    }
  }

  const Options& opts_;
  stowage::Registry& registry_;
  json compression_;
  std::vector<uint64_t> chunks_;
  std::optional<DType> cast_all_;
  std::map<DType, DType> casts_;
  std::vector<std::string> axes_;
  uint64_t nodes_ = 0;
};

// ---- where the output goes ------------------------------------------------------------

bool process_alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

const std::string kTempPrefix = ".stowage-convert.";

// Removes temporaries left by killed conversions to the same destination.
void clean_stale_temporaries(const fs::path& parent, const std::string& name) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    std::string f = entry.path().filename().string();
    if (f.rfind(kTempPrefix, 0) != 0) continue;
    size_t dot = f.find('.', kTempPrefix.size());
    if (dot == std::string::npos || f.substr(dot + 1) != name) continue;
    long pid = std::atol(f.substr(kTempPrefix.size(), dot - kTempPrefix.size()).c_str());
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
  StagingArea(const fs::path& destination) : destination_(destination) {
    parent_ = destination.has_parent_path() ? destination.parent_path() : fs::path(".");
    fs::create_directories(parent_);
    name_ = destination.filename().string();
    // A conversion killed while publishing several files left a journal
    // whose temporaries are in its staging directory: finish it first.
    stowage::sdk::complete_file_set_commit(destination_.string());
    clean_stale_temporaries(parent_, name_);
    dir_ = parent_ / (kTempPrefix + std::to_string(::getpid()) + "." + name_);
    fs::create_directories(dir_);
  }
  ~StagingArea() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path target() const { return dir_ / name_; }

  // Puts what the format wrote in place of the destination, so that a kill
  // at any moment leaves the old destination or the new one. A single entry
  // (a container directory, an .npy file) takes the destination's name in
  // one rename, or one exchange with an existing destination, which then
  // goes with the staging area. Several files (datg's matrix and name files,
  // datadings' six) go as one journaled file set, which the format's next
  // open -- or the next conversion to this destination -- finishes.
  uint64_t publish(bool overwrite) {
    std::vector<fs::path> produced;
    for (const auto& e : fs::directory_iterator(dir_)) produced.push_back(e.path());
    uint64_t bytes = 0;
    for (const auto& p : produced) {
      std::error_code ec;
      if (!overwrite && fs::exists(parent_ / p.filename(), ec))
        throw Error(ErrorCode::invalid_argument, (parent_ / p.filename()).string() + " exists; use --overwrite");
      bytes += disk_bytes(p);
    }
    if (produced.size() == 1) {
      publish_one(produced[0], parent_ / produced[0].filename());
      return bytes;
    }
    stowage::sdk::FileSetCommit set(destination_.string());
    for (const auto& p : produced) set.add(p.string(), (parent_ / p.filename()).string());
    set.commit();
    return bytes;
  }

 private:
  static void publish_one(const fs::path& made, const fs::path& final_path) {
    std::string old = stowage::sdk::replace_atomically(made.string(), final_path.string());
    std::error_code ec;
    if (!old.empty()) fs::remove_all(old, ec);  // usually in the staging area, which goes anyway
  }

  fs::path destination_, parent_, dir_;
  std::string name_;
};

// ---- main -----------------------------------------------------------------------------

int convert(const Options& opts, stowage::Registry& registry) {
  auto [src_path, src_node] = stowage::split_dataset_spec(opts.src);
  auto [dst_path, dst_node] = stowage::split_dataset_spec(opts.dst);
  if (dst_path.empty()) throw Error(ErrorCode::invalid_argument, "no destination given");
  Store src = Store::open(src_path, stowage::Mode::read, opts.from, json::object(), registry);

  std::string to = opts.to;
  if (to.empty()) {
    auto by_ext = registry.format_for_extension(dst_path);
    if (!by_ext)
      throw Error(ErrorCode::invalid_argument,
                  dst_path + ": cannot tell the destination format from its name; give --to ID");
    to = *by_ext;
  }

  std::error_code ec;
  const bool exists = fs::exists(dst_path, ec);
  // A node added to an existing container is written in place (each plugin
  // writes its files atomically); anything new is staged and renamed.
  const bool in_place = exists && (!dst_node.empty() || !opts.part.empty());
  if (!in_place && exists && !opts.overwrite)
    throw Error(ErrorCode::invalid_argument, dst_path + " exists; use --overwrite to replace it");
  if (!opts.part.empty() && !exists)
    throw Error(ErrorCode::invalid_argument,
                dst_path + " does not exist; create it first with --create-only, then run the parts");

  Converter converter(opts, registry);
  Progress progress(!opts.quiet && ::isatty(2), converter.total_bytes(src, src_node));
  uint64_t out_bytes = 0;
  if (in_place) {
    // Add (or with --part, fill) a node of an existing container.
    Store dst = Store::open(dst_path, stowage::Mode::update, to, json::object(), registry);
    if (opts.part.empty() && !dst_node.empty()) {
      bool present = true;
      try {
        dst.describe(dst_node);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::not_found) throw;
        present = false;
      }
      if (present) {
        if (!opts.overwrite)
          throw Error(ErrorCode::invalid_argument, dst_path + "::" + dst_node + " exists; use --overwrite to replace it");
        dst.remove(dst_node);
      }
    }
    converter.copy(src, src_node, dst, dst_node, progress);
    dst.close();
    out_bytes = disk_bytes(dst_path);
  } else {
    StagingArea staging(dst_path);
    Store dst = Store::open(staging.target().string(), stowage::Mode::truncate, to, json::object(), registry);
    converter.copy(src, src_node, dst, dst_node, progress);
    dst.close();
    check_interrupt();
    out_bytes = staging.publish(opts.overwrite);
  }
  progress.finish();

  double secs = progress.seconds();
  double ratio = out_bytes ? static_cast<double>(progress.bytes()) / out_bytes : 0;
  if (!opts.quiet)
    for (const auto& note : converter.notes) std::cerr << "stowage-convert: note: " << note << "\n";
  if (opts.as_json) {
    json summary = {{"source", opts.src}, {"destination", opts.dst}, {"from", src.format()}, {"to", to},
                    {"nodes", converter.nodes()}, {"chunks", progress.chunks()}, {"bytes_in", progress.bytes()},
                    {"bytes_out", out_bytes}, {"ratio", ratio}, {"seconds", secs},
                    {"mb_per_s", secs > 0 ? progress.bytes() / secs / 1e6 : 0.0}, {"notes", converter.notes}};
    if (!opts.part.empty()) summary["part"] = opts.part;
    std::cout << summary.dump(2) << "\n";
  } else if (!opts.quiet) {
    std::fprintf(stderr, "%s (%s) -> %s (%s): %llu nodes, %.2f MB in, %.2f MB out, ratio %.2f, %.2f s, %.1f MB/s\n",
                 opts.src.c_str(), src.format().c_str(), opts.dst.c_str(), to.c_str(),
                 static_cast<unsigned long long>(converter.nodes()), progress.bytes() / 1e6, out_bytes / 1e6, ratio,
                 secs, secs > 0 ? progress.bytes() / secs / 1e6 : 0.0);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Convert any supported dataset to any other.\n"
               "SRC and DST may name a node inside a container as PATH::inner/node.",
               "stowage-convert"};
  stowage::tool::CommonOptions common;
  stowage::tool::add_common_options(app, common);
  Options opts;
  app.add_option("SRC", opts.src, "Source dataset (PATH or PATH::inner/node)")->required();
  app.add_option("DST", opts.dst, "Destination (PATH or PATH::inner/node)")->required();
  app.add_option("--from", opts.from, "Source format id (default: detect)");
  app.add_option("--to", opts.to, "Destination format id (default: from the extension: .n5 .datg .msgpack .npy)");
  app.add_option("--compression", opts.compression,
                 "Codec: N5's JSON object, or a short form such as zstd or gzip:level=9");
  app.add_option("--chunks", opts.chunks, "Chunk shape in C order, e.g. 64,64,64");
  app.add_option("--cast", opts.cast, "Convert values: T (every array to T) or FROM=TO[,...] such as bool=uint8");
  app.add_option("--axes", opts.axes, "Dimension names for sources without them, e.g. gene,cell");
  app.add_flag("--overwrite", opts.overwrite, "Replace an existing destination or node");
  app.add_flag("--quiet", opts.quiet, "No progress bar, notes or summary");
  app.add_flag("--json", opts.as_json, "Print a machine-readable summary (schema in README.md)");
  app.add_flag("--drop-metadata", opts.drop_metadata,
               "Convert values only, dropping attributes and labels the destination cannot keep (e.g. into .npy)");
  app.add_flag("--create-only", opts.create_only,
               "Create the destination's structure without data, for later --part runs");
  app.add_option("--part", opts.part, "Write only part I of N (I/N, 0-based) of the chunks into an existing destination");
  STOWAGE_TOOL_PARSE(app, argc, argv);

  if (!opts.part.empty()) {
    unsigned long long i = 0, n = 0;
    char tail = 0;
    if (std::sscanf(opts.part.c_str(), "%llu/%llu%c", &i, &n, &tail) != 2 || n == 0 || i >= n) {
      std::cerr << "stowage-convert: --part takes I/N with 0 <= I < N, got '" << opts.part << "'\n";
      return 2;
    }
    opts.part_index = i;
    opts.part_count = n;
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);

  return stowage::tool::run(app, [&] { return convert(opts, stowage::tool::make_registry(common)); });
}
