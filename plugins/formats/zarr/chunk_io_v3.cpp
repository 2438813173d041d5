// The chunks of a Zarr v3 array. Unsharded, a chunk is a file as in v2,
// keyed "c/0/1" (default encoding) or "0.1" (v2 encoding), through the
// codec chain. Sharded, the host's chunks are the INNER chunks: reading one
// reads the shard's index (once per node handle, cached) and then just that
// inner chunk's bytes, two ranged reads; writing one buffers it in the store
// until every inner chunk of its shard inside the array is there, then the
// shard is built and published whole, so a region write covering whole
// shards never reads one back. Shards left incomplete are merged with the
// file on disk when the store closes.
#include "chunk_util.hpp"
#include "store.hpp"

#include <cstring>

namespace zarr {

namespace sdk = stowage::sdk;
using sdk::corrupt;
using sdk::invalid;

namespace {

// Where a chunk lives: its file (the shard, when sharded) and its position
// in the shard's index.
struct Where {
  std::string key;
  uint64_t inner = 0;
  std::vector<uint64_t> shard;
};

Where locate(const OpenArray& a, const uint64_t* index) {
  const V3Layout& l = *a.meta.v3;
  Where w;
  w.shard.assign(index, index + a.meta.ndim());
  if (l.sharded)
    for (size_t d = 0; d < a.meta.ndim(); ++d) {
      w.shard[d] = index[d] / l.per_shard[d];
      w.inner = w.inner * l.per_shard[d] + index[d] % l.per_shard[d];
    }
  w.key = a.dir + '/';
  if (l.default_keys) w.key += 'c';
  else if (w.shard.empty()) w.key += '0';
  for (size_t d = 0; d < w.shard.size(); ++d) {
    if (d || l.default_keys) w.key += l.separator;
    w.key += std::to_string(w.shard[d]);
  }
  return w;
}

// How many inner chunks of the shard at `shard` lie inside the array.
uint64_t chunks_inside(const ArrayMeta& meta, const std::vector<uint64_t>& shard) {
  uint64_t n = 1;
  for (size_t d = 0; d < meta.ndim(); ++d) {
    const uint64_t per = meta.v3->per_shard[d], first = shard[d] * per;
    n *= std::min(per, meta.grid(d) - first);
  }
  return n;
}

bool all_fill(const uint8_t* chunk, uint64_t elements, const FillValue& fill) {
  const size_t n = fill.bytes.size();
  for (uint64_t i = 0; i < elements; ++i)
    if (std::memcmp(chunk + i * n, fill.bytes.data(), n) != 0) return false;
  return true;
}

}  // namespace

// A whole file into pooled scratch: the first read asks for what a chunk
// can take, more is read only for an incompressible one.
bool ZarrStore::read_whole(const std::string& key, std::optional<sdk::BufferPool::Lease>& lease, uint64_t want,
                           uint64_t* got) {
  sdk::BufferPool::Lease& file = lease.emplace(scratch_.take(want));
  if (!storage_.read_into_if_exists(key, 0, file.data(), want, got)) return false;
  if (*got == want) {
    const uint64_t size = storage_.size(key);
    if (size > 2 * kMaxChunkBytes) corrupt(key + ": chunk file is " + std::to_string(size) + " bytes, over 4 GiB");
    file->resize(size);
    storage_.read_exact(key, *got, file.data() + *got, size - *got);
    *got = size;
  }
  return true;
}

std::shared_ptr<const ShardIndex> ZarrStore::shard_index(const OpenArray& a, const std::string& key) const {
  V3State& state = *a.v3;
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    if (auto it = state.indexes.find(key); it != state.indexes.end()) return it->second;
  }
  const V3Layout& l = *a.meta.v3;
  const uint64_t index_bytes = l.index_bytes();
  auto index = std::make_shared<ShardIndex>();
  // The size first (a stat): a shard too short for its index is refused
  // before a buffer of the index's size is made.
  uint64_t size = 0;
  if (storage_.kind(key, &size) == STOWAGE_ENTRY_FILE) {
    if (size < index_bytes)
      corrupt(key + ": shard is " + std::to_string(size) + " bytes, shorter than its " + std::to_string(index_bytes) +
              "-byte index (truncated)");
    std::vector<uint8_t> buf(index_bytes);
    storage_.read_exact(key, l.index_at_end ? size - index_bytes : 0, buf.data(), index_bytes);
    *index = decode_shard_index(buf.data(), l, key, size);
  }
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.indexes.emplace(key, std::move(index)).first->second;
}

bool ZarrStore::read_chunk_v3(OpenArray& a, const uint64_t* index, void* out, size_t capacity, uint64_t* chunk_shape) {
  const ArrayMeta& meta = a.meta;
  const V3Layout& l = *meta.v3;
  check_index(meta, index, a.dir);
  const uint64_t bytes = meta.chunk_bytes();
  if (bytes > capacity)
    invalid(a.dir + ": a chunk of " + std::to_string(bytes) + " bytes does not fit the " + std::to_string(capacity) +
            "-byte buffer");
  std::copy(meta.chunks.begin(), meta.chunks.end(), chunk_shape);
  const Where w = locate(a, index);
  auto* dst = static_cast<uint8_t*>(out);
  bool found = false;
  if (!l.sharded && l.codecs.empty()) {  // the file is the chunk: read straight into the caller's buffer
    uint64_t got = 0, size = 0;
    found = storage_.read_into_if_exists(w.key, 0, dst, bytes, &got, &size);
    if (found && size != bytes)
      corrupt(w.key + ": chunk file is " + std::to_string(size) + " bytes; an uncompressed chunk of this array is " +
              std::to_string(bytes));
  } else if (!l.sharded) {
    std::optional<sdk::BufferPool::Lease> file;
    uint64_t got = 0;
    found = read_whole(w.key, file, std::max<uint64_t>(bytes + bytes / 8 + 64, 4096), &got);
    if (found) a.v3->decode(l, file->data(), got, dst, bytes, w.key);
  } else {
    // An inner chunk this store holds for a shard not yet written wins.
    std::optional<std::vector<uint8_t>> pending;
    if (pending_count_.load(std::memory_order_acquire) > 0) {
      std::lock_guard<std::mutex> lock(pending_mutex_);
      if (auto it = pending_.find(w.key); it != pending_.end() && it->second->present[w.inner])
        pending = it->second->inner[w.inner];
    }
    if (pending) {
      found = !pending->empty();
      if (found) a.v3->decode(l, pending->data(), pending->size(), dst, bytes, w.key);
    } else if (std::shared_ptr<const ShardIndex> shard = shard_index(a, w.key); shard->exists && !shard->empty(w.inner)) {
      const uint64_t offset = shard->entry[2 * w.inner], size = shard->entry[2 * w.inner + 1];
      if (size > 2 * kMaxChunkBytes) corrupt(w.key + ": inner chunk " + std::to_string(w.inner) + " is over 4 GiB");
      sdk::BufferPool::Lease file = scratch_.take(size);
      storage_.read_exact(w.key, offset, file.data(), size);
      a.v3->decode(l, file.data(), size, dst, bytes, w.key + " (inner chunk " + std::to_string(w.inner) + ")");
      found = true;
    }
  }
  return found || missing_chunk(meta, dst);
}

void ZarrStore::write_chunk_v3(OpenArray& a, const uint64_t* index, const void* in, size_t size,
                               const uint64_t* chunk_shape) {
  const ArrayMeta& meta = a.meta;
  const V3Layout& l = *meta.v3;
  check_index(meta, index, a.dir);
  const uint64_t bytes = meta.chunk_bytes();
  std::optional<sdk::BufferPool::Lease> padded;
  const uint8_t* chunk = whole_chunk(meta, a.dir, chunk_shape, in, size, scratch_, padded);
  const Where w = locate(a, index);
  if (!l.sharded) {
    std::vector<uint8_t> encoded = a.v3->encode(l, chunk, bytes, w.key);
    storage_.write(w.key, encoded.data(), encoded.size());  // published whole
    return;
  }
  // An inner chunk all fill value is left empty in the index.
  std::vector<uint8_t> encoded;
  if (!all_fill(chunk, meta.chunk_elements(), meta.fill)) encoded = a.v3->encode(l, chunk, bytes, w.key);
  std::shared_ptr<PendingShard> complete;
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    std::shared_ptr<PendingShard>& p = pending_[w.key];
    if (!p) {
      p = std::make_shared<PendingShard>();
      p->layout = meta.v3;
      p->inner.resize(l.chunks_per_shard);
      p->present.resize(l.chunks_per_shard);
      p->expected = chunks_inside(meta, w.shard);
      pending_count_.fetch_add(1, std::memory_order_release);
    }
    if (!p->present[w.inner]) p->present[w.inner] = true, ++p->count;
    p->inner[w.inner] = std::move(encoded);
    if (p->count == p->expected) {
      complete = std::move(p);
      pending_.erase(w.key);
      pending_count_.fetch_sub(1, std::memory_order_release);
    }
  }
  if (!complete) return;
  publish_shard(w.key, *complete, false);  // outside the lock: other shards go on
  std::lock_guard<std::mutex> lock(a.v3->mutex);
  a.v3->indexes.erase(w.key);
}

// Writes a shard whole; with `merge`, the inner chunks it lacks come from
// the shard on disk (read once, its index checked).
void ZarrStore::publish_shard(const std::string& key, const PendingShard& shard, bool merge) {
  const V3Layout& l = *shard.layout;
  std::vector<std::vector<uint8_t>> merged;  // a copy only when merging
  std::vector<bool> present = shard.present;
  const std::vector<std::vector<uint8_t>>* chunks = &shard.inner;
  if (merge) {
    merged = shard.inner;
    chunks = &merged;
    if (std::optional<sdk::Bytes> old = storage_.read_if_exists(key)) {
      const uint64_t index_bytes = l.index_bytes();
      if (old->size() < index_bytes)
        corrupt(key + ": shard is " + std::to_string(old->size()) + " bytes, shorter than its " +
                std::to_string(index_bytes) + "-byte index (truncated)");
      const ShardIndex index = decode_shard_index(
          old->data() + (l.index_at_end ? old->size() - index_bytes : 0), l, key, old->size());
      for (size_t i = 0; i < merged.size(); ++i) {
        if (present[i] || index.empty(i)) continue;
        const uint8_t* from = old->data() + index.entry[2 * i];
        merged[i].assign(from, from + index.entry[2 * i + 1]);
        present[i] = true;
      }
    }
  }
  // Staged piece by piece (no copy of the whole shard), published whole.
  const std::vector<std::vector<uint8_t>>& inner = *chunks;
  const std::vector<uint8_t> index = shard_index_bytes(inner, present, l);
  sdk::Staged file = storage_.stage(key);
  if (!l.index_at_end) file.append(index.data(), index.size());
  for (size_t i = 0; i < inner.size(); ++i)
    if (present[i] && !inner[i].empty()) file.append(inner[i].data(), inner[i].size());
  if (l.index_at_end) file.append(index.data(), index.size());
  storage_.publish(file);
}

bool ZarrStore::chunk_exists_v3(const OpenArray& a, const uint64_t* index) const {
  check_index(a.meta, index, a.dir);
  const Where w = locate(a, index);
  if (!a.meta.v3->sharded) return storage_.kind(w.key) == STOWAGE_ENTRY_FILE;
  if (pending_count_.load(std::memory_order_acquire) > 0) {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    if (auto it = pending_.find(w.key); it != pending_.end() && it->second->present[w.inner])
      return !it->second->inner[w.inner].empty();
  }
  std::shared_ptr<const ShardIndex> shard = shard_index(a, w.key);  // the index only: nothing decoded
  return shard->exists && !shard->empty(w.inner);
}

void ZarrStore::publish_pending_shards() {
  std::map<std::string, std::shared_ptr<PendingShard>> left;
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    left.swap(pending_);
    pending_count_.store(0);
  }
  for (auto& [key, shard] : left) publish_shard(key, *shard, true);
}

}  // namespace zarr
