// Writing a datadings dataset byte for byte as datadings' FileWriter does,
// but atomically: nothing appears under the final names before close(),
// which publishes the six files as one set through the storage layer.
#include "dataset.hpp"

#include <unordered_set>

namespace datadings {

using stowage::sdk::fail;
using stowage::sdk::invalid;
using stowage::sdk::store_be;

namespace {

// Samples are gathered into blocks of this size before each write().
constexpr size_t write_block = 4u << 20;

std::string offsets_file(const std::vector<uint64_t>& offsets) {
  std::string out(8 * offsets.size(), '\0');
  for (size_t i = 0; i < offsets.size(); ++i) store_be<uint64_t>(out.data() + 8 * i, offsets[i]);
  return out;
}

// msgpack.pack(list_of_str): one array of str (msgpack-python's encoding).
std::string keys_file(const KeyList& keys) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> packer(buffer);
  packer.pack_array(static_cast<uint32_t>(keys.size()));
  for (size_t i = 0; i < keys.size(); ++i) {
    std::string_view key = keys[i];
    packer.pack_str(static_cast<uint32_t>(key.size()));
    packer.pack_str_body(key.data(), static_cast<uint32_t>(key.size()));
  }
  return std::string(buffer.data(), buffer.size());
}

// 8-byte salt, then each key's hash big-endian.
std::string key_hashes_file(const HashIndex& index) {
  std::string out(8 + 8 * index.hashes().size(), '\0');
  std::memcpy(out.data(), index.salt(), 8);
  for (size_t i = 0; i < index.hashes().size(); ++i)
    store_be<uint64_t>(out.data() + 8 + 8 * i, index.hashes()[i]);
  return out;
}

// datadings sizes the filter for max(2, N) keys with simplebloom's default p = 1/n.
std::string filter_file(const KeyList& keys) {
  uint64_t n = std::max<uint64_t>(2, keys.size());
  BloomFilter filter(n, 1.0 / static_cast<double>(n));
  for (size_t i = 0; i < keys.size(); ++i) filter.add(keys[i]);
  return filter.serialize();
}

std::string md5_of(const std::string& bytes) {
  Md5 md5;
  md5.update(bytes.data(), bytes.size());
  return md5.hex();
}

}  // namespace

Writer::Writer(const stowage::sdk::Storage& storage, const std::string& data_path)
    : storage_(storage), paths_(data_path) {
  if (storage_.is_directory(paths_.data))
    invalid(paths_.data + ": is a directory; a datadings dataset is named by its data file");
  try {
    data_ = storage_.stage(paths_.data);
  } catch (const stowage::sdk::Error& e) {
    // The error may name the temporary file; say which dataset it was for.
    fail(e.code() == STOWAGE_NOT_FOUND ? STOWAGE_IO : e.code(),
         paths_.data + ": cannot create the dataset (" + e.what() + ")");
  }
  buffer_.reserve(write_block);
}

std::string Writer::check_batch(uint64_t count, const void* const* records, const uint64_t* sizes,
                                std::vector<std::string_view>& batch_keys) const {
  // msgpack arrays (the .keys file) hold at most 2^32-1 entries.
  if (count > UINT32_MAX - 1 - keys_.size())
    return "a datadings dataset holds fewer than 2^32 samples";
  std::unordered_set<std::string_view> seen;
  for (uint64_t i = 0; i < count; ++i) {
    std::string where = "record " + std::to_string(i) + " of this append";
    std::string_view sample(static_cast<const char*>(records[i]), sizes[i]);
    SampleKey found = scan_sample(sample);
    if (!found.error.empty()) return where + " " + found.error;
    std::string_view key = found.key;
    where += " (key '" + std::string(key) + "')";
    if (!is_utf8(key)) return where + ": the key is not valid UTF-8";
    auto existing = index_.find(std::string(key));
    if (existing != index_.end())
      return where + ": duplicate key, already used by sample " + std::to_string(existing->second);
    if (!seen.insert(key).second) return where + ": duplicate key within this append";
    batch_keys.push_back(key);
  }
  return {};
}

void Writer::append(uint64_t count, const void* const* records, const uint64_t* sizes) {
  if (committed_) fail(STOWAGE_INVALID_ARGUMENT, paths_.data + ": the dataset is closed");
  if (failed_) fail(STOWAGE_IO, paths_.data + ": an earlier write failed; the dataset cannot grow");
  std::vector<std::string_view> batch_keys;
  batch_keys.reserve(count);
  std::string error = check_batch(count, records, sizes, batch_keys);
  if (!error.empty()) invalid(paths_.data + ": " + error + "; nothing of this append was written");
  try {
    for (uint64_t i = 0; i < count; ++i) {
      write_data(records[i], sizes[i]);
      offsets_.push_back(data_size_);
      index_.emplace(std::string(batch_keys[i]), keys_.size());
      keys_.push_back(batch_keys[i]);
    }
  } catch (...) {
    failed_ = true;
    throw;
  }
}

void Writer::write_data(const void* data, size_t size) {
  data_md5_.update(data, size);
  data_size_ += size;
  if (buffer_.size() + size > write_block) flush();
  if (size >= write_block) {
    data_.append(data, size);
  } else {
    buffer_.append(static_cast<const char*>(data), size);
  }
}

void Writer::flush() {
  data_.append(buffer_.data(), buffer_.size());
  buffer_.clear();
}

std::string_view Writer::key(uint64_t index) const {
  if (index >= keys_.size())
    invalid(paths_.data + ": sample " + std::to_string(index) + " is out of range for " +
            std::to_string(keys_.size()) + " samples");
  return keys_[index];
}

std::optional<uint64_t> Writer::find(std::string_view key) const {
  auto it = index_.find(std::string(key));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

void Writer::commit() {
  if (committed_) return;
  if (failed_) fail(STOWAGE_IO, paths_.data + ": an earlier write failed; nothing was written");
  flush();
  committed_ = true;

  // Every index file is complete in a staged file before the publish.
  std::string contents[4] = {offsets_file(offsets_), keys_file(keys_),
                             key_hashes_file(HashIndex::for_keys(keys_)), filter_file(keys_)};
  const std::string* names[4] = {&paths_.offsets, &paths_.keys, &paths_.key_hashes, &paths_.filter};
  // datadings' md5 order: data, offsets, keys, key_hashes, filter.
  std::string md5_text = data_md5_.hex() + "  " + base_name(paths_.data) + "\n";
  // The six files change together: the storage publishes them as one set
  // (locally, a journal beside the data file whose renames the next opener
  // finishes if this process dies half-way).
  std::vector<stowage::sdk::Staged> files;
  files.push_back(std::move(data_));
  for (int i = 0; i < 4; ++i) {
    md5_text += md5_of(contents[i]) + "  " + base_name(*names[i]) + "\n";
    files.push_back(storage_.stage(*names[i]));
    files.back().append(contents[i]);
  }
  files.push_back(storage_.stage(paths_.md5));
  files.back().append(md5_text);
  storage_.publish(files);
  // A legacy index left from a dataset we replaced would describe old data.
  storage_.remove_if_exists(paths_.legacy_index, 0);
}

}  // namespace datadings
