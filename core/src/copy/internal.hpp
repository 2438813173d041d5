// The parts of stowage::copy (copy.hpp), one job per file: options.cpp (the
// parsers the front ends share), preflight.cpp (every refusal before a byte
// is written), casts.cpp, the Converter's node kinds (groups, dense, sparse,
// strings, records; create.cpp and metadata.cpp for what they share),
// publish.cpp (staging and publishing), copy.cpp (the entry point).
#pragma once

#include "../strided.hpp"  // detail::product

#include <stowage/copy.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

namespace stowage::copying {

using Clock = std::chrono::steady_clock;

using detail::product;

inline std::string join(const std::string& a, const std::string& b) {
  return a.empty() ? b : b.empty() ? a : a + "/" + b;
}

// Labels carried in attributes by formats that have no label storage (N5).
constexpr const char* kLabelsAttribute = "stowage_labels";

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

// casts.cpp: element casts.

// Converts n elements of type `from` at `in` to type `to` at `out`. A value the
// new type cannot hold is an error naming it and `where(i)` (its index), unless
// `overflow` asks to clip it or (integers) wrap it modulo 2^bits. To bool, any
// non-zero value is true, as in numpy.
void cast_elements(DType from, DType to, const void* in, void* out, size_t n, CastOverflow overflow,
                   const std::function<std::string(size_t)>& where);
// "[2, 5] of in.n5::raw/s0": element i of the C-order region (offset, extent) of a node.
std::string index_text(const std::string& node, const std::vector<uint64_t>& offset,
                       const std::vector<uint64_t>& extent, size_t i);

// preflight.cpp: every refusal made before a byte is written.

// Where a dataset lives: its real path (symlinks and '..' resolved, as far as
// it exists) and the node path inside it, one component per entry.
struct Place {
  std::filesystem::path path;
  std::vector<std::string> node;
};
Place place_of(const std::string& path, const std::string& node);
void refuse_overlap(const std::string& source, const std::string& destination, const Place& src,
                    const Place& dst);
void refuse_replacing_other(const std::string& dst_path, const std::string& to, Registry& registry);
void require_format(Registry& registry, const std::string& id, const char* role);
std::string require_codec(Registry& registry, const json& compression);
void require_axes(const std::vector<std::string>& axes);
json destination_options(const CopyOptions& options, const std::string& to, bool new_store,
                         Registry& registry);
json destination_facts(const Store& dst, const CopyOptions& options, Registry& registry);

class Converter {
 public:
  // `codec_id`: the canonical id of opts.compression ("gzip" for "zlib"), "" if none.
  Converter(const CopyOptions& opts, Registry& registry, std::string codec_id)
      : opts_(opts), registry_(registry), codec_id_(std::move(codec_id)) {}

  uint64_t total_bytes(const Store& src, const std::string& node) const;

  void copy(const Store& src, const std::string& src_node, Store& dst, const std::string& dst_node,
            Progress& progress);

  uint64_t nodes() const { return nodes_; }
  // The multiscale convention the open destination writes, as its root
  // description declares it ({"convention": "ome-ngff", "version": "0.5"}).
  void set_multiscales(json convention) { multiscales_ = std::move(convention); }

  DType target_dtype(DType from) const;
  std::vector<std::string> notes;

 private:
  // --part I/N: the destination was made by --create-only; write our share of chunks.
  bool filling_part() const { return opts_.part_count > 0; }

  bool same_format(const Store& src, const Store& dst) const {
    return src.format() == dst.format();
  }

  // Names and labels of each dimension of a source node.
  struct DimLabels {
    std::string name;
    std::vector<std::string> labels;  // empty: none
  };

  // groups.cpp: the walk: each node by its kind, groups
  bool format_has(const Store& store, uint64_t cap) const;
  void copy_group(const Store& src, const std::string& src_node, const NodeInfo& info, Store& dst,
                  const std::string& dst_node, Progress& progress);

  // metadata.cpp: attributes, dimension names and labels, multiscales
  json with_multiscales(const Store& src, const std::string& node, const json& attributes,
                        const Store& dst);
  std::vector<DimLabels> source_dims(const Store& src, const std::string& node,
                                     const NodeInfo& info) const;
  json dims_json(const std::vector<DimLabels>& dims) const;
  json attributes_for(const NodeInfo& info, const std::string& node = "") const;
  void write_labels(Store& dst, const std::string& dst_node, const std::vector<DimLabels>& dims,
                    const std::vector<uint64_t>& shape);

  // create.cpp: creating a node: codec, storage parameters, attributes the format refuses
  void create_node(Store& dst, const std::string& node, json desc, const std::string& what,
                   const json& storage = nullptr);
  json storage_for(const Store& src, const Store& dst, const NodeInfo& info) const;
  static std::string key_list(const json& object);
  void require_codec_kept(Store& dst, const std::string& node, const std::string& what);
  bool created_without_attributes(Store& dst, const std::string& node, const json& desc);
  json codec_for(const Store& src, const Store& dst, const NodeInfo& info) const;
  void create_keeping_codec(Store& dst, const std::string& node, json desc);
  [[noreturn]] void cannot_create(const Error& e, const Store& dst, const std::string& what,
                                  const char* dtype = nullptr) const;

  // dense.cpp: dense arrays: chunk by chunk, or in tiles with casts
  void copy_dense(const Store& src, const std::string& src_node, const NodeInfo& info, Store& dst,
                  const std::string& dst_node, Progress& progress);
  std::vector<uint64_t> shards_for(const std::vector<uint64_t>& chunks) const;
  std::vector<uint64_t> default_chunks(const Store& src, const Store& dst, const std::string& node,
                                       const NodeInfo& info, DType to);
  static std::string spec_of(const Store& src, const std::string& node);
  bool copy_chunks(const Array& in, const Array& out, Progress& progress);
  void copy_tiles(const Array& in, const Array& out, Progress& progress, const std::string& label,
                  bool source_reads_part);

  // sparse.cpp: sparse matrices, or dense where the format has none
  void copy_sparse(const Store& src, const std::string& src_node, const NodeInfo& info, Store& dst,
                   const std::string& dst_node, Progress& progress);
  void densify(const Sparse& in, const NodeInfo& info, const std::vector<DimLabels>& dims,
               const json& attrs, Store& dst, const std::string& dst_node, Progress& progress,
               const std::string& label);

  // strings.cpp: string arrays
  void copy_strings(const Store& src, const std::string& src_node, Store& dst,
                    const std::string& dst_node);
  void add_layout(json& desc, const Store& src, const Store& dst, const NodeInfo& info) const;

  // records.cpp: record sets
  void copy_records(const Store& src, const std::string& src_node, const NodeInfo& info, Store& dst,
                    const std::string& dst_node, Progress& progress);

  const CopyOptions& opts_;
  Registry& registry_;
  const std::string codec_id_;
  uint64_t nodes_ = 0;
  json multiscales_ = json::object();  // the destination's declared convention (set_multiscales)
  std::map<std::string, json>
      level_attributes_;  // source node -> n5-viewer keys to add (with_multiscales)
};

}  // namespace stowage::copying
