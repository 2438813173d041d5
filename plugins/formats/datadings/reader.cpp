// Reading a datadings dataset lazily, the way datadings' MsgpackReader does.
#include "dataset.hpp"

#include <algorithm>

namespace datadings {

using stowage::sdk::corrupt;
using stowage::sdk::fail;
using stowage::sdk::invalid;
using stowage::sdk::load_be;

namespace {

// Samples read per request in sequential ranged reads (at least one sample).
constexpr uint64_t batch_bytes = 4u << 20;

// MD5 of a whole file, read in blocks of 4 MiB into one buffer.
std::string md5_file(const stowage::sdk::Storage& storage, const std::string& path) {
  Md5 md5;
  PageChars block(batch_bytes);
  uint64_t got = 0;
  for (uint64_t at = 0;; at += got) {
    if (!storage.read_into_if_exists(path, at, block.data(), block.size(), &got))
      fail(STOWAGE_NOT_FOUND, path + ": no such file");
    md5.update(block.data(), got);
    if (got < block.size()) break;
  }
  return md5.hex();
}

// Asks for the next sample (its first 16 KiB) while the caller handles this
// one: the map's pages are 4 KiB and the hardware prefetcher stops at each
// page end (figures in docs/performance.md).
void prefetch(const char* p, uint64_t size) {
  for (uint64_t at = 0; at < std::min<uint64_t>(size, 16 << 10); at += 64)
    __builtin_prefetch(p + at);
}

}  // namespace

BufferPool::Lease BufferPool::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  PageChars buffer;
  if (!free_.empty()) {
    buffer = std::move(free_.back());
    free_.pop_back();
  }
  return Lease(*this, std::move(buffer));
}

void BufferPool::give_back(PageChars buffer) {
  if (buffer.size() > 4 * batch_bytes) return;  // after a huge sample: let it go
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.size() < 4) free_.push_back(std::move(buffer));
}

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

DatasetPaths::DatasetPaths(std::string data_path)
    : data(std::move(data_path)),
      offsets(data + ".offsets"),
      keys(data + ".keys"),
      key_hashes(data + ".key_hashes"),
      filter(data + ".filter"),
      md5(data + ".md5"),
      legacy_index(data + ".index") {
  size_t slash = data.rfind('/');
  directory = slash == std::string::npos ? "" : data.substr(0, slash + 1);
}

// ---- HashIndex ---------------------------------------------------------------------

HashIndex::HashIndex(const uint8_t salt[8], std::vector<uint64_t> hashes)
    : hasher_(salt), hashes_(std::move(hashes)), table_(hashes_) {}

HashIndex HashIndex::for_keys(const KeyList& keys) {
  // datadings gives up after 1000 salts; only duplicate keys get that far.
  for (unsigned attempt = 0; attempt < 1000; ++attempt) {
    uint8_t salt[8];
    salt_for_attempt(attempt, salt);
    KeyHasher hasher(salt);
    std::vector<uint64_t> hashes(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) hashes[i] = hasher(keys[i]);
    HashIndex index(salt, std::move(hashes));
    std::optional<uint64_t> later = index.first_duplicate();
    if (!later) return index;
    // Equal keys collide under every salt: say so at once rather than
    // hashing everything a thousand times.
    uint64_t earlier = *index.find_hash(index.hashes()[*later]);
    if (keys[earlier] == keys[*later])
      corrupt("samples " + std::to_string(earlier) + " and " + std::to_string(*later) +
              " have the same key '" + std::string(keys[*later]) + "'");
  }
  corrupt("no salt in 1000 tries gives distinct key hashes");
}

// ---- Reader: opening and lazy loading ---------------------------------------------

Reader::Reader(const stowage::sdk::Storage& storage, const std::string& data_path,
               const stowage::sdk::Host& host, bool use_map)
    : storage_(storage), paths_(data_path), use_map_(use_map && storage.can(STOWAGE_CAP_MAP)) {
  // In place only where that is a map: over HTTP it would download the whole
  // data file before the first sample.
  const int32_t kind = storage_.kind(paths_.data, &data_size_);
  if (kind == STOWAGE_ENTRY_ABSENT) fail(STOWAGE_NOT_FOUND, paths_.data + ": no such file");
  if (kind != STOWAGE_ENTRY_FILE)
    invalid(paths_.data + ": is a directory; a datadings dataset is named by its data file");
  if (storage_.is_file(paths_.offsets)) {
    legacy_ = false;
  } else if (storage_.is_file(paths_.legacy_index)) {
    legacy_ = true;
  } else {
    fail(STOWAGE_NOT_FOUND, paths_.data + ": neither " + base_name(paths_.offsets) + " nor " +
                                base_name(paths_.legacy_index) +
                                " exists beside it; not a datadings dataset");
  }
  if (!legacy_) {
    for (const std::string* p : {&paths_.keys, &paths_.key_hashes, &paths_.filter})
      if (!storage_.is_file(*p))
        host.log(STOWAGE_LOG_WARNING, *p + " is missing; lookups by key are slower");
  }
}

uint64_t Reader::count() {
  count_once_([this] { load_count(); });
  return count_;
}

void Reader::load_count() {
  // Like datadings, read only the container header of the keys (or legacy
  // index) file; without a keys file, the offsets file size tells.
  const std::string& source = legacy_ ? paths_.legacy_index : paths_.keys;
  char prefix[5];
  uint64_t n = 0, size = 0;
  if (storage_.read_into_if_exists(source, 0, prefix, sizeof prefix, &n, &size)) {
    std::optional<uint64_t> count = container_count(std::string_view(prefix, n), legacy_);
    if (!count)
      corrupt(source + ": does not start with a msgpack " + (legacy_ ? "map" : "array") +
              " header");
    // Each key takes at least 1 byte (and each legacy entry 2).
    if (*count > size / (legacy_ ? 2 : 1))
      corrupt(source + ": declares " + std::to_string(*count) + (legacy_ ? " entries" : " keys") +
              " in " + std::to_string(size) + " bytes");
    count_ = *count;
    return;
  }
  if (legacy_) fail(STOWAGE_NOT_FOUND, source + ": no such file");
  size = storage_.size(paths_.offsets);
  if (size < 8 || size % 8 != 0)
    corrupt(paths_.offsets + ": " + std::to_string(size) +
            " bytes is not a whole number (at least 1) of 8-byte offsets");
  count_ = size / 8 - 1;
}

const std::vector<uint64_t>& Reader::offsets() {
  if (legacy_)
    keys_once_([this] { load_legacy_index(); });
  else
    offsets_once_([this] { load_offsets(); });
  return offsets_;
}

const KeyList& Reader::keys() {
  keys_once_([this] { legacy_ ? load_legacy_index() : load_keys(); });
  return keys_;
}

void Reader::load_offsets() {
  uint64_t n = count();
  stowage::sdk::Bytes bytes = read_whole(paths_.offsets);
  uint64_t size = bytes.size();
  if (size != 8 * (n + 1))
    corrupt(paths_.offsets + ": holds " + std::to_string(size / 8) + " offsets (" +
            std::to_string(size) + " bytes) but " + base_name(paths_.keys) + " declares " +
            std::to_string(n) + " keys, which need " + std::to_string(n + 1) +
            " (keys count mismatch)");
  std::vector<uint64_t> offsets(n + 1);
  for (uint64_t i = 0; i <= n; ++i) offsets[i] = load_be<uint64_t>(bytes.data() + 8 * i);
  offsets_ = std::move(offsets);
  check_offsets(paths_.offsets);
}

void Reader::check_offsets(const std::string& source) {
  if (offsets_.front() != 0)
    corrupt(source + ": the first sample starts at offset " + std::to_string(offsets_.front()) +
            ", not 0");
  for (size_t i = 1; i < offsets_.size(); ++i) {
    if (offsets_[i] > data_size_)
      corrupt(source + ": offset " + std::to_string(i) + " (" + std::to_string(offsets_[i]) +
              ") is past the end of " + base_name(paths_.data) + " (" + std::to_string(data_size_) +
              " bytes)");
    if (offsets_[i] <= offsets_[i - 1])
      corrupt(source + ": offsets are not increasing: offset " + std::to_string(i) + " is " +
              std::to_string(offsets_[i]) + " after " + std::to_string(offsets_[i - 1]));
  }
  if (offsets_.back() != data_size_)
    corrupt(source + ": the last sample ends at " + std::to_string(offsets_.back()) + " but " +
            base_name(paths_.data) + " has " + std::to_string(data_size_) + " bytes");
}

void Reader::load_keys() {
  std::optional<stowage::sdk::Bytes> bytes = storage_.read_if_exists(paths_.keys);
  if (!bytes)
    fail(STOWAGE_NOT_FOUND, paths_.keys + ": no such file; the dataset's keys are unknown");
  KeyList keys;
  ScanError error = parse_keys(bytes->text(), keys);
  if (!error.empty()) corrupt(paths_.keys + ": " + error);
  if (keys.size() != count())
    corrupt(paths_.keys + ": holds " + std::to_string(keys.size()) + " keys, expected " +
            std::to_string(count()));
  keys_ = std::move(keys);
}

void Reader::load_legacy_index() {
  stowage::sdk::Bytes bytes = read_whole(paths_.legacy_index);
  KeyList keys;
  std::vector<uint64_t> offsets;
  ScanError error = parse_legacy_index(bytes.text(), keys, offsets);
  if (!error.empty()) corrupt(paths_.legacy_index + ": " + error);
  // The legacy index has start offsets only; the data file size ends the last.
  offsets.push_back(data_size_);
  offsets_ = std::move(offsets);
  if (offsets_.size() > 1)
    check_offsets(paths_.legacy_index);
  else if (data_size_ != 0)
    corrupt(paths_.legacy_index + ": lists no samples but " + base_name(paths_.data) + " has " +
            std::to_string(data_size_) + " bytes");
  keys_ = std::move(keys);
}

const HashIndex& Reader::hash_index() {
  hashes_once_([this] { load_hashes(); });
  return *hashes_;
}

void Reader::load_hashes() {
  std::optional<stowage::sdk::Bytes> bytes;
  if (!legacy_) bytes = storage_.read_if_exists(paths_.key_hashes);
  if (!bytes) {
    // datadings recomputes salt and hashes from the keys.
    try {
      hashes_ = std::make_unique<HashIndex>(HashIndex::for_keys(keys()));
    } catch (const stowage::sdk::Error& e) {
      fail(e.code(), (legacy_ ? paths_.legacy_index : paths_.keys) + ": " + e.what());
    }
    return;
  }
  uint64_t n = count();
  uint64_t size = bytes->size();
  if (size != 8 + 8 * n)
    corrupt(paths_.key_hashes + ": is " + std::to_string(size) + " bytes, but a salt and " +
            std::to_string(n) + " hashes need " + std::to_string(8 + 8 * n) +
            " (keys count mismatch)");
  std::vector<uint64_t> hashes(n);
  for (uint64_t i = 0; i < n; ++i) hashes[i] = load_be<uint64_t>(bytes->data() + 8 + 8 * i);
  auto index = std::make_unique<HashIndex>(bytes->data(), std::move(hashes));
  if (index->first_duplicate())
    corrupt(paths_.key_hashes + ": sample " + std::to_string(*index->first_duplicate()) +
            " has the same hash as an earlier sample (hashes must be distinct)");
  hashes_ = std::move(index);
}

const BloomFilter* Reader::filter() {
  filter_once_([this] { load_filter(); });
  return filter_.get();
}

void Reader::load_filter() {
  if (legacy_) return;
  std::optional<stowage::sdk::Bytes> bytes = storage_.read_if_exists(paths_.filter);
  if (!bytes) return;
  filter_ =
      std::make_unique<BloomFilter>(BloomFilter::parse(std::string(bytes->text()), paths_.filter));
}

// ---- Reader: access ------------------------------------------------------------------

[[noreturn]] void Reader::bad_sample(uint64_t index, const std::string& what) {
  const std::vector<uint64_t>& off = offsets();
  corrupt(paths_.data + ": sample " + std::to_string(index) + " (bytes " +
          std::to_string(off[index]) + ".." + std::to_string(off[index + 1]) + ") is " + what);
}

void Reader::read(uint64_t begin, uint64_t end, const stowage::sdk::ItemFn& item) {
  uint64_t n = count();
  if (begin > end || end > n)
    invalid(paths_.data + ": samples [" + std::to_string(begin) + ", " + std::to_string(end) +
            ") are out of range for " + std::to_string(n) + " samples");
  if (begin == end) return;
  const std::vector<uint64_t>& off = offsets();
  const unsigned char* mapped = map();
  if (!mapped) return read_ranges(begin, end, item);
  require_data_until(off[end], data_size_now());
  const char* base = reinterpret_cast<const char*>(mapped);
  for (uint64_t i = begin; i < end; ++i) {
    if (i + 1 < end) prefetch(base + off[i + 1], off[i + 2] - off[i + 1]);
    give(i, std::string_view(base + off[i], off[i + 1] - off[i]), item);
  }
}

// As many whole samples as fit the batch, at least one, in one ranged read
// (a preadv for a local file) into a buffer of the pool.
void Reader::read_ranges(uint64_t begin, uint64_t end, const stowage::sdk::ItemFn& item) {
  const std::vector<uint64_t>& off = offsets();
  BufferPool::Lease buffer = buffers_.take();
  for (uint64_t first = begin; first < end;) {
    uint64_t last = first + 1;
    while (last < end && off[last + 1] - off[first] <= batch_bytes) ++last;
    const uint64_t want = off[last] - off[first];
    // The samples land at the offset in a page they have in the page cache,
    // so the kernel's copy never stores just ahead of its loads (4K aliasing).
    const uint64_t lead = off[first] % stowage::sdk::PageAlignedAllocator<char>::kPage;
    char* bytes = buffer.get(lead + want) + lead;
    uint64_t got = 0, now = 0;
    if (!storage_.read_into_if_exists(paths_.data, off[first], bytes, want, &got, &now))
      fail(STOWAGE_NOT_FOUND,
           paths_.data + ": no such file (it was there when the dataset was opened)");
    require_data_until(off[end], now);
    if (got != want) require_data_until(off[first] + want, off[first] + got);
    for (uint64_t i = first; i < last; ++i)
      give(i, std::string_view(bytes + (off[i] - off[first]), off[i + 1] - off[i]), item);
    first = last;
  }
}

void Reader::give(uint64_t index, std::string_view sample, const stowage::sdk::ItemFn& item) {
  ScanError error = check_one_object(sample);
  if (!error.empty()) bad_sample(index, error);
  item(sample.data(), sample.size());
}

// The data file held by the storage for reading in place: a read-only map
// (only asked for where the storage maps files). Null when it is empty: the
// ranged reads then find nothing to read either.
const unsigned char* Reader::map() {
  if (!use_map_) return nullptr;
  map_once_([this] {
    if (data_size_ > 0) map_ = storage_.map_watched(paths_.data);
  });
  return map_.data();
}

// The data file's size now: one fstat through the map's descriptor
// (Storage::view_size), else a stat of its key.
uint64_t Reader::data_size_now() const {
  if (std::optional<uint64_t> n = storage_.view_size(map_)) return *n;
  return storage_.size(paths_.data);
}

stowage::sdk::Bytes Reader::read_whole(const std::string& path) const {
  std::optional<stowage::sdk::Bytes> bytes = storage_.read_if_exists(path);
  if (!bytes) fail(STOWAGE_NOT_FOUND, path + ": no such file");
  return std::move(*bytes);
}

// The offsets were checked against the size at open. A data file cut short
// since (rewritten in place, as datadings' own writer does) would make a
// read through the map kill the process with SIGBUS (so the size is asked
// for before each read from the map: one fstat); a ranged read would find
// the end early (it reports the size with the bytes). Either way the answer
// is this error. A file cut while a read runs is not caught: the "mmap":
// false open option is for that case.
void Reader::require_data_until(uint64_t end, uint64_t now) {
  if (now < end)
    corrupt(paths_.data + ": file is truncated: " + std::to_string(now) + " bytes now, " +
            std::to_string(data_size_) + " when the dataset was opened");
}

std::string_view Reader::key(uint64_t index) {
  const KeyList& k = keys();
  if (index >= k.size())
    invalid(paths_.data + ": sample " + std::to_string(index) + " is out of range for " +
            std::to_string(k.size()) + " samples");
  return k[index];
}

std::optional<uint64_t> Reader::find(std::string_view key) { return hash_index().find(key); }

const FingerprintTable& Reader::presence() {
  presence_once_([this] { load_presence(); });
  return *presence_;
}

void Reader::load_presence() {
  const KeyList& k = keys();
  std::vector<uint64_t> fingerprints(k.size());
  for (size_t i = 0; i < k.size(); ++i) fingerprints[i] = presence_fingerprint(key_digest(k[i]));
  presence_ = std::make_unique<FingerprintTable>(fingerprints);
}

std::optional<bool> Reader::filter_maybe(std::string_view key) {
  const BloomFilter* f = filter();
  if (!f) return std::nullopt;
  return f->maybe_contains(key);
}

// datadings confirms the filter's "maybe" with its salted hash table, a
// second BLAKE2s of the key. Here the one unsalted digest the filter needs
// also gives a 64-bit fingerprint (digest bytes 16..23) looked up in a table
// of all keys' fingerprints, built on first use (one BLAKE2s a key). The
// answers are datadings': both trust 64 bits of a BLAKE2s digest.
bool Reader::contains(std::string_view key) {
  KeyDigest digest = key_digest(key);
  uint64_t fingerprint = presence_fingerprint(digest);
  const FingerprintTable& table = presence();
  table.prefetch(fingerprint);  // its cache miss overlaps the filter's probes
  const BloomFilter* f = filter();
  if (f && !f->maybe_contains(digest)) return false;
  return table.contains(fingerprint);
}

void Reader::contains(uint64_t count, const char* const* keys, const uint64_t* sizes,
                      uint8_t* present) {
  const FingerprintTable& table = presence();
  const BloomFilter* f = filter();
  // One key deep: key i is hashed and its filter bits and table slot asked
  // for from memory, then key i-1, whose bits have arrived meanwhile, is
  // tested.
  BloomFilter::Probe probes[2];
  uint64_t fingerprints[2];
  for (uint64_t i = 0; i <= count; ++i) {
    if (i < count) {
      KeyDigest digest = key_digest(std::string_view(keys[i], sizes[i]));
      fingerprints[i & 1] = presence_fingerprint(digest);
      table.prefetch(fingerprints[i & 1]);
      if (f) f->probe(digest, probes[i & 1]);
    }
    if (i > 0) {
      uint64_t j = i - 1;
      present[j] = (!f || f->test(probes[j & 1])) && table.contains(fingerprints[j & 1]);
    }
  }
}

// ---- verify ------------------------------------------------------------------------------

nlohmann::ordered_json Reader::verify() {
  using json = nlohmann::ordered_json;
  std::optional<stowage::sdk::Bytes> md5s = storage_.read_if_exists(paths_.md5);
  if (!md5s) fail(STOWAGE_NOT_FOUND, paths_.md5 + ": no such file; nothing to verify against");
  if (md5s->size() > (1u << 20)) corrupt(paths_.md5 + ": file is more than the 1 MiB allowed");
  std::string text(md5s->text());
  json files = json::array();
  std::vector<std::string> differs;
  size_t line_no = 0;
  for (size_t start = 0; start < text.size();) {
    size_t eol = text.find('\n', start);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(start, eol - start);
    start = eol + 1;
    ++line_no;
    if (line.empty()) continue;
    // md5sum text format, as datadings writes it: "<32 hex>  <base name>".
    size_t sep = line.find("  ");
    std::string expected = line.substr(0, sep);
    std::string name = sep == std::string::npos ? "" : line.substr(sep + 2);
    bool hex_ok = expected.size() == 32 &&
                  expected.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (!hex_ok || name.empty() || name.find('/') != std::string::npos)
      corrupt(paths_.md5 + ": line " + std::to_string(line_no) +
              " is not '<32 hex digits>  <file name>'");
    json entry = {{"file", name}, {"expected", expected}};
    std::string path = paths_.directory + name;
    if (storage_.is_file(path)) {
      std::string actual = md5_file(storage_, path);
      entry["actual"] = actual;
      entry["ok"] = actual == expected;
    } else {
      entry["actual"] = nullptr;
      entry["ok"] = false;
      entry["error"] = "missing";
    }
    if (!entry["ok"].get<bool>()) differs.push_back(name);
    files.push_back(std::move(entry));
  }
  std::string message =
      "all " + std::to_string(files.size()) + " files match " + base_name(paths_.md5);
  if (!differs.empty()) {
    message = "";
    for (const std::string& name : differs) message += (message.empty() ? "" : ", ") + name;
    message += (differs.size() == 1 ? " differs from its md5 in " : " differ from their md5 in ") +
               base_name(paths_.md5);
  }
  return json{
      {"ok", differs.empty()}, {"differs", differs}, {"message", message}, {"files", files}};
}

}  // namespace datadings
