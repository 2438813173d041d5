// datg_reader.cpp -- opening and validating a .datg file, decoding blocks.
#include "datg_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>

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

void decode_container(const uint8_t* data, size_t data_size, const sdk::HostCodec& codec, uint8_t flag,
                      void* out, size_t size, const Describe& what) {
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

void decode_container(const sdk::File& file, const sdk::HostCodec& codec, uint8_t flag, uint64_t begin,
                      uint64_t end, void* out, size_t size, const Describe& what) {
  thread_local std::vector<uint8_t> compressed;
  compressed.resize(end - begin);
  file.read_at(compressed.data(), compressed.size(), begin);
  decode_container(compressed.data(), compressed.size(), codec, flag, out, size, what);
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
  Entry& oldest = *std::min_element(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    return a.last_use < b.last_use;
  });
  oldest = {block, std::move(bytes), ++clock_};
}

// ---- memory map -------------------------------------------------------------------

MappedFile::MappedFile(int fd, uint64_t size) {
  if (size == 0 || size > SIZE_MAX) return;
  void* p = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return;  // the reader falls back to pread
  data_ = static_cast<const uint8_t*>(p);
  size_ = static_cast<size_t>(size);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

// ---- reader -----------------------------------------------------------------------

Reader::Reader(const DatasetPaths& paths, const sdk::Host& host)
    : paths_(paths), file_(paths.matrix, O_RDONLY) {
  const uint64_t size = file_.size();
  uint8_t footer[kFooterSize] = {};
  if (size >= kFooterSize) file_.read_at(footer, kFooterSize, size - kFooterSize);
  footer_ = parse_footer(footer, size, paths_.matrix);
  map_ = std::make_unique<MappedFile>(file_.fd(), size);

  std::string strings(size - kFooterSize - footer_.metadata_offset, '\0');
  file_.read_at(strings.data(), strings.size(), footer_.metadata_offset);
  metadata_ = parse_metadata(strings, paths_.matrix);

  row_names_ = read_name_file(paths_.rows, static_cast<uint64_t>(footer_.rows), "row");
  col_names_ = read_name_file(paths_.cols, static_cast<uint64_t>(footer_.cols), "column");

  codec_ = std::make_unique<sdk::HostCodec>(host, codec_config_for_flag(footer_.flag));
  load_index();
  const uint64_t block_bytes =
      static_cast<uint64_t>(footer_.rows_per_block) * static_cast<uint64_t>(footer_.cols) * 8;
  use_cache_ = footer_.rows_per_block > 1 && block_bytes <= kMaxCachedBlockBytes;
}

void Reader::load_index() {
  const uint64_t n = block_count(footer_.rows, footer_.rows_per_block);
  std::vector<uint8_t> bytes(n * 8 + 1);  // +1: never a zero-sized buffer
  decode_container(file_, *codec_, footer_.flag, footer_.index_offset, footer_.metadata_offset,
                   bytes.data(), n * 8, [&] {
                     return paths_.matrix + ": block index at offset " +
                            std::to_string(footer_.index_offset);
                   });
  offsets_.resize(n + 1);
  for (uint64_t b = 0; b < n; ++b) offsets_[b] = sdk::load_be<uint64_t>(bytes.data() + 8 * b);
  offsets_[n] = footer_.index_offset;
  for (uint64_t b = 0; b < n; ++b) {
    // Offsets must increase and leave room for a container before the next one.
    if (offsets_[b] >= offsets_[b + 1] || offsets_[b + 1] - offsets_[b] < kMinContainerSize)
      sdk::corrupt(paths_.matrix + ": block index: block " + std::to_string(b) + " at offset " +
                   std::to_string(static_cast<int64_t>(offsets_[b])) +
                   (b + 1 < n ? " is not well before block " + std::to_string(b + 1) + " at " +
                                    std::to_string(offsets_[b + 1])
                              : " is not well before the index at " +
                                    std::to_string(footer_.index_offset)));
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
  if (map_->data())
    decode_container(map_->data() + offsets_[block], offsets_[block + 1] - offsets_[block], *codec_,
                     footer_.flag, out, size, what);
  else
    decode_container(file_, *codec_, footer_.flag, offsets_[block], offsets_[block + 1], out, size,
                     what);
  if (use_cache_) cache_.put(block, out, size);
}

}  // namespace datg
