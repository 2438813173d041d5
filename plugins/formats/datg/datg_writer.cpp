// datg_writer.cpp -- ordering encoded blocks into the file, then the tail.
#include "datg_writer.hpp"

#include "datg_names.hpp"

#include <ctime>

namespace datg {

namespace sdk = stowage::sdk;

// ---- scratch file --------------------------------------------------------------------

uint64_t ScratchFile::append(const void* data, size_t size) {
  const uint64_t offset = staged_.size();
  staged_.append(data, size);
  sha256_.update(data, size);
  return offset;
}

void ScratchFile::read_at(void* out, size_t size, uint64_t offset) const {
  const uint64_t got = staged_.read_at(offset, out, size);
  if (got != size)
    sdk::corrupt(staged_.key() + " (being written): wanted " + std::to_string(size) +
                 " bytes at offset " + std::to_string(offset) + ", got " + std::to_string(got));
}

// ---- writer ---------------------------------------------------------------------------

Writer::Writer(const sdk::Storage& storage, const DatasetPaths& paths, const sdk::Host& host,
               const Footer& footer, Metadata metadata, double fill_value,
               uint64_t max_pending_bytes)
    : storage_(storage),
      paths_(paths),
      footer_(footer),
      metadata_(std::move(metadata)),
      fill_value_(fill_value),
      max_pending_bytes_(max_pending_bytes),
      host_(host),
      codec_(host, codec_config_for_flag(kFlagLz4Frame)),
      file_(std::make_unique<ScratchFile>(storage, paths.matrix)) {
  footer_.flag = kFlagLz4Frame;
  const uint64_t n = block_count(footer_.rows, footer_.rows_per_block);
  offset_.assign(n, 0);
  size_.assign(n, 0);
  in_file_.assign(n, false);
}

std::string Writer::block_name(uint64_t block) const {
  return paths_.matrix + ": block " + std::to_string(block);
}

void Writer::set_names(bool rows, std::vector<std::string> names) {
  const uint64_t expected = static_cast<uint64_t>(rows ? footer_.rows : footer_.cols);
  if (names.size() != expected)
    sdk::invalid(paths_.matrix + ": " + std::to_string(names.size()) + (rows ? " row" : " column") +
                 " names given for " + std::to_string(expected) + (rows ? " rows" : " columns"));
  check_names_writable(names, rows ? "row" : "column", host_);
  (rows ? row_names_ : col_names_) = std::move(names);
}

std::vector<uint8_t> Writer::encode(const void* data, size_t size) {
  // Encoded into a pooled bound-sized buffer, then copied out at its exact
  // size: pending blocks hold no slack.
  sdk::BufferPool::Lease buffer = encode_buffers_.take(codec_.bound(size));
  const size_t n = codec_.encode(data, size, buffer.data(), buffer->size());
  return std::vector<uint8_t>(buffer.data(), buffer.data() + n);
}

void Writer::write_block(uint64_t block, const void* data, size_t size) {
  if (block >= offset_.size())
    sdk::invalid(block_name(block) + ": out of range (" + std::to_string(offset_.size()) +
                 " blocks)");
  const size_t expected =
      static_cast<size_t>(rows_in_block(footer_, block)) * static_cast<size_t>(footer_.cols) * 8;
  if (size != expected)
    sdk::invalid(block_name(block) + ": got " + std::to_string(size) + " bytes, expected " +
                 std::to_string(expected));
  std::vector<uint8_t> encoded = encode(data, size);
  std::lock_guard<std::mutex> lock(mutex_);
  written_above_ = std::max(written_above_, block + 1);
  if (block < next_) {
    // Already in the file: append the new version; commit() compacts.
    append_locked(block, encoded);
    relocated_ = true;
    return;
  }
  auto [it, inserted] = pending_.try_emplace(block);
  if (!inserted) pending_bytes_ -= it->second.size();
  pending_bytes_ += encoded.size();
  it->second = std::move(encoded);
  flush_ready_locked();
  if (pending_bytes_ > max_pending_bytes_) spill_pending_locked();
}

// Appends the blocks that are next in order, as long as a later block has
// been written (a sign the writer moved past them).
void Writer::flush_ready_locked() {
  while (next_ + 1 < written_above_) {
    auto it = pending_.find(next_);
    if (it != pending_.end()) {
      append_locked(next_, it->second);
      pending_bytes_ -= it->second.size();
      pending_.erase(it);
    } else if (!in_file_[next_]) {
      return;  // still waiting for it
    }
    ++next_;
  }
}

// Too much is waiting for an earlier block: write it all out of order now.
void Writer::spill_pending_locked() {
  for (const auto& [block, encoded] : pending_) append_locked(block, encoded);
  pending_.clear();
  pending_bytes_ = 0;
  relocated_ = true;
}

void Writer::append_locked(uint64_t block, const std::vector<uint8_t>& encoded) {
  size_[block] = encoded.size();
  offset_[block] = file_->append(encoded.data(), encoded.size());
  in_file_[block] = true;
}

bool Writer::read_block(uint64_t block, void* out, size_t size) {
  if (block >= offset_.size())
    sdk::invalid(block_name(block) + ": out of range (" + std::to_string(offset_.size()) +
                 " blocks)");
  std::vector<uint8_t> encoded;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = pending_.find(block);
    if (it != pending_.end()) {
      encoded = it->second;
    } else if (in_file_[block]) {
      encoded.resize(size_[block]);
      file_->read_at(encoded.data(), encoded.size(), offset_[block]);
    } else {
      return false;
    }
  }
  decode_container(encoded.data(), encoded.size(), codec_, kFlagLz4Frame, out, size,
                   [&] { return block_name(block) + " (being written)"; });
  return true;
}

bool Writer::has_block(uint64_t block) {
  std::lock_guard<std::mutex> lock(mutex_);
  return block < in_file_.size() && (in_file_[block] || pending_.count(block));
}

std::vector<uint8_t> Writer::fill_block(uint64_t block) {
  const size_t count =
      static_cast<size_t>(rows_in_block(footer_, block)) * static_cast<size_t>(footer_.cols);
  uint64_t bits;
  std::memcpy(&bits, &fill_value_, 8);
  std::vector<uint64_t> values(count + 1, 0);
  for (size_t i = 0; i < count; ++i) sdk::store_be<uint64_t>(&values[i], bits);
  return encode(values.data(), count * 8);
}

// Copies the live version of every block, in block order, into a new file.
void Writer::compact() {
  auto fresh = std::make_unique<ScratchFile>(storage_, paths_.matrix);
  std::vector<uint8_t> buffer;
  for (uint64_t b = 0; b < offset_.size(); ++b) {
    buffer.resize(size_[b]);
    file_->read_at(buffer.data(), buffer.size(), offset_[b]);
    offset_[b] = fresh->append(buffer.data(), buffer.size());
  }
  file_ = std::move(fresh);
  relocated_ = false;
}

namespace {

std::vector<std::string> default_names(const char* prefix, int64_t count) {
  std::vector<std::string> names;
  names.reserve(static_cast<size_t>(count));
  for (int64_t i = 1; i <= count; ++i) names.push_back(prefix + std::to_string(i));
  return names;
}

}  // namespace

void Writer::commit() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (uint64_t b = next_; b < offset_.size(); ++b) {
    auto it = pending_.find(b);
    if (it != pending_.end())
      append_locked(b, it->second);
    else if (!in_file_[b])
      append_locked(b, fill_block(b));
  }
  pending_.clear();
  if (relocated_) compact();

  // The index: one container of big-endian absolute block offsets.
  std::vector<uint8_t> index(offset_.size() * 8 + 1);
  for (size_t b = 0; b < offset_.size(); ++b) sdk::store_be<uint64_t>(&index[8 * b], offset_[b]);
  const std::vector<uint8_t> encoded_index = encode(index.data(), offset_.size() * 8);
  footer_.index_offset = file_->append(encoded_index.data(), encoded_index.size());
  const std::string strings = encode_metadata(metadata_);
  footer_.metadata_offset = file_->append(strings.data(), strings.size());
  footer_.created_seconds =
      created_seconds_ ? *created_seconds_ : static_cast<int64_t>(std::time(nullptr));
  const auto footer = encode_footer(footer_);
  file_->append(footer.data(), footer.size());

  if (!row_names_) row_names_ = default_names("row", footer_.rows);
  if (!col_names_) col_names_ = default_names("col", footer_.cols);
  const std::string rows_gz = encode_name_file(*row_names_);
  const std::string cols_gz = encode_name_file(*col_names_);
  // sha256sum's format, as the reference writer has done since 2025-08.
  const auto line = [](const std::string& hex, const std::string& path) {
    return hex + "  " + path.substr(path.find_last_of('/') + 1) + "\n";
  };
  const std::string sums_path = paths_.base + ".sha256";
  const std::string checksums = line(file_->sha256_hex(), paths_.matrix) +
                                line(sha256_hex(rows_gz), paths_.rows) +
                                line(sha256_hex(cols_gz), paths_.cols);
  // The four files change together: the matrix first (its journal, beside
  // it, is the commit point that the next open completes if this process
  // dies half-way), so readers see the old dataset or the new, whole.
  std::vector<sdk::Staged> set;
  set.push_back(std::move(file_->staged()));
  const std::pair<const std::string*, const std::string*> others[] = {
      {&paths_.rows, &rows_gz}, {&paths_.cols, &cols_gz}, {&sums_path, &checksums}};
  for (const auto& [path, bytes] : others) {
    set.push_back(storage_.stage(*path));
    set.back().append(*bytes);
  }
  storage_.publish(set);
}

}  // namespace datg
