// The chunks of a Zarr v2 array, called concurrently by the host through the
// array's node handle. A chunk file holds a whole chunk (edge chunks too,
// padded with the fill value) in the array's byte order and C or F order,
// through its compressor; the host converts byte order and layout.
#include "chunk_util.hpp"
#include "codec_names.hpp"
#include "store.hpp"

#include "filter_chain.hpp"

#include <algorithm>
#include <cstring>

namespace zarr {

namespace sdk = stowage::sdk;
using sdk::corrupt;
using sdk::fail;
using sdk::invalid;

namespace {

class ArrayNode final : public sdk::ArrayNode {
 public:
  ArrayNode(ZarrStore& store, std::shared_ptr<OpenArray> a) : store_(store), a_(std::move(a)) {}
  bool read_chunk(const uint64_t* index, void* out, size_t capacity,
                  uint64_t* chunk_shape) override {
    return store_.read_chunk(*a_, index, out, capacity, chunk_shape);
  }
  void write_chunk(const uint64_t* index, const void* in, size_t size,
                   const uint64_t* chunk_shape) override {
    store_.write_chunk(*a_, index, in, size, chunk_shape);
  }
  bool chunk_exists(const uint64_t* index) override { return store_.chunk_exists(*a_, index); }
  Slabs read_chunk_slabs(const uint64_t* index, uint64_t begin, uint64_t end, const PieceFn& piece,
                         uint64_t* chunk_shape) override {
    return store_.read_chunk_slabs(*a_, index, begin, end, piece, chunk_shape);
  }
  std::unique_ptr<sdk::ChunkLock> lock_chunk(const uint64_t* index) override {
    return store_.lock_chunk(*a_, index);
  }
  void unlock_chunk(std::unique_ptr<sdk::ChunkLock> lock) override {
    store_.unlock_chunk(*a_, std::move(lock));
  }
  void flush() override { store_.flush(*a_); }

 private:
  ZarrStore& store_;
  std::shared_ptr<OpenArray> a_;
};

}  // namespace

void check_index(const ArrayMeta& meta, const uint64_t* index, const std::string& dir) {
  for (size_t d = 0; d < meta.ndim(); ++d)
    if (index[d] >= meta.grid(d))
      invalid(dir + ": chunk index " + std::to_string(index[d]) + " along dimension " +
              std::to_string(d) + " is outside the grid of " + std::to_string(meta.grid(d)));
}

// "<array>/<i0>.<i1>..." (or with '/'); a 0-d array's one chunk is "0".
static std::string chunk_key(const OpenArray& a, const uint64_t* index) {
  std::string key = a.dir;
  key += '/';
  if (a.meta.ndim() == 0) return key + '0';
  for (size_t d = 0; d < a.meta.ndim(); ++d) {
    if (d) key += a.meta.separator;
    key += std::to_string(index[d]);
  }
  return key;
}

std::string chunk_file(const OpenArray& a, const uint64_t* index) {
  return a.v3 ? chunk_file_v3(a, index) : chunk_key(a, index);
}

bool missing_chunk(const ArrayMeta& meta, uint8_t* out) {
  if (!meta.fill.plugin_fills) return false;
  fill(out, meta.chunk_elements(), meta.fill);
  return true;
}

void fill(uint8_t* out, uint64_t elements, const FillValue& value) {
  if (value.is_zero()) return static_cast<void>(std::memset(out, 0, elements * value.bytes.size()));
  const size_t n = value.bytes.size();
  for (uint64_t i = 0; i < elements; ++i) std::memcpy(out + i * n, value.bytes.data(), n);
}

// Copies a chunk of `extent` (the part of an edge chunk inside the array,
// as the host hands it) into a whole chunk of `full`, both in the same
// element order, row by row along the fastest dimension.
void embed(const uint8_t* src, std::vector<uint64_t> extent, uint8_t* dst,
           std::vector<uint64_t> full, bool fortran, size_t item) {
  if (fortran) {  // the fastest dimension first: reversed, it is C order
    std::reverse(extent.begin(), extent.end());
    std::reverse(full.begin(), full.end());
  }
  const size_t n = extent.size();
  std::vector<uint64_t> stride(n);  // dst bytes per step along each dimension
  stride[n - 1] = item;
  for (size_t d = n - 1; d > 0; --d) stride[d - 1] = stride[d] * full[d];
  const uint64_t row = extent[n - 1] * item;
  std::vector<uint64_t> at(n, 0);
  for (bool more = true; more;) {
    uint64_t offset = 0;
    for (size_t d = 0; d + 1 < n; ++d) offset += at[d] * stride[d];
    std::memcpy(dst + offset, src, row);
    src += row;
    more = false;
    for (size_t d = n - 1; d-- > 0;) {
      if (++at[d] < extent[d]) {
        more = true;
        break;
      }
      at[d] = 0;
    }
  }
}

const uint8_t* whole_chunk(const ArrayMeta& meta, const std::string& dir,
                           const uint64_t* chunk_shape, const void* in, size_t size,
                           sdk::BufferPool& scratch,
                           std::optional<sdk::BufferPool::Lease>& padded) {
  uint64_t elements = 1;
  bool whole = true;
  for (size_t d = 0; d < meta.ndim(); ++d) {
    if (chunk_shape[d] == 0 || chunk_shape[d] > meta.chunks[d])
      invalid(dir + ": chunk shape " + std::to_string(chunk_shape[d]) + " along dimension " +
              std::to_string(d) + " is not in 1.." + std::to_string(meta.chunks[d]));
    elements *= chunk_shape[d];
    whole = whole && chunk_shape[d] == meta.chunks[d];
  }
  if (size != elements * meta.type.size)
    invalid(dir + ": write_chunk got " + std::to_string(size) + " bytes for " +
            std::to_string(elements) + " elements of " + meta.type.name);
  const auto* chunk = static_cast<const uint8_t*>(in);
  if (whole) return chunk;
  padded.emplace(scratch.take(meta.chunk_bytes()));
  fill(padded->data(), meta.chunk_elements(), meta.fill);
  embed(chunk, std::vector<uint64_t>(chunk_shape, chunk_shape + meta.ndim()), padded->data(),
        meta.chunks, meta.fortran, meta.type.size);
  return padded->data();
}

std::unique_ptr<sdk::Node> ZarrStore::open_node(std::string_view node) {
  std::vector<std::string> parts = sdk::split_node_path(node);
  if (require_node(parts, node) == Kind::group) return std::make_unique<sdk::GroupNode>();
  std::shared_ptr<OpenArray> a = open_array(node_dir(parts));
  if (a->meta.strings) return strings_node(*this, std::move(a));
  return std::make_unique<ArrayNode>(*this, std::move(a));
}

// A chunk file's `size` bytes at `file` into the array's chunk at `out`:
// through the compressor, then the filters (last first) when there are any.
void ZarrStore::decode_chunk(OpenArray& a, const std::string& key, uint8_t* file, uint64_t size,
                             uint8_t* out) {
  const FilterChain* filters = a.meta.filter_chain.get();
  const uint64_t stored = filters ? filters->encoded_bytes() : a.meta.chunk_bytes();
  std::optional<sdk::BufferPool::Lease> decoded;
  const uint8_t* chunk = file;
  if (a.uncompressed) {
    if (size != stored)
      corrupt(key + ": chunk file is " + std::to_string(size) +
              " bytes; an uncompressed chunk of this array is " + std::to_string(stored));
  } else {
    uint8_t* into = out;
    if (filters) into = decoded.emplace(scratch_.take(stored)).data();
    size_t written = 0;
    try {
      written = a.codec.get().decode(file, size, into, stored);
    } catch (const sdk::Error& e) {
      fail(e.code(), key + ": " + e.what());
    }
    if (written != stored)
      corrupt(key + ": chunk decodes to " + std::to_string(written) +
              " bytes; a chunk of this array is " + std::to_string(stored));
    chunk = into;
  }
  if (filters) decode_filters(*filters, chunk, out, scratch_, key);
}

bool ZarrStore::read_chunk(OpenArray& a, const uint64_t* index, void* out, size_t capacity,
                           uint64_t* chunk_shape) {
  require_codec(a.meta);
  if (a.v3) return read_chunk_v3(a, index, out, capacity, chunk_shape);
  const ArrayMeta& meta = a.meta;
  check_index(meta, index, a.dir);
  const uint64_t bytes = meta.chunk_bytes();
  if (bytes > capacity)
    invalid(a.dir + ": a chunk of " + std::to_string(bytes) + " bytes does not fit the " +
            std::to_string(capacity) + "-byte buffer");
  std::copy(meta.chunks.begin(), meta.chunks.end(), chunk_shape);
  const std::string key = chunk_key(a, index);
  auto* dst = static_cast<uint8_t*>(out);
  // With filters the stored chunk is their output, which the compressor
  // decodes to scratch and the filters undo into the caller's buffer.
  const FilterChain* filters = meta.filter_chain.get();
  const uint64_t stored = filters ? filters->encoded_bytes() : bytes;
  bool found;
  if (a.uncompressed &&
      !filters) {  // the file is the chunk: read straight into the caller's buffer
    uint64_t got = 0, size = 0;
    found = storage_.read_into_if_exists(key, 0, dst, bytes, &got, &size);
    if (found && size != bytes)
      corrupt(key + ": chunk file is " + std::to_string(size) +
              " bytes; an uncompressed chunk of this array is " + std::to_string(bytes));
  } else {
    // Read whole into pooled scratch (no allocation, no zero-filling per
    // chunk): its size is unknown until read, so the first read asks for
    // what a full chunk can take; more is rare (incompressible data).
    const uint64_t want = std::max<uint64_t>(stored + stored / 8 + 64, 4096);
    sdk::BufferPool::Lease file = scratch_.take(want);
    uint64_t got = 0;
    found = storage_.read_into_if_exists(key, 0, file.data(), want, &got);
    if (found && got == want) {
      const uint64_t size = storage_.size(key);
      if (size > 2 * kMaxChunkBytes)
        corrupt(key + ": chunk file is " + std::to_string(size) + " bytes, over 4 GiB");
      file->resize(size);  // grown: the first `got` bytes stay
      storage_.read_exact(key, got, file.data() + got, size - got);
      got = size;
    }
    if (found) decode_chunk(a, key, file.data(), got, dst);
  }
  return found || absent_chunk(a, key) || missing_chunk(meta, dst);
}

sdk::ArrayNode::Slabs ZarrStore::read_chunk_slabs(OpenArray& a, const uint64_t* index,
                                                  uint64_t begin, uint64_t end,
                                                  const sdk::ArrayNode::PieceFn& piece,
                                                  uint64_t* chunk_shape) {
  using Slabs = sdk::ArrayNode::Slabs;
  const ArrayMeta& meta = a.meta;
  // A read is a syscall, not a request, only where the storage maps files.
  if (!meta.codec_error.empty() || meta.fortran || meta.fill.plugin_fills || meta.chunks.empty() ||
      !storage_.can(STOWAGE_CAP_MAP))
    return Slabs::unsupported;
  std::copy(meta.chunks.begin(), meta.chunks.end(), chunk_shape);  // before the first piece
  if (a.v3) return read_chunk_slabs_v3(a, index, begin, end, piece);
  if (!a.uncompressed || meta.filter_chain) return Slabs::unsupported;
  check_index(meta, index, a.dir);
  const std::string key = chunk_key(a, index);
  // Anything but a chunk file there (none, a directory) goes to read_chunk, which names it.
  const bool read =
      read_raw_slabs(storage_, key, 0, meta.chunk_bytes(), meta, begin, end, piece, scratch_);
  return read ? Slabs::read : Slabs::unsupported;
}

void ZarrStore::write_chunk(OpenArray& a, const uint64_t* index, const void* in, size_t size,
                            const uint64_t* chunk_shape) {
  require_writable("write_chunk");
  require_codec(a.meta);
  if (a.v3) return write_chunk_v3(a, index, in, size, chunk_shape);
  const ArrayMeta& meta = a.meta;
  check_index(meta, index, a.dir);
  const std::string key = chunk_key(a, index);
  const uint64_t bytes = meta.chunk_bytes();
  std::optional<sdk::BufferPool::Lease> padded;
  const void* chunk = whole_chunk(meta, a.dir, chunk_shape, in, size, scratch_, padded);
  std::optional<sdk::BufferPool::Lease> filtered;
  if (meta.filter_chain) {
    filtered.emplace(
        encode_filters(*meta.filter_chain, static_cast<const uint8_t*>(chunk), scratch_, key));
    chunk = filtered->data();
  }
  const uint64_t stored = meta.filter_chain ? meta.filter_chain->encoded_bytes() : bytes;
  sdk::Staged file = storage_.stage(key);
  if (a.uncompressed) {
    file.append(chunk, stored);
  } else {
    const sdk::HostCodec& codec = a.codec.get();
    sdk::BufferPool::Lease buf = scratch_.take(codec.bound(stored));
    size_t encoded;
    try {
      encoded = codec.encode(chunk, stored, buf.data(), buf->size());
    } catch (const sdk::Error& e) {
      fail(e.code(), key + ": " + e.what());
    }
    file.append(buf.data(), encoded);
  }
  // Published whole: a reader never sees half a chunk, a killed writer leaves the old one.
  storage_.publish(file);
}

// A chunk written in part is read, merged and published under the lock
// of its file, or of its shard (chunk_io_v3.cpp).
std::unique_ptr<sdk::ChunkLock> ZarrStore::lock_chunk(OpenArray& a, const uint64_t* index) {
  if (a.v3) return lock_chunk_v3(a, index);
  check_index(a.meta, index, a.dir);
  return sdk::lock_chunk_key(storage_, chunk_key(a, index));
}

void ZarrStore::unlock_chunk(OpenArray& a, std::unique_ptr<sdk::ChunkLock> lock) {
  if (a.v3 && lock) publish_shard_held(a, static_cast<sdk::KeyChunkLock&>(*lock).key);
}

void ZarrStore::flush(OpenArray& a) {
  if (a.v3) flush_shards(a);
}

// A stat of the chunk's file: nothing is read or decoded.
bool ZarrStore::chunk_exists(const OpenArray& a, const uint64_t* index) const {
  if (a.v3) return chunk_exists_v3(a, index);
  check_index(a.meta, index, a.dir);
  return stored(a, chunk_key(a, index));
}

// A read found no chunk (or shard) at `key`. Only a chunk absent from an
// array that still exists is the fill value: without its metadata file the
// array was removed while open, an error naming the chunk. One stat per
// missing chunk (per missing shard and handle, sharded).
bool ZarrStore::absent_chunk(const OpenArray& a, const std::string& key) const {
  const std::string meta =
      consolidated_ ? root_ + "/" + kConsolidatedFile : a.dir + "/" + (a.v3 ? kV3File : kArrayFile);
  if (!storage_.is_file(meta))
    sdk::fail(STOWAGE_NOT_FOUND, key + ": the array was removed while open (" + meta + " is gone)");
  return false;
}

// Whether a chunk (or shard) file is stored at `key`, and its size; a
// directory there, or a file where a directory of the key should be, is an
// error naming it.
bool ZarrStore::stored(const OpenArray& a, const std::string& key, uint64_t* size) const {
  const int32_t kind = storage_.kind(key, size);
  if (kind == STOWAGE_ENTRY_FILE) return true;
  const bool shard = a.v3 && a.meta.v3->sharded;
  if (kind == STOWAGE_ENTRY_DIRECTORY)
    sdk::fail(STOWAGE_IO, key + ": is a directory, not a " + (shard ? "shard" : "chunk") + " file");
  uint8_t none = 0;
  uint64_t got = 0;  // stat calls a path through a file absent: an open says it is broken
  if (storage_.read_into_if_exists(key, 0, &none, 0, &got, size)) return true;
  return absent_chunk(a, key);
}

}  // namespace zarr
