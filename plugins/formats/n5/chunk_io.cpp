// Chunk I/O of an N5 container: numeric chunks (the hot path, called
// concurrently by the host), string datasets and object datasets.
#include "chunk.hpp"
#include "store.hpp"

#include <stowage/slabs.hpp>

#include <algorithm>
#include <cstring>

namespace n5 {

namespace sdk = stowage::sdk;
using sdk::corrupt;
using sdk::fail;
using sdk::invalid;
using sdk::unsupported;

// ---- chunks --------------------------------------------------------------------

namespace {

void check_chunk_index(const Dataset& ds, const uint64_t* index, const std::string& dir) {
  for (size_t d = 0; d < ds.ndim(); ++d)
    if (index[d] >= ds.grid(d))
      invalid(dir + ": chunk index " + std::to_string(index[d]) + " along dimension " +
              std::to_string(d) + " is outside the grid of " + std::to_string(ds.grid(d)));
}

bool all_zero(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w) return false;
  }
  for (; i < n; ++i)
    if (p[i]) return false;
  return true;
}

// A read found no chunk at `path`. Only a chunk absent from a dataset that
// still exists is the fill value: without its attributes.json the dataset
// was removed while open, an error naming the chunk. One stat per missing chunk.
bool absent_chunk(const sdk::Storage& storage, const std::string& dir, const std::string& path) {
  if (!storage.is_file(dir + kAttributesFile))
    fail(STOWAGE_NOT_FOUND,
         path + ": the dataset was removed while open (" + dir + kAttributesFile + " is gone)");
  return false;
}

// Whether a chunk file is stored at `path`; a directory there, or a file
// where a directory of the path should be, is an error naming it.
bool chunk_stored(const sdk::Storage& storage, const std::string& dir, const std::string& path) {
  const int32_t kind = storage.kind(path);
  if (kind == STOWAGE_ENTRY_FILE) return true;
  if (kind == STOWAGE_ENTRY_DIRECTORY)
    fail(STOWAGE_IO, path + ": is a directory, not a chunk file");
  uint8_t none = 0;
  uint64_t got = 0;  // stat calls a path through a file absent: an open says it is broken
  if (storage.read_into_if_exists(path, 0, &none, 0, &got)) return true;
  return absent_chunk(storage, dir, path);
}

}  // namespace

bool N5Store::read_chunk(const OpenDataset& ds, const uint64_t* index, void* out, size_t capacity,
                         uint64_t* chunk_shape) {
  check_chunk_index(ds.meta, index, ds.dir);
  const std::string path = chunk_path(ds.dir, index, ds.meta.ndim());
  return read_numeric(ds, path, static_cast<uint8_t*>(out), capacity, chunk_shape) ||
         absent_chunk(storage_, ds.dir, path);
}

// A raw chunk's big-endian payload slab by slab (the host swaps bytes as it
// copies): its header read first, then the slabs the region needs. Anything
// unusual (no file, another header mode) goes to read_chunk, which names it.
sdk::ArrayNode::Slabs N5Store::read_chunk_slabs(const OpenDataset& ds, const uint64_t* index,
                                                uint64_t begin, uint64_t end,
                                                const sdk::ArrayNode::PieceFn& piece,
                                                uint64_t* chunk_shape) {
  using Slabs = sdk::ArrayNode::Slabs;
  // A read is a syscall, not a request, only where the storage maps files.
  if (!ds.raw || ds.meta.ndim() == 0 || !storage_.can(STOWAGE_CAP_MAP)) return Slabs::unsupported;
  check_chunk_index(ds.meta, index, ds.dir);
  const std::string path = chunk_path(ds.dir, index, ds.meta.ndim());
  const size_t ndim = ds.meta.ndim(), header = default_header_size(ndim);
  sdk::BufferPool::Lease head = scratch_.take(header);
  uint64_t got = 0, size = 0;
  if (!storage_.read_into_if_exists(path, 0, head.data(), header, &got, &size) || got < header ||
      sdk::load_be<uint16_t>(head.data()) != kModeDefault)
    return Slabs::unsupported;
  if (size > kMaxChunkBytes + max_header_size(ndim))
    corrupt(path + ": chunk file is " + std::to_string(size) + " bytes, over N5's 2 GiB limit");
  ChunkHeader h =
      parse_chunk_header(head.data(), got, ndim, ds.meta.chunks.data(), chunk_shape, path);
  const uint64_t bytes = dense_bytes(ds, h, path, SIZE_MAX);
  if (size - h.size < bytes)
    corrupt(path + ": truncated payload: " + std::to_string(size - h.size) +
            " bytes, the header needs " + std::to_string(bytes));
  if (chunk_shape[0] == 0) return Slabs::read;
  sdk::read_slabs(storage_, path, h.size, bytes / chunk_shape[0], begin,
                  std::min(end, chunk_shape[0]), piece, scratch_);
  return Slabs::read;
}

// Reads one numeric chunk file, decoding straight into `out`. False if missing.
bool N5Store::read_numeric(const OpenDataset& ds, const std::string& path, uint8_t* out,
                           size_t capacity, uint64_t* chunk_shape) {
  // A raw chunk in one scattered read, also over HTTP (one ranged GET whose
  // body goes straight into `out`, no copy out of scratch; bench/http/README.md).
  if (ds.raw) {
    std::optional<bool> found = read_raw_scattered(ds, path, out, capacity, chunk_shape);
    if (found) return *found;
  }
  // A coded chunk is read whole into scratch. Its size is unknown until
  // read, so the first read asks for what a full chunk can take; more is rare.
  const size_t ndim = ds.meta.ndim();
  const size_t max_header = max_header_size(ndim);
  const uint64_t full = ds.meta.chunk_elements() * ds.meta.type.size;
  const uint64_t want = max_header + std::max<uint64_t>(full + full / 8, 4096);
  sdk::BufferPool::Lease buf = scratch_.take(want);
  uint64_t got = 0;
  if (!storage_.read_into_if_exists(path, 0, buf.data(), want, &got)) return false;
  if (got == want) {
    const uint64_t size = storage_.size(path);
    if (size > kMaxChunkBytes + max_header)
      corrupt(path + ": chunk file is " + std::to_string(size) + " bytes, over N5's 2 GiB limit");
    buf->resize(size);  // grown: the first `got` bytes stay
    storage_.read_exact(path, got, buf.data() + got, size - got);
    got = size;
  }
  const uint8_t* file = buf.data();
  ChunkHeader h = parse_chunk_header(file, got, ndim, ds.meta.chunks.data(), chunk_shape, path);
  const uint64_t bytes = dense_bytes(ds, h, path, capacity);
  const uint64_t payload = got - h.size;
  if (ds.raw) {
    if (payload < bytes)
      corrupt(path + ": truncated payload: " + std::to_string(payload) +
              " bytes, the header needs " + std::to_string(bytes));
    std::memcpy(out, file + h.size, bytes);
    return true;
  }
  decode(ds, path, file + h.size, payload, out, bytes);
  return true;
}

// The bytes a parsed numeric chunk holds, checked against the caller's buffer.
uint64_t N5Store::dense_bytes(const OpenDataset& ds, const ChunkHeader& h, const std::string& path,
                              size_t capacity) {
  if (h.elements != h.dims_product)
    unsupported(path + ": varlength chunk holds " + std::to_string(h.elements) +
                " elements for a block of " + std::to_string(h.dims_product) +
                "; it cannot be read as a dense array");
  const uint64_t bytes = h.elements * ds.meta.type.size;
  if (bytes > capacity)
    invalid(path + ": chunk of " + std::to_string(bytes) + " bytes does not fit the " +
            std::to_string(capacity) + "-byte buffer");
  return bytes;
}

// A raw chunk in one scattered read (one preadv, one ranged GET): the (mode
// 0) header into scratch, the payload straight into `out`, no copy. nullopt when the
// header is not mode 0 (the caller reads it whole instead).
std::optional<bool> N5Store::read_raw_scattered(const OpenDataset& ds, const std::string& path,
                                                uint8_t* out, size_t capacity,
                                                uint64_t* chunk_shape) {
  const size_t ndim = ds.meta.ndim();
  const size_t header = default_header_size(ndim);
  sdk::BufferPool::Lease head = scratch_.take(header);
  const stowage_buffer parts[2] = {{head.data(), header}, {out, capacity}};
  uint64_t got = 0, size = 0;
  if (!storage_.read_parts_if_exists(path, 0, parts, 2, &got, &size)) return false;
  if (size > kMaxChunkBytes + max_header_size(ndim))
    corrupt(path + ": chunk file is " + std::to_string(size) + " bytes, over N5's 2 GiB limit");
  if (got >= 2 && sdk::load_be<uint16_t>(head.data()) != kModeDefault) return std::nullopt;
  ChunkHeader h = parse_chunk_header(head.data(), std::min<uint64_t>(got, header), ndim,
                                     ds.meta.chunks.data(), chunk_shape, path);
  const uint64_t bytes = dense_bytes(ds, h, path, capacity);
  if (got - h.size < bytes)
    corrupt(path + ": truncated payload: " + std::to_string(got - h.size) +
            " bytes, the header needs " + std::to_string(bytes));
  return true;
}

void N5Store::decode(const OpenDataset& ds, const std::string& path, const uint8_t* payload,
                     size_t payload_size, uint8_t* out, size_t bytes) {
  size_t written = 0;
  try {
    written = ds.codec.get().decode(payload, payload_size, out, bytes);
  } catch (const sdk::Error& e) {
    fail(e.code(), path + ": " + e.what());
  }
  if (written != bytes)
    corrupt(path + ": payload decodes to " + std::to_string(written) + " bytes, the header needs " +
            std::to_string(bytes));
}

// Reads a string (mode 1) or object (mode 2) chunk: its decoded payload, of
// numElements bytes, and for strings the number of strings in *count.
std::optional<std::string> N5Store::read_variable(const OpenDataset& ds, const std::string& path,
                                                  uint64_t* count) {
  const uint64_t limit = kMaxChunkBytes + max_header_size(ds.meta.ndim());
  std::optional<sdk::Bytes> file;
  try {
    file = storage_.read(path, 0, limit + 1);
  } catch (const sdk::Error& e) {
    if (e.code() != STOWAGE_NOT_FOUND) throw;
    absent_chunk(storage_, ds.dir, path);  // an error if the dataset is gone
    return std::nullopt;
  }
  const uint64_t size = file->size();
  if (size > limit) corrupt(path + ": chunk file is over N5's 2 GiB limit");
  const uint8_t* buf = file->data();
  ChunkHeader h;
  std::vector<uint64_t> dims(ds.meta.ndim());
  if (ds.meta.type.kind == ElementKind::object) {
    h = parse_object_header(buf, size, path);
  } else {
    h = parse_chunk_header(buf, size, ds.meta.ndim(), ds.meta.chunks.data(), dims.data(), path);
    if (h.mode != kModeVarlength)
      corrupt(path + ": a string chunk must be varlength (mode 1), found mode " +
              std::to_string(h.mode));
    *count = h.dims_product;
  }
  // numElements is the payload's decoded byte length for both types. Unlike
  // a numeric block it is not bounded by blockSize, so bound it by what the
  // stored payload can plausibly expand to before allocating.
  uint64_t stored = size - h.size;
  uint64_t plausible = ds.raw ? stored : std::max<uint64_t>(stored * 65536, 1 << 20);
  if (h.elements > kMaxChunkBytes || h.elements > plausible)
    corrupt(path + ": declares " + std::to_string(h.elements) + " payload bytes for " +
            std::to_string(stored) + " stored bytes");
  std::string out(h.elements, '\0');
  decode(ds, path, buf + h.size, size - h.size, reinterpret_cast<uint8_t*>(out.data()), out.size());
  return out;
}

void N5Store::write_chunk(const OpenDataset& ds, const uint64_t* index, const void* in, size_t size,
                          const uint64_t* chunk_shape) {
  require_writable("write_chunk");
  const Dataset& meta = ds.meta;
  check_chunk_index(meta, index, ds.dir);
  uint64_t elements = 1;
  for (size_t d = 0; d < meta.ndim(); ++d) {
    if (chunk_shape[d] == 0 || chunk_shape[d] > meta.chunks[d])
      invalid(ds.dir + ": chunk shape " + std::to_string(chunk_shape[d]) + " along dimension " +
              std::to_string(d) + " is not in 1.." + std::to_string(meta.chunks[d]));
    elements *= chunk_shape[d];
  }
  if (size != elements * meta.type.size)
    invalid(ds.dir + ": write_chunk got " + std::to_string(size) + " bytes for " +
            std::to_string(elements) + " elements of " + meta.type.name);

  std::string path = chunk_path(ds.dir, index, meta.ndim());
  if (!options_.write_empty_chunks && all_zero(in, size)) {
    storage_.remove_if_exists(path, 0);
    return;
  }
  size_t header = default_header_size(meta.ndim());
  if (header + size > kMaxChunkBytes && ds.raw)
    invalid(path + ": the chunk is " + std::to_string(header + size) +
            " bytes, over N5's 2 GiB limit");
  if (ds.raw) {  // the payload is the input: no copy
    sdk::BufferPool::Lease head = scratch_.take(header);
    write_default_header(head.data(), chunk_shape, meta.ndim());
    write_file(path, {{head.data(), header}, {in, size}});
    return;
  }
  const sdk::HostCodec& codec = ds.codec.get();
  sdk::BufferPool::Lease buf = scratch_.take(header + codec.bound(size));
  write_default_header(buf.data(), chunk_shape, meta.ndim());
  size_t encoded;
  try {
    encoded = codec.encode(in, size, buf.data() + header, buf->size() - header);
  } catch (const sdk::Error& e) {
    fail(e.code(), path + ": " + e.what());
  }
  if (header + encoded > kMaxChunkBytes)
    invalid(path + ": the encoded chunk is " + std::to_string(header + encoded) +
            " bytes, over N5's 2 GiB limit");
  write_file(path, {{buf.data(), header + encoded}});
}

// A stat of the chunk's file: nothing is read or decoded.
bool N5Store::chunk_exists(const OpenDataset& ds, const uint64_t* index) const {
  check_chunk_index(ds.meta, index, ds.dir);
  return chunk_stored(storage_, ds.dir, chunk_path(ds.dir, index, ds.meta.ndim()));
}

std::unique_ptr<sdk::ChunkLock> N5Store::lock_chunk(const OpenDataset& ds,
                                                    const uint64_t* index) const {
  return sdk::lock_chunk_key(storage_, chunk_path(ds.dir, index, ds.meta.ndim()));
}

// Staged and published whole, so a reader never sees half a chunk and a
// killed writer leaves the old chunk; the storage makes parent directories.
void N5Store::write_file(const std::string& path, std::initializer_list<Piece> pieces) const {
  sdk::Staged file = storage_.stage(path);
  for (const Piece& p : pieces) file.append(p.first, p.second);
  storage_.publish(file,
                   STOWAGE_PUBLISH_REPLACE | (options_.durable ? STOWAGE_PUBLISH_DURABLE : 0));
}

// ---- string datasets (N5 Java's "string" dataType, 1-D) -------------------------

namespace {
// Strings per block of a string dataset we write.
}  // namespace

// Writes a whole 1-D string dataset the way N5 Java does: varlength (mode 1)
// blocks whose numElements is the payload's byte length, each string
// followed by a NUL. An existing string dataset at `node` is replaced (its
// user attributes, blocks and codec are kept).
void N5Store::write_strings(std::string_view node, const std::vector<std::string_view>& values) {
  require_writable("write_strings");
  std::vector<std::string> parts = sdk::split_node_path(node);
  std::string dir = node_dir(parts);
  require_outside_datasets(parts);
  Dataset meta;
  meta.type = *find_data_type("string");
  meta.chunks = {std::max<uint64_t>(1, std::min<uint64_t>(values.size(), kStringBlock))};
  meta.compression = json{{"type", "raw"}};
  // A replaced string dataset (or one create made empty) keeps its user
  // attributes, blocks and codec.
  json user = json::object();
  if (std::optional<json> old = storage_.is_directory(dir) ? read_attributes(dir) : std::nullopt;
      old && is_dataset(*old)) {
    if ((*old)["dataType"] != "string")
      invalid(dir + ": is a numeric dataset, not a string dataset");
    user = user_attributes(*old, parts.empty());
    Dataset was = parse_dataset(*old, dir + kAttributesFile);
    meta.chunks = was.chunks;
    meta.compression = was.compression;
    storage_.remove(dir, STOWAGE_REMOVE_RECURSIVE);
  }
  for (std::string_view v : values)
    if (v.find('\0') != std::string_view::npos) invalid(dir + ": N5 strings cannot contain NUL");
  meta.shape = {values.size()};
  storage_.make_directory(dir);
  write_attributes(dir, dataset_attributes(meta, user));
  if (!parts.empty()) ensure_root_version();

  std::shared_ptr<const OpenDataset> ds = open_dataset(node);
  std::string payload;
  for (uint64_t first = 0; first < values.size(); first += meta.chunks[0]) {
    uint64_t count = std::min<uint64_t>(meta.chunks[0], values.size() - first);
    payload.clear();
    for (uint64_t i = first; i < first + count; ++i) (payload += values[i]) += '\0';
    if (payload.size() > kMaxChunkBytes)
      invalid(dir + ": a block of strings exceeds N5's 2 GiB limit");
    uint8_t header[max_header_size(1)];
    size_t header_size =
        write_varlength_header(header, &count, 1, static_cast<uint32_t>(payload.size()));
    uint64_t chunk = first / meta.chunks[0];
    write_variable(*ds, chunk_path(dir, &chunk, 1), header, header_size, payload);
  }
}

// A string or object block: the header, then the payload through the dataset's codec.
void N5Store::write_variable(const OpenDataset& ds, const std::string& path, const uint8_t* header,
                             size_t header_size, std::string_view payload) {
  if (ds.raw) return write_file(path, {{header, header_size}, {payload.data(), payload.size()}});
  const sdk::HostCodec& codec = ds.codec.get();
  sdk::BufferPool::Lease buf = scratch_.take(header_size + codec.bound(payload.size()));
  std::memcpy(buf.data(), header, header_size);
  size_t encoded;
  try {
    encoded = codec.encode(payload.data(), payload.size(), buf.data() + header_size,
                           buf->size() - header_size);
  } catch (const sdk::Error& e) {
    fail(e.code(), path + ": " + e.what());
  }
  if (header_size + encoded > kMaxChunkBytes)
    invalid(path + ": the encoded block is " + std::to_string(header_size + encoded) +
            " bytes, over N5's 2 GiB limit");
  write_file(path, {{buf.data(), header_size + encoded}});
}

void N5Store::read_strings(const OpenDataset& ds, uint64_t begin, uint64_t end,
                           const sdk::ItemFn& item) {
  const Dataset& meta = ds.meta;
  if (meta.ndim() != 1) invalid(ds.dir + ": read_strings needs a 1-D string dataset");
  end = std::min(end, meta.shape[0]);
  for (uint64_t chunk = begin / meta.chunks[0]; begin < end; ++chunk) {
    uint64_t first = chunk * meta.chunks[0];
    uint64_t count = 0;
    std::vector<std::string_view> values;
    std::string path = chunk_path(ds.dir, &chunk, 1);
    std::optional<std::string> payload = read_variable(ds, path, &count);
    if (payload) {
      // Each string is followed by a NUL; unlike Java's String.split we keep
      // trailing empty strings, which are part of what was written.
      size_t pos = 0;
      while (pos < payload->size()) {
        size_t nul = payload->find('\0', pos);
        if (nul == std::string::npos) corrupt(path + ": string payload does not end with NUL");
        values.emplace_back(payload->data() + pos, nul - pos);
        pos = nul + 1;
      }
      if (values.size() != count)
        corrupt(path + ": header says " + std::to_string(count) + " strings, payload holds " +
                std::to_string(values.size()));
    }
    for (; begin < end && begin < first + meta.chunks[0]; ++begin) {
      uint64_t k = begin - first;
      std::string_view v = k < values.size() ? values[k] : std::string_view();
      item(v.data(), v.size());
    }
  }
}

// ---- object datasets (N5's "object" dataType): one record per block -------------

std::string N5Store::object_path(const OpenDataset& ds, uint64_t index) const {
  std::vector<uint64_t> grid_index(ds.meta.ndim());
  for (size_t d = ds.meta.ndim(); d-- > 0;) {
    grid_index[d] = index % ds.meta.grid(d);
    index /= ds.meta.grid(d);
  }
  return chunk_path(ds.dir, grid_index.data(), grid_index.size());
}

void N5Store::read_records(const OpenDataset& ds, uint64_t begin, uint64_t end,
                           const sdk::ItemFn& item) {
  end = std::min(end, ds.meta.block_count());
  for (uint64_t i = begin; i < end; ++i) {
    std::optional<std::string> bytes = read_variable(ds, object_path(ds, i), nullptr);
    item(bytes ? bytes->data() : "", bytes ? bytes->size() : 0);  // a missing block is empty
  }
}

void N5Store::append_records(const OpenDataset& ds, uint64_t count, const void* const* records,
                             const uint64_t* sizes) {
  require_writable("append_records");
  std::lock_guard<std::mutex> lock(appended_mutex_);
  uint64_t& next = records_appended_[ds.dir];
  if (count > ds.meta.block_count() - next)
    invalid(ds.dir + ": " + std::to_string(next + count) + " records do not fit its " +
            std::to_string(ds.meta.block_count()) + " blocks");
  for (uint64_t i = 0; i < count; ++i, ++next) {
    if (sizes[i] > kMaxChunkBytes) invalid(ds.dir + ": a record exceeds N5's 2 GiB block limit");
    uint8_t header[6];
    sdk::store_be<uint16_t>(header, kModeObject);
    sdk::store_be<uint32_t>(header + 2, static_cast<uint32_t>(sizes[i]));
    write_variable(ds, object_path(ds, next), header, sizeof header,
                   std::string_view(static_cast<const char*>(records[i]), sizes[i]));
  }
}

// The key of a record is its block's path inside the dataset ("0/1", N5 order).
std::string N5Store::record_key(const OpenDataset& ds, uint64_t index) const {
  if (index >= ds.meta.block_count())
    invalid(ds.dir + ": record " + std::to_string(index) + " is out of range");
  return object_path(ds, index).substr(ds.dir.size() + 1);
}

// The record whose block path is `key`: its grid position, numbered in C
// order (the inverse of object_path).
std::optional<uint64_t> N5Store::find_record(const OpenDataset& ds, std::string_view key) const {
  const size_t ndim = ds.meta.ndim();
  std::vector<uint64_t> position(ndim);  // N5 order in the key: fastest dimension first
  size_t d = 0, at = 0;
  for (; d < ndim && at <= key.size(); ++d) {
    size_t slash = std::min(key.find('/', at), key.size());
    std::string_view part = key.substr(at, slash - at);
    if (part.empty() || part.size() > 19 ||
        part.find_first_not_of("0123456789") != std::string_view::npos)
      return std::nullopt;
    position[d] = std::stoull(std::string(part));
    at = slash + 1;
  }
  if (d != ndim || at != key.size() + 1) return std::nullopt;
  uint64_t index = 0;
  for (size_t k = ndim; k-- > 0;) {  // C order of the grid: N5's last dimension is the slowest
    const size_t c = ndim - 1 - k;   // the grid's C-order dimension of N5 dimension k
    if (position[k] >= ds.meta.grid(c)) return std::nullopt;
    index = index * ds.meta.grid(c) + position[k];
  }
  return index;
}

}  // namespace n5
