// The chunks of a Zarr v3 array. Unsharded, a chunk is a file as in v2,
// keyed "c/0/1" (default encoding) or "0.1" (v2 encoding), through the
// codec chain. Sharded, the host's chunks are the INNER chunks: reading one
// reads the shard's index (cached per node handle) and then just that
// inner chunk's bytes, two ranged reads; writing one appends it to the
// shard's staged file (PendingShard, shard.hpp) until every inner chunk of
// its shard inside the array is there, then the index is added and the
// shard published whole, so a region write covering whole shards never
// reads one back. A shard a write leaves incomplete is merged with the file
// on disk under the shard's lock before the write returns (flush).
#include "chunk_util.hpp"
#include "filter_chain.hpp"
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
  if (l.default_keys)
    w.key += 'c';
  else if (w.shard.empty())
    w.key += '0';
  for (size_t d = 0; d < w.shard.size(); ++d) {
    if (d || l.default_keys) w.key += l.separator;
    w.key += std::to_string(w.shard[d]);
  }
  return w;
}

bool all_fill(const uint8_t* chunk, uint64_t elements, const FillValue& fill) {
  const size_t n = fill.bytes.size();
  for (uint64_t i = 0; i < elements; ++i)
    if (std::memcmp(chunk + i * n, fill.bytes.data(), n) != 0) return false;
  return true;
}

// What the bytes codecs of a chunk take and give back: the chunk, or what
// its array -> array codecs encode it into.
uint64_t stored_bytes(const ArrayMeta& meta) {
  return meta.filter_chain ? meta.filter_chain->encoded_bytes() : meta.chunk_bytes();
}

// A whole chunk as stored: through its array -> array codecs, if any, and
// the bytes codecs.
std::vector<uint8_t> encode_whole(const OpenArray& a, const uint8_t* chunk,
                                  sdk::BufferPool& scratch, const std::string& key) {
  const ArrayMeta& meta = a.meta;
  if (const FilterChain* filters = meta.filter_chain.get()) {
    sdk::BufferPool::Lease filtered = encode_filters(*filters, chunk, scratch, key);
    return a.v3->encode(*meta.v3, filtered.data(), filters->encoded_bytes(), key);
  }
  return a.v3->encode(*meta.v3, chunk, meta.chunk_bytes(), key);
}

// A chunk's `size` stored bytes back into the whole chunk `out`: the bytes
// codecs, then the array -> array codecs last first (through scratch).
void decode_whole(const OpenArray& a, const uint8_t* in, uint64_t size, uint8_t* out,
                  sdk::BufferPool& scratch, const std::string& key) {
  const ArrayMeta& meta = a.meta;
  const FilterChain* filters = meta.filter_chain.get();
  if (!filters) return a.v3->decode(*meta.v3, in, size, out, meta.chunk_bytes(), key);
  const uint64_t stored = filters->encoded_bytes();
  sdk::BufferPool::Lease chunk = scratch.take(stored);
  a.v3->decode(*meta.v3, in, size, chunk.data(), stored, key);
  decode_filters(*filters, chunk.data(), out, scratch, key);
}

}  // namespace

// A whole file into pooled scratch: the first read asks for what a chunk
// can take, more is read only for an incompressible one.
bool ZarrStore::read_whole(const std::string& key, std::optional<sdk::BufferPool::Lease>& lease,
                           uint64_t want, uint64_t* got) {
  sdk::BufferPool::Lease& file = lease.emplace(scratch_.take(want));
  if (!storage_.read_into_if_exists(key, 0, file.data(), want, got)) return false;
  if (*got == want) {
    const uint64_t size = storage_.size(key);
    if (size > 2 * kMaxChunkBytes)
      corrupt(key + ": chunk file is " + std::to_string(size) + " bytes, over 4 GiB");
    file->resize(size);
    storage_.read_exact(key, *got, file.data() + *got, size - *got);
    *got = size;
  }
  return true;
}

// The index of the shard `key` as stored now (exists false: no shard),
// read with one ranged read after a stat of its size (`size`, when the
// caller stat'ed already): a shard too short for its index is refused
// before a buffer of the index's size is made.
ShardIndex ZarrStore::stored_index(const V3Layout& l, const std::string& key,
                                   std::optional<std::pair<bool, uint64_t>> stat) const {
  if (!stat) {
    uint64_t size = 0;
    const bool is_file = storage_.kind(key, &size) == STOWAGE_ENTRY_FILE;
    stat.emplace(is_file, size);
  }
  const auto [is_file, size] = *stat;
  if (!is_file) return ShardIndex();
  const uint64_t index_bytes = l.index_bytes();
  if (size < index_bytes)
    corrupt(key + ": shard is " + std::to_string(size) + " bytes, shorter than its " +
            std::to_string(index_bytes) + "-byte index (truncated)");
  std::vector<uint8_t> buf(index_bytes);
  storage_.read_exact(key, l.index_at_end ? size - index_bytes : 0, buf.data(), index_bytes);
  return decode_shard_index(buf.data(), l, key, size);
}

std::shared_ptr<const ShardIndex> ZarrStore::shard_index(const OpenArray& a,
                                                         const std::string& key) const {
  V3State& state = *a.v3;
  // Where stowage writes (local files, memory), a cached index is kept
  // only while the shard is as large as when it was read: another writer
  // publishes a shard whole, and rarely of the same size. A stat costs
  // about a microsecond there; over HTTP it would be a request per chunk.
  const bool others_write = storage_.can(STOWAGE_CAP_WRITE);
  if (!others_write) {
    std::lock_guard<std::mutex> lock(state.mutex);
    if (auto it = state.indexes.find(key); it != state.indexes.end()) return it->second;
  }
  uint64_t size = 0;
  const bool is_file =
      stored(a, key, &size);  // a directory there, or a file on the path, is an error
  if (others_write) {
    std::lock_guard<std::mutex> lock(state.mutex);
    if (auto it = state.indexes.find(key); it != state.indexes.end() &&
                                           it->second->exists == is_file &&
                                           it->second->file_size == (is_file ? size : 0))
      return it->second;
  }
  auto index =
      std::make_shared<ShardIndex>(stored_index(*a.meta.v3, key, std::make_pair(is_file, size)));
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.indexes.insert_or_assign(key, std::move(index)).first->second;
}

bool ZarrStore::read_chunk_v3(OpenArray& a, const uint64_t* index, void* out, size_t capacity,
                              uint64_t* chunk_shape) {
  const ArrayMeta& meta = a.meta;
  const V3Layout& l = *meta.v3;
  check_index(meta, index, a.dir);
  const uint64_t bytes = meta.chunk_bytes();
  if (bytes > capacity)
    invalid(a.dir + ": a chunk of " + std::to_string(bytes) + " bytes does not fit the " +
            std::to_string(capacity) + "-byte buffer");
  std::copy(meta.chunks.begin(), meta.chunks.end(), chunk_shape);
  const Where w = locate(a, index);
  auto* dst = static_cast<uint8_t*>(out);
  // The bytes the file holds are the chunk's own: no codec, no filter.
  const bool raw = l.codecs.empty() && !meta.filter_chain;
  const uint64_t stored = stored_bytes(meta);
  bool found = false;
  if (!l.sharded && raw) {  // the file is the chunk: read straight into the caller's buffer
    uint64_t got = 0, size = 0;
    found = storage_.read_into_if_exists(w.key, 0, dst, bytes, &got, &size);
    if (found && size != bytes)
      corrupt(w.key + ": chunk file is " + std::to_string(size) +
              " bytes; an uncompressed chunk of this array is " + std::to_string(bytes));
  } else if (!l.sharded) {
    std::optional<sdk::BufferPool::Lease> file;
    uint64_t got = 0;
    found = read_whole(w.key, file, std::max<uint64_t>(stored + stored / 8 + 64, 4096), &got);
    if (found) decode_whole(a, file->data(), got, dst, scratch_, w.key);
  } else {
    // An inner chunk this store holds for a shard not yet written wins.
    if (std::optional<std::vector<uint8_t>> pending = pending_inner(w.key, w.inner)) {
      found = !pending->empty();
      if (found) decode_whole(a, pending->data(), pending->size(), dst, scratch_, w.key);
    } else if (std::shared_ptr<const ShardIndex> shard = shard_index(a, w.key);
               shard->exists && !shard->empty(w.inner)) {
      const uint64_t offset = shard->entry[2 * w.inner], size = shard->entry[2 * w.inner + 1];
      if (size > 2 * kMaxChunkBytes)
        corrupt(w.key + ": inner chunk " + std::to_string(w.inner) + " is over 4 GiB");
      const std::string which = w.key + " (inner chunk " + std::to_string(w.inner) + ")";
      if (raw && size <= bytes) {  // uncompressed: into the caller's buffer, as unsharded (no copy)
        storage_.read_exact(w.key, offset, dst, size);
        a.v3->decode(l, dst, size, dst, bytes, which);  // checks the size
        return true;
      }
      sdk::BufferPool::Lease file = scratch_.take(size);
      storage_.read_exact(w.key, offset, file.data(), size);
      decode_whole(a, file.data(), size, dst, scratch_, which);
      found = true;
    }
  }
  if (!found && !l.sharded) absent_chunk(a, w.key);  // sharded: shard_index asked
  return found || missing_chunk(meta, dst);
}

sdk::ArrayNode::Slabs ZarrStore::read_chunk_slabs_v3(OpenArray& a, const uint64_t* index,
                                                     uint64_t begin, uint64_t end,
                                                     const sdk::ArrayNode::PieceFn& piece) {
  using Slabs = sdk::ArrayNode::Slabs;
  const ArrayMeta& meta = a.meta;
  const V3Layout& l = *meta.v3;
  if (!l.codecs.empty() || meta.filter_chain) return Slabs::unsupported;  // decoded whole
  check_index(meta, index, a.dir);
  const Where w = locate(a, index);
  if (!l.sharded) {
    const bool read =
        read_raw_slabs(storage_, w.key, 0, meta.chunk_bytes(), meta, begin, end, piece, scratch_);
    return read ? Slabs::read : Slabs::unsupported;  // no chunk file: read_chunk says why
  }
  if (pending_count_.load(std::memory_order_acquire) != 0)
    return Slabs::unsupported;  // inner chunks this store holds unpublished: read_chunk finds them
  std::shared_ptr<const ShardIndex> shard = shard_index(a, w.key);
  if (!shard->exists || shard->empty(w.inner)) return Slabs::missing;
  const uint64_t offset = shard->entry[2 * w.inner], size = shard->entry[2 * w.inner + 1];
  if (size != meta.chunk_bytes())
    return Slabs::unsupported;  // read_chunk names what is wrong with it
  read_raw_slabs(storage_, w.key, offset, std::nullopt, meta, begin, end, piece, scratch_);
  return Slabs::read;
}

void ZarrStore::write_chunk_v3(OpenArray& a, const uint64_t* index, const void* in, size_t size,
                               const uint64_t* chunk_shape) {
  const ArrayMeta& meta = a.meta;
  const V3Layout& l = *meta.v3;
  check_index(meta, index, a.dir);
  std::optional<sdk::BufferPool::Lease> padded;
  const uint8_t* chunk = whole_chunk(meta, a.dir, chunk_shape, in, size, scratch_, padded);
  const Where w = locate(a, index);
  if (!l.sharded && l.codecs.empty() && !meta.filter_chain) {
    storage_.write(w.key, chunk, meta.chunk_bytes());  // the chunk is the file: no copy
    return;
  }
  if (!l.sharded) {
    std::vector<uint8_t> encoded = encode_whole(a, chunk, scratch_, w.key);
    storage_.write(w.key, encoded.data(), encoded.size());  // published whole
    return;
  }
  // An inner chunk all fill value is left empty in the index.
  const bool fill_only = all_fill(chunk, meta.chunk_elements(), meta.fill);
  std::vector<uint8_t> encoded;
  bool encoded_yet = false;
  for (;;) {
    std::shared_ptr<PendingShard> p;
    {
      std::lock_guard<std::mutex> lock(pending_mutex_);
      std::shared_ptr<PendingShard>& slot = pending_[w.key];
      if (!slot) {
        slot = std::make_shared<PendingShard>(meta, w.shard);
        pending_count_.fetch_add(1, std::memory_order_release);
      }
      p = slot;
    }
    std::unique_lock<std::mutex> lock(p->mutex);
    if (p->done) continue;  // published since we looked it up: this chunk starts a new one
    if (!place_inner_chunk(w.key, p, meta, w.inner, fill_only ? nullptr : chunk, lock)) {
      if (!encoded_yet && !fill_only) {
        lock.unlock();  // encoding is the slow part: other writers of this shard go on
        encoded = encode_whole(a, chunk, scratch_, w.key);
        encoded_yet = true;
        continue;
      }
      add_inner_chunk(w.key, *p, w.inner, std::move(encoded));
    }
    if (p->count < p->expected) return;
    // Every chunk of the shard is this write's: nothing to merge, no lock to take.
    finish_shard(w.key, *p, false, lock);  // other shards go on meanwhile
    lock.unlock();
    forget_index(a, w.key);
    return;
  }
}

// The staged file of a shard, opened on its first chunk while the store has
// fewer than kMaxOpenShardFiles open (a region thousands of shards wide
// would otherwise hold as many file descriptors); past that its chunks wait
// in memory and the file is written when the shard is finished.
bool ZarrStore::open_shard_file(const std::string& key, PendingShard& p, bool must) {
  if (p.file) return true;
  if (!must && open_shard_files_.fetch_add(1) >= kMaxOpenShardFiles) {
    open_shard_files_.fetch_sub(1);
    return false;
  }
  if (must) open_shard_files_.fetch_add(1);
  p.file.emplace(storage_.stage(key));
  // An index at the start gets its room now; finish_shard writes it last.
  if (!p.layout->index_at_end) p.file->resize(p.layout->index_bytes());
  return true;
}

// Uncompressed inner chunks (no codec after "bytes", no filter) all have one size, so
// each has its place in the shard from the start: the file is sized on the
// shard's first chunk, and every chunk is written straight from the host's
// buffer into its place, outside the shard's lock, from any thread, in any
// order (`lock` is released for the write and held again on return). False
// for other shards (the chunk is encoded and appended in order instead),
// and when the store holds too many shard files open.
bool ZarrStore::place_inner_chunk(const std::string& key, const std::shared_ptr<PendingShard>& p,
                                  const ArrayMeta& meta, uint64_t i, const uint8_t* chunk,
                                  std::unique_lock<std::mutex>& lock) {
  const V3Layout& l = *p->layout;
  const uint64_t bytes = meta.chunk_bytes();
  auto place = [&](uint64_t k) { return (l.index_at_end ? 0 : l.index_bytes()) + k * bytes; };
  if (!p->decided) {  // once per shard, so the two ways never mix in one file
    p->decided = true;
    p->placed = l.codecs.empty() && !meta.filter_chain && open_shard_file(key, *p, false);
    if (p->placed) {
      p->file->resize(p->file->size() + l.chunks_per_shard * bytes);
      p->slot_bytes = bytes;
    }
  }
  if (!p->placed) return false;
  const uint64_t at = place(i);
  const bool first = p->state[i] == PendingShard::absent;
  if (chunk) {
    // finish_shard waits for writes under way (a chunk written again may
    // race its shard's last one); the lock is back however the write ends.
    struct InFlight {
      PendingShard& p;
      std::unique_lock<std::mutex>& lock;
      ~InFlight() {
        lock.lock();
        if (--p.in_flight == 0) p.idle.notify_all();
      }
    };
    ++p->in_flight;
    lock.unlock();
    InFlight back{*p, lock};
    p->file->write_at(at, chunk, bytes);  // inside the sized file: Staged's end does not move
  }
  p->entry[2 * i] = chunk ? at : kEmptyEntry;
  p->entry[2 * i + 1] = chunk ? bytes : kEmptyEntry;
  p->state[i] = PendingShard::in_file;
  if (first) ++p->count;  // counted once written: the last writer finds every write done
  return true;
}

// Appends an encoded inner chunk to the shard's file; its index entry.
static void append_inner(PendingShard& p, uint64_t i, const std::vector<uint8_t>& encoded) {
  if (encoded.empty()) {  // all fill value
    p.entry[2 * i] = p.entry[2 * i + 1] = kEmptyEntry;
    return;
  }
  p.entry[2 * i] = p.file->size();
  p.entry[2 * i + 1] = encoded.size();
  p.file->append(encoded.data(), encoded.size());
}

// Inner chunk `i` of a shard (p.mutex held): into the file if its turn has
// come, with every waiting one whose turn follows; else it waits.
void ZarrStore::add_inner_chunk(const std::string& key, PendingShard& p, uint64_t i,
                                std::vector<uint8_t> encoded) {
  if (p.state[i] == PendingShard::in_file) {
    // Written again: the new bytes go at the end; the old ones stay as
    // unused space, which the format allows (the index says where chunks are).
    return append_inner(p, i, encoded);
  }
  if (p.state[i] == PendingShard::absent) ++p.count;
  p.early[i] = std::move(encoded);
  p.state[i] = PendingShard::waiting;
  if (!open_shard_file(key, p, false)) return;
  for (; p.next < p.state.size() && p.state[p.next] != PendingShard::absent; ++p.next) {
    if (p.state[p.next] != PendingShard::waiting) continue;  // outside the array
    append_inner(p, p.next, p.early[p.next]);
    std::vector<uint8_t>().swap(p.early[p.next]);
    p.state[p.next] = PendingShard::in_file;
  }
}

// Publishes a shard (p.mutex held): the chunks still waiting, with `merge`
// those it lacks from the shard on disk (read once, its index checked), and
// the index.
void ZarrStore::finish_shard(const std::string& key, PendingShard& p, bool merge,
                             std::unique_lock<std::mutex>& lock) {
  const V3Layout& l = *p.layout;
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    if (auto it = pending_.find(key); it != pending_.end() && it->second.get() == &p) {
      pending_.erase(it);
      pending_count_.fetch_sub(1, std::memory_order_release);
    }
  }
  p.done = true;
  p.idle.wait(lock, [&] { return p.in_flight == 0; });
  open_shard_file(key, p, true);
  struct FileSlot {  // given back however this ends
    std::atomic<int>& open;
    ~FileSlot() { open.fetch_sub(1); }
  } slot{open_shard_files_};
  const ShardIndex old = merge ? stored_index(l, key) : ShardIndex();
  std::vector<uint8_t> bytes;
  for (uint64_t i = 0; i < p.state.size(); ++i) {
    if (p.state[i] == PendingShard::waiting) {
      append_inner(p, i, p.early[i]);
    } else if (p.state[i] == PendingShard::absent && old.exists && !old.empty(i)) {
      // Only the chunks this shard lacks are read from the stored one.
      bytes.resize(old.entry[2 * i + 1]);
      storage_.read_exact(key, old.entry[2 * i], bytes.data(), bytes.size());
      if (p.placed && bytes.size() == p.slot_bytes) {  // into its reserved place
        p.entry[2 * i] = (l.index_at_end ? 0 : l.index_bytes()) + i * p.slot_bytes;
        p.entry[2 * i + 1] = p.slot_bytes;
        p.file->write_at(p.entry[2 * i], bytes.data(), bytes.size());
      } else {
        append_inner(p, i, bytes);
      }
    }
  }
  const std::vector<uint8_t> index = shard_index_bytes(p.entry, l);
  if (l.index_at_end)
    p.file->append(index.data(), index.size());
  else
    p.file->write_at(0, index.data(), index.size());
  storage_.publish(*p.file);
  p.file.reset();
}

// The shard `key` this store is writing and has not published, or null.
// (Lock its mutex outside pending_mutex_: finish_shard takes them the other way.)
std::shared_ptr<PendingShard> ZarrStore::pending_shard(const std::string& key) const {
  if (pending_count_.load(std::memory_order_acquire) == 0) return nullptr;
  std::lock_guard<std::mutex> lock(pending_mutex_);
  auto it = pending_.find(key);
  return it == pending_.end() ? nullptr : it->second;
}

// The encoded bytes of an inner chunk written through this store whose
// shard is not published yet (empty: all fill value), or none.
std::optional<std::vector<uint8_t>> ZarrStore::pending_inner(const std::string& key,
                                                             uint64_t inner) const {
  std::shared_ptr<PendingShard> p = pending_shard(key);
  if (!p) return std::nullopt;
  std::lock_guard<std::mutex> lock(p->mutex);
  if (!p->holds(inner)) return std::nullopt;  // (once published, the file has it)
  if (p->state[inner] == PendingShard::waiting) return p->early[inner];
  if (p->holds_empty(inner)) return std::vector<uint8_t>();
  std::vector<uint8_t> bytes(p->entry[2 * inner + 1]);
  p->file->read_at(p->entry[2 * inner], bytes.data(), bytes.size());
  return bytes;
}

bool ZarrStore::chunk_exists_v3(const OpenArray& a, const uint64_t* index) const {
  check_index(a.meta, index, a.dir);
  const Where w = locate(a, index);
  if (!a.meta.v3->sharded) return stored(a, w.key);
  if (std::shared_ptr<PendingShard> p = pending_shard(w.key)) {  // its state only: no bytes read
    std::lock_guard<std::mutex> lock(p->mutex);
    if (p->holds(w.inner)) return !p->holds_empty(w.inner);
  }
  std::shared_ptr<const ShardIndex> shard =
      shard_index(a, w.key);  // the index only: nothing decoded
  return shard->exists && !shard->empty(w.inner);
}

std::string chunk_file_v3(const OpenArray& a, const uint64_t* index) {
  return locate(a, index).key;
}

// A shard's cached index is stale once anyone published the shard.
void ZarrStore::forget_index(const OpenArray& a, const std::string& key) const {
  std::lock_guard<std::mutex> lock(a.v3->mutex);
  a.v3->indexes.erase(key);
}

// The lock of the chunk's file or, sharded, of its shard: the shard is then
// read fresh (its cached index dropped) and published by unlock_chunk.
std::unique_ptr<sdk::ChunkLock> ZarrStore::lock_chunk_v3(OpenArray& a, const uint64_t* index) {
  check_index(a.meta, index, a.dir);
  const Where w = locate(a, index);
  std::unique_ptr<sdk::ChunkLock> held = sdk::lock_chunk_key(storage_, w.key);
  if (a.meta.v3->sharded) forget_index(a, w.key);
  return held;
}

// Publishes what this store holds of shard `key`, merged with the shard as
// stored, while the caller holds the shard's lock (taken before the
// shard's mutex: write_chunk holds the mutex and never waits for the lock).
void ZarrStore::publish_shard_held(const OpenArray& a, const std::string& key) {
  if (std::shared_ptr<PendingShard> p = pending_shard(key)) {
    std::unique_lock<std::mutex> lock(p->mutex);
    if (!p->done) finish_shard(key, *p, true, lock);
  }
  forget_index(a, key);
}

// Every shard of `a` written in part, each merged and published under its lock.
void ZarrStore::flush_shards(const OpenArray& a) {
  if (!a.meta.v3->sharded || pending_count_.load(std::memory_order_acquire) == 0) return;
  const std::string prefix = a.dir + '/';
  std::vector<std::string> keys;
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    for (const auto& [key, shard] : pending_)
      if (key.compare(0, prefix.size(), prefix) == 0) keys.push_back(key);
  }
  for (const std::string& key : keys) {
    std::unique_ptr<sdk::KeyChunkLock> held = sdk::lock_chunk_key(storage_, key);
    publish_shard_held(a, key);
  }
}

// At close: the shards still held in part (a writer that never flushed).
void ZarrStore::publish_pending_shards() {
  std::map<std::string, std::shared_ptr<PendingShard>> left;
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    left.swap(pending_);
    pending_count_.store(0);
  }
  for (auto& [key, shard] : left) {
    std::unique_ptr<sdk::KeyChunkLock> held = sdk::lock_chunk_key(storage_, key);
    std::unique_lock<std::mutex> lock(shard->mutex);
    if (!shard->done) finish_shard(key, *shard, true, lock);
  }
}

}  // namespace zarr
