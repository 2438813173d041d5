// The node handles of an N5 container: each holds its dataset's metadata,
// parsed once when the host opens the node, and serves the node's data
// through the store (chunk_io.cpp).
#include "store.hpp"

namespace n5 {

namespace sdk = stowage::sdk;

namespace {

class ArrayNode final : public sdk::ArrayNode {
 public:
  ArrayNode(N5Store& store, std::shared_ptr<const OpenDataset> ds)
      : store_(store), ds_(std::move(ds)) {}
  bool read_chunk(const uint64_t* index, void* out, size_t capacity,
                  uint64_t* chunk_shape) override {
    return store_.read_chunk(*ds_, index, out, capacity, chunk_shape);
  }
  void write_chunk(const uint64_t* index, const void* in, size_t size,
                   const uint64_t* chunk_shape) override {
    store_.write_chunk(*ds_, index, in, size, chunk_shape);
  }
  bool chunk_exists(const uint64_t* index) override { return store_.chunk_exists(*ds_, index); }
  Slabs read_chunk_slabs(const uint64_t* index, uint64_t begin, uint64_t end, const PieceFn& piece,
                         uint64_t* chunk_shape) override {
    return store_.read_chunk_slabs(*ds_, index, begin, end, piece, chunk_shape);
  }
  // A chunk is one file: written in part, it is read, merged and published under its key's lock.
  std::unique_ptr<sdk::ChunkLock> lock_chunk(const uint64_t* index) override {
    return store_.lock_chunk(*ds_, index);
  }

 private:
  N5Store& store_;
  std::shared_ptr<const OpenDataset> ds_;
};

class StringsNode final : public sdk::StringsNode {
 public:
  StringsNode(N5Store& store, std::shared_ptr<const OpenDataset> ds)
      : store_(store), ds_(std::move(ds)) {}
  void read(uint64_t begin, uint64_t end, const sdk::ItemFn& item) override {
    store_.read_strings(*ds_, begin, end, item);
  }

 private:
  N5Store& store_;
  std::shared_ptr<const OpenDataset> ds_;
};

class RecordsNode final : public sdk::RecordsNode {
 public:
  RecordsNode(N5Store& store, std::shared_ptr<const OpenDataset> ds)
      : store_(store), ds_(std::move(ds)) {}
  uint64_t count() override { return ds_->meta.block_count(); }
  void read(uint64_t begin, uint64_t end, const sdk::ItemFn& item) override {
    store_.read_records(*ds_, begin, end, item);
  }
  std::string key(uint64_t index) override { return store_.record_key(*ds_, index); }
  std::optional<uint64_t> find_key(std::string_view key) override {
    return store_.find_record(*ds_, key);
  }
  void append(uint64_t count, const void* const* records, const uint64_t* sizes) override {
    store_.append_records(*ds_, count, records, sizes);
  }

 private:
  N5Store& store_;
  std::shared_ptr<const OpenDataset> ds_;
};

}  // namespace

std::unique_ptr<sdk::Node> N5Store::open_node(std::string_view node) {
  std::shared_ptr<const OpenDataset> ds = open_dataset(node);
  if (!ds) return std::make_unique<sdk::GroupNode>();
  switch (ds->meta.type.kind) {
    case ElementKind::numeric:
      return std::make_unique<ArrayNode>(*this, std::move(ds));
    case ElementKind::string:
      if (ds->meta.ndim() != 1)
        sdk::unsupported(ds->dir + ": string datasets with " + std::to_string(ds->meta.ndim()) +
                         " dimensions are not supported (only 1-D)");
      return std::make_unique<StringsNode>(*this, std::move(ds));
    case ElementKind::object:
      return std::make_unique<RecordsNode>(*this, std::move(ds));
  }
  sdk::fail(STOWAGE_INTERNAL, ds->dir + ": unhandled element kind");
}

}  // namespace n5
