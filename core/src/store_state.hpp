// What an open Store and its node handles hold (store.cpp, region.cpp, staging.cpp).
#pragma once

#include <stowage/stowage.hpp>

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace stowage {

namespace detail {
class Staging;
class MetadataLast;
struct WriterLock;
}  // namespace detail

// What an open Store holds.
struct Store::State {
  // The storage options of its open (its options' "storage"), bound to its
  // path and staging while it lives: released last, after the plugin's close.
  std::vector<std::shared_ptr<void>> storage_bindings;
  Registry* registry = nullptr;
  const stowage_format_vtable* vt = nullptr;
  stowage_store_handle handle = nullptr;
  std::string path, format;
  uint64_t capabilities = 0;  // the descriptor's STOWAGE_CAP_* bits
  // Readers (describe, read_*) share; structural changes are exclusive, as
  // plugin.h promises to plugins.
  mutable std::shared_mutex mutex;
  bool closed = false;
  // The node handles open on this store, closed before the store is. The
  // mutex also orders a handle's close against the store's.
  std::mutex nodes_mutex;
  std::vector<std::weak_ptr<Node>> nodes;

  // Mode "w" (staging.hpp): the plugin writes at `location`, inside the
  // hidden `staged_directory` beside `path`, which close() publishes; empty
  // when the plugin works at `path` itself.
  std::string location, staged_directory;
  std::unique_ptr<detail::Staging> staging;  // owned by this store: close() publishes it
  // Mode "w" on storage that cannot rename (metadata_last.hpp): the plugin
  // writes at `path`, its metadata held until close() puts it last.
  std::unique_ptr<detail::MetadataLast> metadata_last;
  // Writers in other processes may write this dataset at once (the open
  // option "shared_writers": a pickled Python store): on storage that can
  // neither lock a key nor put conditionally, a write covering a chunk or
  // shard in part is refused (region.cpp), as it could undo another's part.
  bool shared_writers = false;
  // Whether the path's storage guards a read-modify-write (lock or conditional put).
  bool storage_guards_updates = true;
  // One writer at a time for a format without STOWAGE_CAP_SHARED_WRITES.
  std::unique_ptr<detail::WriterLock> writer_lock;

  ~State();
  std::string plugin_name() const { return "format " + format; }
  void check(int rc, const stowage_error& err) const {
    if (rc != STOWAGE_OK) fail(rc, err);
  }
  // Throws the plugin's error, its staging location put in the user's words.
  [[noreturn]] void fail(int rc, const stowage_error& err) const;
  // Frees the plugin's store without publishing (its discard, else close).
  void discard_plugin() noexcept;
  // Opens a node's handle through the plugin; `kind` is what the caller
  // expects (the plugin answering another kind is a plugin bug).
  static std::shared_ptr<Node> open_node(const std::shared_ptr<State>& self, std::string_view node,
                                         stowage_node_kind kind);
  // Closes the open node handles (Store::close, before the store).
  void close_nodes();
};

// One open node handle. Views (Array, Sparse, Records) share it; the last
// one to go closes it, unless the store closed first and closed it then.
struct Store::Node {
  std::shared_ptr<Store::State> store;
  std::string path;     // the node's path in the store, for messages
  stowage_node node{};  // kind, handle and the kind's table
  bool closed = false;  // guarded by store->nodes_mutex

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();

  const stowage_array_vtable& array() const {
    return *static_cast<const stowage_array_vtable*>(node.table);
  }
  const stowage_sparse_vtable& sparse() const {
    return *static_cast<const stowage_sparse_vtable*>(node.table);
  }
  const stowage_strings_vtable& strings() const {
    return *static_cast<const stowage_strings_vtable*>(node.table);
  }
  const stowage_records_vtable& records() const {
    return *static_cast<const stowage_records_vtable*>(node.table);
  }
  // UNSUPPORTED naming the operation when an optional write function is NULL.
  void require(bool present, const char* operation) const;
  // INVALID_ARGUMENT once the store closed (and closed this handle); call
  // with the store's mutex held, so a close cannot come in between.
  void require_open() const;
};

namespace detail {
// The state of an open Store; INVALID_ARGUMENT once it closed or for an empty one.
inline Store::State& live(const std::shared_ptr<Store::State>& s) {
  if (!s || s->closed || !s->handle)
    throw Error(ErrorCode::invalid_argument, "use of a closed or empty stowage::Store");
  return *s;
}
}  // namespace detail

}  // namespace stowage
