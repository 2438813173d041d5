// datg_reader.cpp -- opening and validating a .datg file, decoding blocks.
#include "datg_reader.hpp"

#include <algorithm>

namespace datg {

namespace sdk = stowage::sdk;

namespace {

// Blocks larger than this are not worth keeping a copy of.
constexpr size_t kMaxCachedBlockBytes = 4u << 20;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Checks that a container starts with its flavour's magic, for a clear error
// before the codec sees it.
void check_container_magic(const uint8_t* p, size_t size, uint8_t flag, const Describe& what) {
  static const uint8_t kFrameMagic[4] = {0x04, 0x22, 0x4D, 0x18};
  if (flag == kFlagLz4Frame && (size < 4 || std::memcmp(p, kFrameMagic, 4) != 0))
    sdk::corrupt(what() + ": does not start with the LZ4 frame magic 04 22 4D 18");
  if (flag == kFlagLz4Block && (size < 8 || std::memcmp(p, "LZ4Block", 8) != 0))
    sdk::corrupt(what() + ": does not start with the lz4-java \"LZ4Block\" magic");
}

}  // namespace

DatasetPaths::DatasetPaths(std::string_view path) {
  base = std::string(ends_with(path, ".datg") ? path.substr(0, path.size() - 5) : path);
  matrix = base + ".datg";
  rows = base + ".rows.txt.gz";
  cols = base + ".cols.txt.gz";
}

void decode_container(const uint8_t* data, size_t data_size, const sdk::HostCodec& codec,
                      uint8_t flag, void* out, size_t size, const Describe& what) {
  check_container_magic(data, data_size, flag, what);
  size_t written = 0;
  try {
    written = codec.decode(data, data_size, out, size);
  } catch (const sdk::Error& e) {
    sdk::fail(e.code(), what() + ": " + e.what());
  }
  if (written != size)
    sdk::corrupt(what() + ": decodes to " + std::to_string(written) + " bytes, expected " +
                 std::to_string(size));
}

// ---- block cache ---------------------------------------------------------------

bool BlockCache::get(uint64_t block, void* out, size_t size) {
  std::shared_ptr<const std::vector<uint8_t>> bytes;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Entry& e : entries_) {
      if (e.block == block && e.bytes->size() == size) {
        bytes = e.bytes;
        e.last_use = ++clock_;
        break;
      }
    }
  }
  if (!bytes) return false;
  std::memcpy(out, bytes->data(), size);
  return true;
}

void BlockCache::put(uint64_t block, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  auto bytes = std::make_shared<const std::vector<uint8_t>>(p, p + size);
  std::lock_guard<std::mutex> lock(mutex_);
  if (entries_.size() < capacity_) {
    entries_.push_back({block, std::move(bytes), ++clock_});
    return;
  }
  Entry& oldest =
      *std::min_element(entries_.begin(), entries_.end(),
                        [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; });
  oldest = {block, std::move(bytes), ++clock_};
}

// ---- reader -----------------------------------------------------------------------

Reader::Reader(const sdk::Storage& storage, const DatasetPaths& paths, const sdk::Host& host)
    : storage_(storage), paths_(paths) {
  // Local files are mapped whole (blocks decode from the map; the map spared
  // a pread and a copy per block before the storage layer), and every part
  // is then read from that one map, so the sizes agree even if the file is
  // replaced meanwhile. Other backends read the parts: a ranged GET each
  // over HTTP, not the whole matrix.
  if (storage_.can(STOWAGE_CAP_MAP)) {
    whole_ = storage_.map(paths_.matrix);
    size_ = whole_.size();
  } else {
    size_ = storage_.size(paths_.matrix);
  }
  sdk::Bytes held;
  const uint8_t* footer = read_range(size_ - std::min<uint64_t>(size_, kFooterSize), size_, held);
  footer_ = parse_footer(footer, size_, paths_.matrix);

  const uint64_t strings_size = size_ - kFooterSize - footer_.metadata_offset;
  const uint8_t* strings = read_range(footer_.metadata_offset, size_ - kFooterSize, held);
  metadata_ = parse_metadata(std::string_view(reinterpret_cast<const char*>(strings), strings_size),
                             paths_.matrix);

  row_names_ = read_name_file(storage_, paths_.rows, static_cast<uint64_t>(footer_.rows), "row");
  col_names_ = read_name_file(storage_, paths_.cols, static_cast<uint64_t>(footer_.cols), "column");

  codec_ = std::make_unique<sdk::HostCodec>(host, codec_config_for_flag(footer_.flag));
  load_index();
  const uint64_t block_bytes =
      static_cast<uint64_t>(footer_.rows_per_block) * static_cast<uint64_t>(footer_.cols) * 8;
  use_cache_ = footer_.rows_per_block > 1 && block_bytes <= kMaxCachedBlockBytes;
}

const uint8_t* Reader::read_range(uint64_t begin, uint64_t end, sdk::Bytes& held) const {
  if (whole_.data()) return whole_.data() + begin;
  held = storage_.read(paths_.matrix, begin, end - begin);
  if (held.size() != end - begin)
    sdk::corrupt(paths_.matrix + ": file is truncated (wanted " + std::to_string(end - begin) +
                 " bytes at offset " + std::to_string(begin) + ", got " +
                 std::to_string(held.size()) + ")");
  return held.data();
}

void Reader::decode_range(uint64_t begin, uint64_t end, void* out, size_t size,
                          const Describe& what) {
  if (whole_.data()) {
    decode_container(whole_.data() + begin, end - begin, *codec_, footer_.flag, out, size, what);
    return;
  }
  sdk::BufferPool::Lease compressed = buffers_.take(end - begin);  // may be larger: use end - begin
  storage_.read_exact(paths_.matrix, begin, compressed.data(), end - begin);
  decode_container(compressed.data(), end - begin, *codec_, footer_.flag, out, size, what);
}

void Reader::load_index() {
  const uint64_t n = block_count(footer_.rows, footer_.rows_per_block);
  std::vector<uint8_t> bytes(n * 8 + 1);  // +1: never a zero-sized buffer
  decode_range(footer_.index_offset, footer_.metadata_offset, bytes.data(), n * 8, [&] {
    return paths_.matrix + ": block index at offset " + std::to_string(footer_.index_offset);
  });
  offsets_.resize(n + 1);
  for (uint64_t b = 0; b < n; ++b) offsets_[b] = sdk::load_be<uint64_t>(bytes.data() + 8 * b);
  offsets_[n] = footer_.index_offset;
  for (uint64_t b = 0; b < n; ++b) {
    // Offsets must increase and leave room for a container before the next one.
    if (offsets_[b] >= offsets_[b + 1] || offsets_[b + 1] - offsets_[b] < kMinContainerSize)
      sdk::corrupt(
          paths_.matrix + ": block index: block " + std::to_string(b) + " at offset " +
          std::to_string(static_cast<int64_t>(offsets_[b])) +
          (b + 1 < n ? " is not well before block " + std::to_string(b + 1) + " at " +
                           std::to_string(offsets_[b + 1])
                     : " is not well before the index at " + std::to_string(footer_.index_offset)));
  }
}

void Reader::read_block(uint64_t block, void* out, size_t capacity) {
  if (block >= blocks())
    sdk::invalid(paths_.matrix + ": block " + std::to_string(block) + " out of range (" +
                 std::to_string(blocks()) + " blocks)");
  const int64_t rows = rows_in_block(footer_, block);
  const size_t size = static_cast<size_t>(rows) * static_cast<size_t>(footer_.cols) * 8;
  if (capacity < size)
    sdk::invalid(paths_.matrix + ": a " + std::to_string(capacity) +
                 "-byte buffer cannot hold block " + std::to_string(block) + " (" +
                 std::to_string(size) + " bytes)");
  if (use_cache_ && cache_.get(block, out, size)) return;
  // LZ4 cannot expand beyond its ratio: refuse before decoding garbage.
  const uint64_t compressed = offsets_[block + 1] - offsets_[block];
  const auto what = [&] {
    const int64_t first = static_cast<int64_t>(block) * footer_.rows_per_block;
    return paths_.matrix + ": block " + std::to_string(block) + " (rows " + std::to_string(first) +
           ".." + std::to_string(first + rows - 1) + ") at offset " +
           std::to_string(offsets_[block]);
  };
  if (size > compressed * kMaxLz4Ratio + 4096)
    sdk::corrupt(what() + ": " + std::to_string(compressed) + " bytes cannot hold " +
                 std::to_string(size) + " bytes of values");
  decode_range(offsets_[block], offsets_[block + 1], out, size, what);
  if (use_cache_) cache_.put(block, out, size);
}

}  // namespace datg
