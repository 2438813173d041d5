// The Daf FilesDaf store: a repository directory opened through stowage's
// C ABI. See README.md in this folder for the mapping onto stowage nodes.
//
// Reading: a node handle (daf_nodes.cpp) loads its property once, validated
// and mapped; describe and open_node run concurrently, so the axis cache
// sits behind a mutex.
// Writing: numeric arrays and sparse matrices are staged (sdk::Staged, see
// PendingArray) and published by close() together with their descriptors;
// strings, axes and scalars are whole values written at once
// (Storage::write). A repository opened with "w" (or "w+" on a missing path)
// is built in a staged directory beside the destination (Storage::
// stage_directory) and moved over it by close().
//
// All I/O goes through the storage layer (sdk::Storage of the location's
// scheme): local paths, mem://, and http:// for reading.
#pragma once

#include "daf_files.hpp"
#include "daf_json.hpp"
#include "daf_node.hpp"
#include "daf_property.hpp"

#include <stowage/plugin_util.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace daf {

// A numeric vector or matrix being written chunk by chunk into one staged
// <base>.data holding the whole column-major data, sized up front so tiles
// never written are holes (zeros). write_chunk calls at distinct tiles write
// their runs in parallel (staged_write at distinct offsets may run
// concurrently); a pending chunk, and the dense -> sparse conversion at
// close, read it back (staged_read).
struct PendingArray {
  NodeRef ref;
  std::string base;
  ElType eltype = ElType::Float64;
  Tiling tiling;              // the chunk grid (rows, cols, tile sizes)
  bool store_sparse = false;  // asked for sparse storage (daf_storage: sparse)
  sdk::Staged data;           // becomes <base>.data (or is read back to build the sparse files)
  std::unique_ptr<std::atomic<bool>[]> written;  // per chunk
};

// A CSC matrix being appended column by column.
struct PendingSparse {
  NodeRef ref;
  std::string base;
  ElType eltype = ElType::Float64, indtype = ElType::UInt32;
  uint64_t rows = 0, cols = 0;
  std::vector<uint64_t> colptr{0};  // 0-based, one entry per appended column + 1
  sdk::Staged rowval, nzval;        // appended to, published by close()
};

class DafStore : public sdk::Store {
 public:
  static int32_t identify(const sdk::Probe& probe);
  static std::unique_ptr<sdk::Store> open(const sdk::Host& host, std::string_view path,
                                          uint32_t mode, std::string_view options);

  DafStore(const sdk::Host& host, std::string path, uint32_t mode, std::string_view options);
  ~DafStore() override;

  void close() override;
  // The tree, by path.
  std::vector<std::string> list(std::string_view node) override;
  std::string describe(std::string_view node) override;
  // An axis or a string property is a strings node, a numeric property an
  // array or a sparse node holding the property as loaded (daf_nodes.cpp).
  std::unique_ptr<sdk::Node> open_node(std::string_view node) override;
  void create(std::string_view node, std::string_view json) override;
  void set_attributes(std::string_view node, std::string_view json) override;
  void remove(std::string_view node) override;
  void write_strings(std::string_view node, const std::vector<std::string_view>& values) override;

  // The data of one property, for its node handle. `stored` is the property
  // as the handle loaded it (nullptr for one created in this session); a
  // property written in this session is read back from its staged file.
  bool read_chunk(const std::string& node, const Property* stored, const uint64_t* chunk_index,
                  void* out, size_t capacity, uint64_t* chunk_shape);
  void write_chunk(const std::string& node, const uint64_t* chunk_index, const void* in,
                   size_t size, const uint64_t* chunk_shape);
  bool chunk_exists(const std::string& node, const Property* stored, const uint64_t* chunk_index);
  void append_sparse(const std::string& node, uint64_t n_major, const uint64_t* indptr,
                     const uint32_t* indices, const void* values);

 private:
  // ---- layout
  std::string axis_file(const std::string& axis) const { return root_ + "/axes/" + axis + ".txt"; }
  std::string property_base(const NodeRef& ref) const;
  std::string property_dir(const NodeRef& ref) const;
  bool v11() const { return version_[1] >= 1; }

  // ---- reading (daf_store.cpp)
  std::vector<std::string> axis_names() const;
  std::vector<std::string> names_in(const std::string& dir, std::string_view suffix) const {
    return names_with_suffix(storage_, dir, suffix);
  }
  std::shared_ptr<const std::vector<std::string>> axis_entries(const std::string& axis);
  std::optional<uint64_t> axis_length(const std::string& axis);  // nullopt: no such axis
  uint64_t required_axis_length(const std::string& axis, const std::string& node);
  // Loads a property (its descriptor validated, its files mapped).
  std::shared_ptr<const Property> load(const NodeRef& ref, std::string_view node);
  std::string describe_root();
  std::string describe_property(const NodeRef& ref, std::string_view node);
  void forget_cached();

  // ---- writing (daf_write.cpp)
  void require_writable(std::string_view what) const;
  void create_repository();
  void add_axis_directories(const std::string& axis);
  void write_axis(const NodeRef& ref, const std::vector<std::string_view>& values);
  void write_string_property(const NodeRef& ref, std::string_view node,
                             const std::vector<std::string_view>& values);
  void create_array(const NodeRef& ref, std::string_view node, const Json& description);
  void create_sparse(const NodeRef& ref, std::string_view node, const Json& description);
  PendingArray& pending_array_for_write(const NodeRef& ref, std::string_view node);
  PendingArray start_pending_array(const NodeRef& ref, ElType eltype, uint64_t rows, uint64_t cols);
  void write_tile(PendingArray& p, const Tiling::Tile& t, const void* in);
  bool read_pending_chunk(const PendingArray& p, const uint64_t* chunk_index, void* out,
                          size_t capacity, uint64_t* chunk_shape) const;
  uint64_t declared_axis_length(const std::string& axis, uint64_t length, const std::string& node);
  void delete_property_files(const std::string& base);
  void delete_axis(const std::string& axis);
  void write_descriptor(const std::string& base, const Descriptor& d, bool matrix,
                        uint64_t n_indices, uint64_t n_colptr);
  void commit_array(PendingArray& p);
  void commit_dense(PendingArray& p);
  void commit_as_sparse(PendingArray& p);
  void commit_sparse(PendingSparse& p);
  void write_relayout(const NodeRef& ref);
  std::string build_metadata() const;
  void publish_metadata();
  void publish_built_repository();
  void set_scalars(const Json& attributes);

  sdk::Storage storage_;    // the backend of final_path_'s scheme
  std::string final_path_;  // where the repository lives once closed
  std::string root_;        // where we read and write now (a temp dir while building)
  bool building_ = false;   // root_ is a temp dir to rename over final_path_ at close
  bool closed_ = false;
  uint32_t mode_;
  Version version_{1, 0};
  bool relayout_ = false;  // option "relayout": write transposed copies too
  bool dirty_ = false;     // something was written (metadata.json needs a rebuild)

  // Axis entries, read once: every property's shape needs its axes' lengths.
  std::mutex cache_mutex_;
  std::map<std::string, std::shared_ptr<const std::vector<std::string>>> axes_;

  std::map<std::string, uint64_t> declared_axes_;  // axis -> length promised by create()
  std::mutex pending_mutex_;  // write_chunk may add a copy-on-write entry concurrently
  std::map<std::string, PendingArray> pending_arrays_;
  std::map<std::string, PendingSparse> pending_sparse_;
};

}  // namespace daf
