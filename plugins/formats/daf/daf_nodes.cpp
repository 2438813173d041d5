// The node handles of a Daf repository. A handle loads its property once
// (descriptor validated, files mapped) when the host opens it; an array
// handle still asks the store first whether the property is being written
// in this session, so reads see the session's own writes.
#include "daf_store.hpp"

namespace daf {

namespace {

class ArrayNode final : public sdk::ArrayNode {
 public:
  ArrayNode(DafStore& store, std::string node, std::shared_ptr<const Property> stored)
      : store_(store), node_(std::move(node)), stored_(std::move(stored)) {}
  bool read_chunk(const uint64_t* index, void* out, size_t capacity,
                  uint64_t* chunk_shape) override {
    return store_.read_chunk(node_, stored_.get(), index, out, capacity, chunk_shape);
  }
  void write_chunk(const uint64_t* index, const void* in, size_t size,
                   const uint64_t* chunk_shape) override {
    store_.write_chunk(node_, index, in, size, chunk_shape);
  }
  bool chunk_exists(const uint64_t* index) override {
    return store_.chunk_exists(node_, stored_.get(), index);
  }

 private:
  DafStore& store_;
  std::string node_;
  std::shared_ptr<const Property> stored_;
};

// A stored sparse matrix, or (stored_ null) one being appended in this session.
class SparseNode final : public sdk::SparseNode {
 public:
  SparseNode(DafStore& store, std::string node, std::shared_ptr<const Property> stored)
      : store_(store), node_(std::move(node)), stored_(std::move(stored)) {}
  uint64_t count(uint64_t begin, uint64_t end) override {
    return stored().sparse_count(begin, end);
  }
  void read(uint64_t begin, uint64_t end, uint64_t* indptr, uint32_t* indices, void* values,
            uint64_t nnz_capacity) override {
    stored().read_sparse(begin, end, indptr, indices, values, nnz_capacity);
  }
  void append(uint64_t n_major, const uint64_t* indptr, const uint32_t* indices,
              const void* values) override {
    store_.append_sparse(node_, n_major, indptr, indices, values);
  }

 private:
  const Property& stored() const {
    if (!stored_) sdk::invalid(node_ + ": a sparse matrix being written is read after close()");
    return *stored_;
  }
  DafStore& store_;
  std::string node_;
  std::shared_ptr<const Property> stored_;
};

class PropertyStringsNode final : public sdk::StringsNode {
 public:
  explicit PropertyStringsNode(std::shared_ptr<const Property> stored)
      : stored_(std::move(stored)) {}
  void read(uint64_t begin, uint64_t end, const sdk::ItemFn& item) override {
    stored_->read_strings(begin, end, item);
  }

 private:
  std::shared_ptr<const Property> stored_;
};

class AxisNode final : public sdk::StringsNode {
 public:
  AxisNode(std::string node, std::shared_ptr<const std::vector<std::string>> entries)
      : node_(std::move(node)), entries_(std::move(entries)) {}
  void read(uint64_t begin, uint64_t end, const sdk::ItemFn& item) override {
    end = std::min<uint64_t>(end, entries_->size());
    if (begin > end) sdk::invalid(node_ + ": string range out of bounds");
    for (uint64_t k = begin; k < end; ++k) item((*entries_)[k].data(), (*entries_)[k].size());
  }

 private:
  std::string node_;
  std::shared_ptr<const std::vector<std::string>> entries_;
};

}  // namespace

std::unique_ptr<sdk::Node> DafStore::open_node(std::string_view node_view) {
  NodeRef ref = parse_node(node_view);
  std::string node(node_view);
  if (ref.kind == NodeRef::Axis) {
    auto entries = axis_entries(ref.rows);
    if (!entries) sdk::fail(STOWAGE_NOT_FOUND, root_ + ": no axis '" + ref.rows + "'");
    return std::make_unique<AxisNode>(node, std::move(entries));
  }
  if (!ref.is_property()) {
    list(node);  // NOT_FOUND for groups of missing axes
    return std::make_unique<sdk::GroupNode>();
  }
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    if (pending_arrays_.count(node)) return std::make_unique<ArrayNode>(*this, node, nullptr);
    if (pending_sparse_.count(node)) return std::make_unique<SparseNode>(*this, node, nullptr);
  }
  std::shared_ptr<const Property> p = load(ref, node);
  if (p->is_string()) return std::make_unique<PropertyStringsNode>(std::move(p));
  if (p->is_sparse_matrix()) return std::make_unique<SparseNode>(*this, node, std::move(p));
  return std::make_unique<ArrayNode>(*this, node, std::move(p));
}

}  // namespace daf
