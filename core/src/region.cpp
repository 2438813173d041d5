// Region I/O over chunk primitives: one job past ~500 lines, its parts share the chunk helpers.
//
// Written once for every format (docs/design.md, decision 5): find the chunks
// a region touches, read or write them in parallel, clip edge chunks, and
// convert byte order and element order while copying between the chunk and
// the caller's buffer. Array::read, Array::write (with its partial-chunk
// read-modify-write under chunk locks) and Array::copy_chunks_to all use the
// same file-local helpers (chunk ranges and runs, overlaps, the per-thread
// scratch buffer, read_one_chunk, write_one_chunk, flush_node); kept in one
// file they stay internal and inline into the per-chunk loops.
#include "plugin_call.hpp"
#include "storage_choice.hpp"
#include "store_state.hpp"
#include "strided.hpp"
#include "thread_pool.hpp"

#include <stowage/plugin_util.hpp>  // PageAlignedAllocator

#include <algorithm>
#include <cstddef>
#include <map>

namespace stowage {

namespace {

using detail::copy_strided;

constexpr bool kHostBigEndian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;

// Region reads of at least this many bytes write the caller's buffer with
// streaming stores: it would not stay in the caches anyway, and skipping
// the read-for-ownership of every line pays (docs/performance.md). Smaller
// reads keep ordinary stores so the data is hot when the caller uses it.
constexpr uint64_t kStreamingReadBytes = 8u << 20;

// Element strides of a dense block of `shape` in C or Fortran order.
std::vector<int64_t> strides_of(const std::vector<uint64_t>& shape, bool fortran) {
  size_t n = shape.size();
  std::vector<int64_t> s(n);
  int64_t acc = 1;
  if (fortran) {
    for (size_t i = 0; i < n; ++i) {
      s[i] = acc;
      acc *= static_cast<int64_t>(shape[i]);
    }
  } else {
    for (size_t i = n; i-- > 0;) {
      s[i] = acc;
      acc *= static_cast<int64_t>(shape[i]);
    }
  }
  return s;
}

using detail::product;

// The chunks a region touches, as a flat list of chunk indices.
struct ChunkRange {
  std::vector<uint64_t> first, count;
  size_t size() const { return static_cast<size_t>(product(count)); }
  std::vector<uint64_t> at(size_t flat) const {
    std::vector<uint64_t> idx(first.size());
    for (size_t d = first.size(); d-- > 0;) {
      idx[d] = first[d] + flat % count[d];
      flat /= count[d];
    }
    return idx;
  }
};

ChunkRange chunks_touched(const NodeInfo& info, const std::vector<uint64_t>& offset,
                          const std::vector<uint64_t>& shape) {
  ChunkRange r;
  for (size_t d = 0; d < shape.size(); ++d) {
    uint64_t c = info.chunks[d];
    r.first.push_back(offset[d] / c);
    r.count.push_back(shape[d] == 0 ? 0 : (offset[d] + shape[d] - 1) / c - offset[d] / c + 1);
  }
  return r;
}

void check_region(const NodeInfo& info, const std::string& where,
                  const std::vector<uint64_t>& offset, const std::vector<uint64_t>& shape) {
  if (offset.size() != info.shape.size() || shape.size() != info.shape.size())
    throw Error(ErrorCode::invalid_argument,
                where + ": region has rank " + std::to_string(shape.size()) +
                    ", the array has rank " + std::to_string(info.shape.size()));
  for (size_t d = 0; d < shape.size(); ++d)
    if (offset[d] > info.shape[d] || shape[d] > info.shape[d] - offset[d])
      throw Error(ErrorCode::invalid_argument, where + ": region [" + std::to_string(offset[d]) +
                                                   ", +" + std::to_string(shape[d]) +
                                                   ") is outside dimension " + std::to_string(d) +
                                                   " of size " + std::to_string(info.shape[d]));
}

// The buffer chunks are read into and copied out of, one per thread.
// Page-aligned (sdk::PageAlignedAllocator, which says why: 4K aliasing), so
// a chunk file's bytes land at the offset in a page they have in the page
// cache (bench/zarr/RESULTS.md, 2026-11-25). Not a vector: growing one would copy and
// zero-fill bytes about to be overwritten.
char* scratch(size_t bytes) {
  using Allocator = sdk::PageAlignedAllocator<char>;
  struct Block {
    char* data = nullptr;
    size_t size = 0;
    ~Block() { Allocator().deallocate(data, size); }
  };
  thread_local Block buffer;
  if (buffer.size < bytes) {
    Allocator().deallocate(buffer.data, buffer.size);  // deleting null does nothing
    buffer.data = nullptr;
    buffer.size = 0;
    buffer.data = Allocator().allocate(bytes);
    buffer.size = bytes;
  }
  return buffer.data;
}

uint64_t nominal_chunk_bytes(const NodeInfo& info) {
  uint64_t n = product(info.chunks) * dtype_size(info.dtype);
  if (n > (uint64_t{1} << 40))
    throw Error(ErrorCode::corrupt,
                "chunk of " + std::to_string(n) + " bytes is beyond any sane size");
  return n;
}

// The part of chunk `idx` (whose stored extent is `extent`) that lies in
// the region: per dimension, [lo, hi) in array coordinates.
struct Overlap {
  std::vector<uint64_t> lo, size;
  bool empty = false;
};
Overlap overlap(const NodeInfo& info, const std::vector<uint64_t>& idx,
                const std::vector<uint64_t>& extent, const std::vector<uint64_t>& offset,
                const std::vector<uint64_t>& shape) {
  Overlap o;
  for (size_t d = 0; d < idx.size(); ++d) {
    uint64_t c0 = idx[d] * info.chunks[d];
    uint64_t c1 = std::min(c0 + extent[d], info.shape[d]);
    uint64_t lo = std::max(c0, offset[d]);
    uint64_t hi = std::min(c1, offset[d] + shape[d]);
    if (hi <= lo) {
      o.empty = true;
      hi = lo;
    }
    o.lo.push_back(lo);
    o.size.push_back(hi - lo);
  }
  return o;
}

// Byte offset of array coordinate `lo` inside a block starting at `origin`
// with element strides `strides`.
int64_t element_offset(const std::vector<uint64_t>& lo, const std::vector<uint64_t>& origin,
                       const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (size_t d = 0; d < lo.size(); ++d)
    off += static_cast<int64_t>(lo[d] - origin[d]) * strides[d];
  return off;
}

std::vector<uint64_t> chunk_origin(const NodeInfo& info, const std::vector<uint64_t>& idx) {
  std::vector<uint64_t> o(idx.size());
  for (size_t d = 0; d < idx.size(); ++d) o[d] = idx[d] * info.chunks[d];
  return o;
}

// The extent of a chunk clipped to the array (what a writer stores).
std::vector<uint64_t> clipped_extent(const NodeInfo& info, const std::vector<uint64_t>& idx) {
  std::vector<uint64_t> e(idx.size());
  for (size_t d = 0; d < idx.size(); ++d)
    e[d] = std::min(info.chunks[d], info.shape[d] - idx[d] * info.chunks[d]);
  return e;
}

std::string chunk_name(const std::vector<uint64_t>& idx) {
  std::string s = "chunk (";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? "," : "") + std::to_string(idx[d]);
  return s + ")";
}

// Whether the node's table has the functions added after the first version.
bool has_array_field(const Store::Node& n, size_t end_of_field) {
  return n.array().struct_size >= end_of_field;
}

}  // namespace

// Reads one chunk into `buf` (storage order); returns false if MISSING.
static bool read_one_chunk(const Store::Node& n, const NodeInfo& info,
                           const std::vector<uint64_t>& idx, char* buf, size_t cap,
                           std::vector<uint64_t>& stored_shape) {
  const Store::State& st = *n.store;
  stored_shape.assign(idx.size(), 0);
  detail::CallError err;
  int rc = n.array().read_chunk(n.node.handle, idx.data(), buf, cap, stored_shape.data(), &err);
  if (rc == STOWAGE_MISSING) return false;
  st.check(rc, err);
  uint64_t elements = 1;
  for (size_t d = 0; d < idx.size(); ++d) elements *= stored_shape[d];
  if (elements * dtype_size(info.dtype) > cap)
    throw Error(
        ErrorCode::corrupt,
        st.path + ": " + n.path + " " + chunk_name(idx) + " claims more elements than fit a chunk",
        st.path, st.plugin_name());
  return true;
}

namespace {
// What a region read or write works out once, before touching chunks.
struct RegionPlan {
  size_t esize;                       // bytes per element
  bool swap;                          // stored byte order differs from the host's
  unsigned parts;                     // numbers per element, each swapped on its own
  std::vector<int64_t> user_strides;  // of the caller's C-order buffer
  size_t cap;                         // bytes of one nominal chunk
  ChunkRange range;                   // the chunks the region touches
};
RegionPlan plan_region(const NodeInfo& info, const std::string& where,
                       const std::vector<uint64_t>& offset, const std::vector<uint64_t>& shape) {
  check_region(info, where, offset, shape);
  return {dtype_size(info.dtype),
          info.big_endian != kHostBigEndian,
          detail::swap_parts(info.dtype),
          strides_of(shape, false),
          static_cast<size_t>(nominal_chunk_bytes(info)),
          chunks_touched(info, offset, shape)};
}
}  // namespace

namespace {
// Bytes of decoded chunks a read task holds at once: a run of neighbouring
// chunks along the fastest dimension, whose rows sit side by side in the
// caller's buffer (see copy_side_by_side).
constexpr uint64_t kRunBytes = 8u << 20;

// The chunks of a region, cut into tasks: runs of up to `length` chunks
// along the fastest dimension, so one task writes whole stretches of the
// caller's rows. Runs are shortened when that keeps both threads busy.
struct ChunkRuns {
  const ChunkRange* range;
  uint64_t row = 1;      // chunks along the fastest dimension
  uint64_t length = 1;   // chunks per run
  uint64_t per_row = 1;  // runs per row of chunks

  ChunkRuns(const ChunkRange& r, size_t chunk_bytes, unsigned threads) : range(&r) {
    if (r.count.empty()) return;  // a 0-d array: one chunk
    row = r.count.back();
    uint64_t fit = std::max<uint64_t>(1, kRunBytes / std::max<size_t>(chunk_bytes, 1));
    uint64_t balanced = std::max<uint64_t>(1, r.size() / (2 * std::max(1u, threads)));
    length = std::max<uint64_t>(1, std::min({row, fit, balanced}));
    per_row = (row + length - 1) / length;
  }
  size_t size() const { return row == 0 ? 0 : range->size() / row * per_row; }
  // The first chunk of task `t` (as a flat index into the range) and its length.
  std::pair<size_t, uint64_t> task(size_t t) const {
    uint64_t start = t % per_row * length;
    return {t / per_row * row + start, std::min(length, row - start)};
  }
};
}  // namespace

namespace {
// A chunk read slab by slab (stowage_array_vtable.read_chunk_slabs) straight
// into the caller's buffer: each piece is copied out while it is in the cache,
// where read_chunk's whole chunk would pass through memory twice.
class SlabReader {
 public:
  enum class Result { read, missing, unsupported };

  static bool supported(const Store::Node& n, const NodeInfo& info) {
    return !info.fortran_order && !info.chunks.empty() &&
           has_array_field(n, offsetof(stowage_array_vtable, read_chunk_slabs) + sizeof(void*)) &&
           n.array().read_chunk_slabs;
  }

  // `out`: the caller's buffer holding the region (offset, shape) in C order.
  SlabReader(const NodeInfo& info, const std::vector<uint64_t>& offset,
             const std::vector<uint64_t>& shape, const std::vector<int64_t>& out_strides, char* out,
             detail::CopyMode mode)
      : info_(info),
        offset_(offset),
        shape_(shape),
        out_(out),
        mode_(mode),
        out_strides_(out_strides),
        esize_(dtype_size(info.dtype)),
        cap_(nominal_chunk_bytes(info)) {}

  // Reads chunk `idx`'s part of the region; `stored` receives its stored shape.
  Result read(const Store::Node& n, const std::vector<uint64_t>& idx,
              std::vector<uint64_t>& stored) {
    const uint64_t origin = idx[0] * info_.chunks[0];
    const uint64_t begin = std::max(offset_[0], origin) - origin;
    const uint64_t end = std::min(offset_[0] + shape_[0], origin + info_.chunks[0]) - origin;
    Chunk c{idx, chunk_origin(info_, idx), stored, begin, {}};
    stored.assign(idx.size(), 0);
    chunk_ = &c;
    stowage_sink sink{this, [](void* self, const void* data, size_t size) {
                        return static_cast<SlabReader*>(self)->piece(data, size) ? 0 : 1;
                      }};
    detail::CallError err;
    int rc = n.array().read_chunk_slabs(n.node.handle, idx.data(), begin, end, &sink, stored.data(),
                                        &err);
    chunk_ = nullptr;
    if (!c.problem.empty()) bad(n, idx, c.problem);
    if (rc == STOWAGE_MISSING) return Result::missing;
    if (rc == STOWAGE_UNSUPPORTED && c.next == begin) return Result::unsupported;  // nothing copied
    n.store->check(rc, err);
    if (c.next != std::max(begin, std::min(end, stored[0])))
      bad(n, idx,
          "handed over slabs up to " + std::to_string(c.next) + " of [" + std::to_string(begin) +
              ", " + std::to_string(std::min(end, stored[0])) + ")");
    return Result::read;
  }

 private:
  struct Chunk {
    const std::vector<uint64_t>& idx;
    std::vector<uint64_t> origin;
    const std::vector<uint64_t>& stored;
    uint64_t next;  // the slab the next piece starts at
    std::string problem;
  };

  [[noreturn]] void bad(const Store::Node& n, const std::vector<uint64_t>& idx,
                        const std::string& what) const {
    const Store::State& st = *n.store;
    throw Error(ErrorCode::corrupt, st.path + ": " + n.path + " " + chunk_name(idx) + " " + what,
                st.path, st.plugin_name());
  }

  // A piece of slabs arrives: its part of the region is copied out. Returns
  // false (the plugin stops) on a piece that breaks the contract; no
  // exception crosses back into the plugin.
  bool piece(const void* data, size_t size) {
    Chunk& c = *chunk_;
    uint64_t slab = esize_;
    for (size_t d = 1; d < c.stored.size(); ++d) slab *= c.stored[d];
    if (product(c.stored) * esize_ > cap_)
      c.problem = "claims more elements than fit a chunk";
    else if (slab == 0 || size % slab != 0)
      c.problem = "handed over a piece of part of a slab";
    else if (c.next + size / slab > c.stored[0])
      c.problem = "handed over more slabs than it holds";
    if (!c.problem.empty()) return false;
    const uint64_t first = c.next, count = size / slab;
    c.next += count;
    Overlap have = overlap(info_, c.idx, c.stored, offset_, shape_);
    // The region's part of these slabs (array coordinates).
    const uint64_t lo = std::max(have.lo[0], c.origin[0] + first);
    const uint64_t hi = std::min(have.lo[0] + have.size[0], c.origin[0] + first + count);
    if (have.empty || hi <= lo) return true;
    have.lo[0] = lo;
    have.size[0] = hi - lo;
    std::vector<uint64_t> piece_origin = c.origin;
    piece_origin[0] += first;
    const std::vector<int64_t> strides = strides_of(c.stored, false);
    const char* src =
        static_cast<const char*>(data) + element_offset(have.lo, piece_origin, strides) * esize_;
    char* dst = out_ + element_offset(have.lo, offset_, out_strides_) * esize_;
    copy_strided(src, strides.data(), dst, out_strides_.data(), have.size.data(), have.size.size(),
                 esize_, mode_);
    return true;
  }

  const NodeInfo& info_;
  const std::vector<uint64_t>& offset_;
  const std::vector<uint64_t>& shape_;
  char* out_;
  detail::CopyMode mode_;
  const std::vector<int64_t>& out_strides_;
  size_t esize_;
  uint64_t cap_;
  Chunk* chunk_ = nullptr;
};
}  // namespace

void Array::read(const std::vector<uint64_t>& offset, const std::vector<uint64_t>& shape,
                 void* out) const {
  // (Named copies, not a structured binding: lambdas cannot capture those in C++17.)
  const RegionPlan plan = plan_region(info_, store_->path + "::" + node_, offset, shape);
  const size_t esize = plan.esize, cap = plan.cap;
  const bool swap = plan.swap;
  // A destination beyond the caches is written with streaming stores.
  const detail::CopyMode mode{swap, product(shape) * esize >= kStreamingReadBytes, plan.parts};
  const std::vector<int64_t>& out_strides = plan.user_strides;
  const ChunkRuns runs(plan.range, cap, store_->registry->threads());
  std::shared_lock<std::shared_mutex> lock(store_->mutex);
  handle_->require_open();
  const bool by_slabs = SlabReader::supported(*handle_, info_);
  detail::parallel_for(store_->registry->threads(), runs.size(), [&](size_t task) {
    auto [first, length] = runs.task(task);
    char* buf = nullptr;                 // for chunks read whole: taken at the first
    std::vector<detail::RowPart> parts;  // chunks whose rows are copied side by side
    std::vector<std::vector<int64_t>> part_strides(length);
    std::vector<uint64_t> lead_shape;
    SlabReader slabs(info_, offset, shape, out_strides, static_cast<char*>(out), mode);
    for (uint64_t k = 0; k < length; ++k) {
      std::vector<uint64_t> idx = plan.range.at(first + k);
      std::vector<uint64_t> origin = chunk_origin(info_, idx);
      Overlap nominal = overlap(info_, idx, info_.chunks, offset, shape);
      if (nominal.empty) continue;
      std::vector<uint64_t> stored;
      auto got = by_slabs ? slabs.read(*handle_, idx, stored) : SlabReader::Result::unsupported;
      // Copied already, unless part of the region needs the fill value as
      // well (a cropped chunk): then read whole below, fill first.
      if (got == SlabReader::Result::read &&
          overlap(info_, idx, stored, offset, shape).size == nominal.size)
        continue;
      if (!buf) buf = scratch(length * cap);
      char* chunk = buf + k * cap;
      bool present = got == SlabReader::Result::missing
                         ? false
                         : read_one_chunk(*handle_, info_, idx, chunk, cap, stored);
      Overlap have = present ? overlap(info_, idx, stored, offset, shape) : Overlap{{}, {}, true};
      // First the fill value over the chunk's nominal part of the region,
      // where the stored chunk is absent or smaller (a missing chunk, or a
      // cropped one that should not have been).
      if (!present || have.empty || have.size != nominal.size) {
        uint64_t n = product(nominal.size);
        std::vector<char> fill(n * esize);
        detail::fill_elements(fill.data(), n, info_.dtype, info_.fill_value, kHostBigEndian,
                              info_.fill_value_imag);
        std::vector<int64_t> fs = strides_of(nominal.size, false);
        char* dst =
            static_cast<char*>(out) + element_offset(nominal.lo, offset, out_strides) * esize;
        copy_strided(fill.data(), fs.data(), dst, out_strides.data(), nominal.size.data(),
                     nominal.size.size(), esize, {false, mode.stream});
      }
      if (!present || have.empty) continue;
      std::vector<int64_t>& chunk_strides = part_strides[k] =
          strides_of(stored, info_.fortran_order);
      const char* src = chunk + element_offset(have.lo, origin, chunk_strides) * esize;
      char* dst = static_cast<char*>(out) + element_offset(have.lo, offset, out_strides) * esize;
      bool side_by_side = !info_.fortran_order && !idx.empty() && have.size == nominal.size;
      if (!side_by_side) {
        copy_strided(src, chunk_strides.data(), dst, out_strides.data(), have.size.data(),
                     have.size.size(), esize, mode);
        continue;
      }
      // Every chunk of a run shares its extent in the leading dimensions.
      lead_shape.assign(have.size.begin(), have.size.end() - 1);
      parts.push_back({src, chunk_strides.data(), dst, out_strides.data(), have.size.back()});
    }
    detail::copy_side_by_side(parts, lead_shape.data(), info_.shape.size(), esize, mode);
  });
}

// Fills `chunk` (its clipped extent, storage order) with what is stored
// there, or the fill value where nothing is: the base a partial write merges into.
static void merge_stored_chunk(const Store::Node& n, const NodeInfo& info,
                               const std::vector<uint64_t>& idx, char* chunk) {
  const size_t esize = dtype_size(info.dtype), cap = static_cast<size_t>(nominal_chunk_bytes(info));
  std::vector<uint64_t> origin = chunk_origin(info, idx), extent = clipped_extent(info, idx),
                        stored;
  std::vector<char> old(cap);
  bool present = read_one_chunk(n, info, idx, old.data(), cap, stored);
  detail::fill_elements(chunk, product(extent), info.dtype, info.fill_value, info.big_endian,
                        info.fill_value_imag);
  if (!present) return;
  Overlap keep = overlap(info, idx, stored, origin, extent);
  if (keep.empty) return;
  std::vector<int64_t> old_strides = strides_of(stored, info.fortran_order);
  std::vector<int64_t> chunk_strides = strides_of(extent, info.fortran_order);
  copy_strided(old.data() + element_offset(keep.lo, origin, old_strides) * esize,
               old_strides.data(), chunk + element_offset(keep.lo, origin, chunk_strides) * esize,
               chunk_strides.data(), keep.size.data(), keep.size.size(), esize, {});
}

// Hands one chunk (its clipped extent, storage order) to the plugin.
static void write_one_chunk(const Store::Node& n, const NodeInfo& info,
                            const std::vector<uint64_t>& idx, const char* chunk) {
  std::vector<uint64_t> extent = clipped_extent(info, idx);
  detail::CallError err;
  n.store->check(
      n.array().write_chunk(n.node.handle, idx.data(), chunk,
                            product(extent) * dtype_size(info.dtype), extent.data(), &err),
      err);
}

// Whether a chunk of `extent` lying whole inside a C-order region of `shape`
// occupies one contiguous stretch of it: it spans the region in every
// dimension after its first.
static bool contiguous_in(const std::vector<uint64_t>& extent, const std::vector<uint64_t>& shape) {
  for (size_t d = 1; d < extent.size(); ++d)
    if (extent[d] != shape[d]) return false;
  return true;
}

namespace {

bool has_chunk_locks(const Store::Node& n) {
  return has_array_field(n, offsetof(stowage_array_vtable, unlock_chunk) + sizeof(void*)) &&
         n.array().lock_chunk && n.array().unlock_chunk;
}

// Publishes what the plugin holds pending for the node (shards written in
// part): a region write returns only once its bytes are published.
void flush_node(const Store::Node& n) {
  if (!has_array_field(n, offsetof(stowage_array_vtable, flush) + sizeof(void*)) ||
      !n.array().flush)
    return;
  detail::CallError err;
  n.store->check(n.array().flush(n.node.handle, &err), err);
}

// The plugin's lock of a chunk's storage, held from the read of a chunk
// written in part to its publish (unlock_chunk publishes, then lets go).
class HeldChunk {
 public:
  HeldChunk(const Store::Node& n, const std::vector<uint64_t>& idx) : n_(n) {
    if (!has_chunk_locks(n)) return;
    detail::CallError err;
    n.store->check(n.array().lock_chunk(n.node.handle, idx.data(), &lock_, &err), err);
    locked_ = true;
  }
  // Publishes what was written under the lock, and lets it go.
  void release() {
    if (!std::exchange(locked_, false)) return;
    detail::CallError err;
    n_.store->check(n_.array().unlock_chunk(n_.node.handle, lock_, &err), err);
  }
  ~HeldChunk() {
    if (!locked_) return;
    detail::CallError err;  // an error is on its way already
    n_.array().unlock_chunk(n_.node.handle, lock_, &err);
  }

 private:
  const Store::Node& n_;
  stowage_chunk_lock lock_ = nullptr;
  bool locked_ = false;
};

// The node's shard shape ("shards" in its description), empty when it has none.
std::vector<uint64_t> shard_shape(const NodeInfo& info) {
  const json& shards = info.raw.contains("shards") ? info.raw["shards"] : json();
  if (!shards.is_array() || shards.size() != info.chunks.size()) return {};
  return shards.get<std::vector<uint64_t>>();
}

// The chunks a region write covers in part, grouped by the storage unit one
// lock guards: the chunk, or the shard holding it when the node has
// "shards" (so a shard is read and published once per write, not once per
// chunk).
std::vector<std::vector<std::vector<uint64_t>>> group_by_unit(
    const NodeInfo& info, std::vector<std::vector<uint64_t>> chunks) {
  std::vector<uint64_t> per_unit(info.chunks.size(), 1);
  const std::vector<uint64_t> shards = shard_shape(info);
  if (!shards.empty())
    for (size_t d = 0; d < per_unit.size(); ++d)
      per_unit[d] = std::max<uint64_t>(1, shards[d] / std::max<uint64_t>(1, info.chunks[d]));
  std::map<std::vector<uint64_t>, std::vector<std::vector<uint64_t>>> units;
  for (std::vector<uint64_t>& idx : chunks) {
    std::vector<uint64_t> unit(idx.size());
    for (size_t d = 0; d < idx.size(); ++d) unit[d] = idx[d] / per_unit[d];
    units[unit].push_back(std::move(idx));
  }
  std::vector<std::vector<std::vector<uint64_t>>> out;
  for (auto& [unit, members] : units) out.push_back(std::move(members));
  return out;
}

// Writers in several processes each merging their part of one chunk (or
// shard) on storage that guards no read-modify-write would each put back
// their own merge, and one part would be lost: refused before a byte is
// written, naming the shape to align to.
void refuse_unguarded_part(const Store::State& st, const NodeInfo& info, const std::string& where,
                           const std::vector<uint64_t>& offset,
                           const std::vector<uint64_t>& shape) {
  if (!st.shared_writers || st.storage_guards_updates) return;
  const std::vector<uint64_t> shards = shard_shape(info);
  const bool sharded = !shards.empty();
  const std::vector<uint64_t>& unit = sharded ? shards : info.chunks;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] == 0) return;
  for (size_t d = 0; d < unit.size() && d < offset.size(); ++d) {
    const uint64_t begin = offset[d], end = offset[d] + shape[d];
    if (unit[d] == 0 || (begin % unit[d] == 0 && (end % unit[d] == 0 || end == info.shape[d])))
      continue;
    const std::string word = sharded ? "shard" : "chunk";
    throw Error(ErrorCode::invalid_argument,
                where + ": this write covers a " + word + " in part (dimension " +
                    std::to_string(d) + ": " + std::to_string(begin) + ".." + std::to_string(end) +
                    ", " + word + "s of " + json(unit).dump() + "); the " +
                    storage_scheme(st.path) +
                    " storage can neither lock nor put conditionally, so writers in several "
                    "processes would undo each other's parts. Write whole " +
                    word + "s (with dask: rechunk to multiples of " + json(unit).dump() + ")",
                where);
  }
}

}  // namespace

void Array::write(const std::vector<uint64_t>& offset, const std::vector<uint64_t>& shape,
                  const void* in) const {
  const RegionPlan plan = plan_region(info_, store_->path + "::" + node_, offset, shape);
  refuse_unguarded_part(*store_, info_, store_->path + "::" + node_, offset, shape);
  handle_->require(handle_->array().write_chunk != nullptr, "write chunks");
  const size_t esize = plan.esize, cap = plan.cap;
  const bool swap = plan.swap;
  const std::vector<int64_t>& in_strides = plan.user_strides;
  const ChunkRuns runs(plan.range, cap, store_->registry->threads());
  std::shared_lock<std::shared_mutex> lock(store_->mutex);
  handle_->require_open();
  std::mutex partial_mutex;
  std::vector<std::vector<uint64_t>> partial;  // chunks covered in part: merged under a lock below
  // The caller's part of a chunk, copied into the chunk's buffer.
  auto copy_part = [&](const std::vector<uint64_t>& idx, const Overlap& part, char* chunk,
                       const std::vector<int64_t>& chunk_strides) {
    const char* src =
        static_cast<const char*>(in) + element_offset(part.lo, offset, in_strides) * esize;
    char* dst = chunk + element_offset(part.lo, chunk_origin(info_, idx), chunk_strides) * esize;
    copy_strided(src, in_strides.data(), dst, chunk_strides.data(), part.size.data(),
                 part.size.size(), esize, {swap, false, plan.parts});
  };
  try {
    detail::parallel_for(store_->registry->threads(), runs.size(), [&](size_t task) {
      auto [first, length] = runs.task(task);
      char* buf = scratch(length * cap);
      // Chunks the region covers whole are gathered side by side (reading the
      // caller's rows in order), then encoded and written one by one.
      std::vector<detail::RowPart> parts;
      std::vector<std::vector<int64_t>> part_strides(length);
      std::vector<std::pair<std::vector<uint64_t>, char*>> gathered;
      for (uint64_t k = 0; k < length; ++k) {
        std::vector<uint64_t> idx = plan.range.at(first + k);
        std::vector<uint64_t> origin = chunk_origin(info_, idx);
        std::vector<uint64_t> extent = clipped_extent(info_, idx);
        std::vector<int64_t>& chunk_strides = part_strides[k] =
            strides_of(extent, info_.fortran_order);
        char* chunk = buf + k * cap;
        Overlap part = overlap(info_, idx, extent, offset, shape);
        if (part.empty) continue;
        if (part.size != extent) {
          std::lock_guard<std::mutex> guard(partial_mutex);
          partial.push_back(std::move(idx));
          continue;
        }
        const char* src =
            static_cast<const char*>(in) + element_offset(part.lo, offset, in_strides) * esize;
        if (!info_.fortran_order && !swap && contiguous_in(extent, shape)) {
          // The chunk is one stretch of the caller's buffer (a slab of whole
          // rows, as .npy's chunks are): handed over as it is, no copy.
          write_one_chunk(*handle_, info_, idx, src);
          continue;
        }
        if (!info_.fortran_order && !idx.empty()) {
          char* dst = chunk + element_offset(part.lo, origin, chunk_strides) * esize;
          parts.push_back({src, in_strides.data(), dst, chunk_strides.data(), extent.back()});
          gathered.emplace_back(std::move(idx), chunk);
          continue;
        }
        copy_part(idx, part, chunk, chunk_strides);
        write_one_chunk(*handle_, info_, idx, chunk);
      }
      if (parts.empty()) return;
      std::vector<uint64_t> lead_shape = clipped_extent(info_, gathered[0].first);
      detail::copy_side_by_side(parts, lead_shape.data(), lead_shape.size(), esize,
                                {swap, false, plan.parts});
      for (const auto& [idx, chunk] : gathered) write_one_chunk(*handle_, info_, idx, chunk);
    });
    // Read-modify-write of the chunks covered in part, one lock unit (chunk
    // or shard) per task: read, merge, write and publish in one turn, so no
    // other writer's part of the chunk is lost.
    const auto units = group_by_unit(info_, std::move(partial));
    detail::parallel_for(store_->registry->threads(), units.size(), [&](size_t u) {
      char* chunk = scratch(cap);
      HeldChunk held(*handle_, units[u].front());
      for (const std::vector<uint64_t>& idx : units[u]) {
        std::vector<uint64_t> extent = clipped_extent(info_, idx);
        merge_stored_chunk(*handle_, info_, idx, chunk);
        copy_part(idx, overlap(info_, idx, extent, offset, shape), chunk,
                  strides_of(extent, info_.fortran_order));
        write_one_chunk(*handle_, info_, idx, chunk);
      }
      held.release();
    });
  } catch (...) {
    // What was written before the failure is published as the chunks
    // written whole already are; nothing is left pending for a later call.
    try {
      flush_node(*handle_);
    } catch (...) {
    }
    throw;
  }
  flush_node(*handle_);
}

bool Array::copy_chunks_to(const Array& dst, uint64_t part_index, uint64_t part_count,
                           const std::function<void(uint64_t)>& done) const {
  const NodeInfo& to = dst.info_;
  if (info_.shape != to.shape || info_.dtype != to.dtype || info_.chunks != to.chunks) return false;
  if (part_count == 0 || part_index >= part_count)
    throw Error(ErrorCode::invalid_argument, "copy_chunks_to: part " + std::to_string(part_index) +
                                                 " of " + std::to_string(part_count));
  dst.handle_->require(dst.handle_->array().write_chunk != nullptr, "write chunks");
  const size_t esize = dtype_size(info_.dtype),
               cap = static_cast<size_t>(nominal_chunk_bytes(info_));
  const bool same_layout =
      info_.big_endian == to.big_endian && info_.fortran_order == to.fortran_order;
  const bool same_fill =
      info_.fill_value == to.fill_value && info_.fill_value_imag == to.fill_value_imag;
  ChunkRange all;
  all.first.assign(info_.shape.size(), 0);
  all.count = chunk_grid();
  const size_t total = all.size(), mine = (total + part_count - 1 - part_index) / part_count;
  std::shared_lock<std::shared_mutex> read_lock(store_->mutex, std::defer_lock);
  std::shared_lock<std::shared_mutex> write_lock(dst.store_->mutex, std::defer_lock);
  read_lock.lock();
  if (dst.store_ != store_) write_lock.lock();
  handle_->require_open();
  dst.handle_->require_open();
  auto copy_one = [&](size_t k) {
    std::vector<uint64_t> idx = all.at(part_index + k * part_count), stored;
    std::vector<uint64_t> extent = clipped_extent(info_, idx);
    const uint64_t bytes = product(extent) * esize;
    // Two chunk-sized buffers per thread: as read, and converted for dst.
    char* buf = scratch(2 * cap);
    char *in = buf, *out = buf + cap;
    bool present = read_one_chunk(*handle_, info_, idx, in, cap, stored);
    if (present && same_layout && stored == extent) {
      write_one_chunk(*dst.handle_, to, idx, in);  // the common case: as it is
    } else if (present || !same_fill) {
      // Convert the stored chunk (padded, cropped, other byte or element
      // order) into dst's layout of the clipped extent; fill what it lacks.
      detail::fill_elements(out, product(extent), to.dtype, info_.fill_value, to.big_endian,
                            info_.fill_value_imag);
      if (present) {
        std::vector<uint64_t> origin = chunk_origin(info_, idx);
        Overlap keep = overlap(info_, idx, stored, origin, extent);
        std::vector<int64_t> from_strides = strides_of(stored, info_.fortran_order);
        std::vector<int64_t> to_strides = strides_of(extent, to.fortran_order);
        if (!keep.empty)
          copy_strided(in, from_strides.data(), out, to_strides.data(), keep.size.data(),
                       keep.size.size(), esize,
                       {info_.big_endian != to.big_endian, false, detail::swap_parts(to.dtype)});
      }
      write_one_chunk(*dst.handle_, to, idx, out);
    }
    if (done) done(bytes);
  };
  try {
    detail::parallel_for(store_->registry->threads(), mine, copy_one);
  } catch (...) {
    try {
      flush_node(*dst.handle_);
    } catch (...) {
    }
    throw;
  }
  flush_node(*dst.handle_);  // shards of which this part wrote some chunks
  return true;
}

std::vector<uint64_t> Array::chunk_grid() const {
  std::vector<uint64_t> g;
  for (size_t d = 0; d < info_.shape.size(); ++d)
    g.push_back((info_.shape[d] + info_.chunks[d] - 1) / info_.chunks[d]);
  return g;
}

bool Array::chunk_exists(const std::vector<uint64_t>& chunk_index) const {
  const std::vector<uint64_t> grid = chunk_grid();
  bool inside = chunk_index.size() == grid.size();
  for (size_t d = 0; inside && d < grid.size(); ++d) inside = chunk_index[d] < grid[d];
  if (!inside)
    throw Error(
        ErrorCode::invalid_argument,
        store_->path + "::" + node_ + ": " + chunk_name(chunk_index) + " is outside the chunk grid",
        store_->path);
  int32_t exists = 0;
  detail::CallError err;
  std::shared_lock<std::shared_mutex> lock(store_->mutex);
  handle_->require_open();
  store_->check(
      handle_->array().chunk_exists(handle_->node.handle, chunk_index.data(), &exists, &err), err);
  return exists != 0;
}

}  // namespace stowage
