// Format "datadings": a datadings dataset (X.msgpack and its index files) as
// one record set at the root node "". Samples cross the plugin boundary as
// their msgpack bytes.
//
// Open modes: read and update read an existing dataset (datadings datasets
// are written once, so update cannot append); truncate writes a new one,
// replacing what was there at close(); create writes a new one unless the
// dataset exists, which it then opens for reading.
// Before plugin.hpp, which defaults it to "".
#define STOWAGE_PLUGIN_BUILD_EXTRA ", msgpack-cxx " MSGPACK_VERSION ", libb2, libmd"

#include "dataset.hpp"

#include <stowage/plugin.hpp>
#include <stowage/plugin_json.hpp>
#include <stowage/plugin_util.hpp>
#include <stowage/storage.hpp>

namespace {

using datadings::Reader;
using datadings::Writer;
using json = nlohmann::ordered_json;
namespace sdk = stowage::sdk;

class DatadingsStore : public sdk::Store {
 public:
  static int32_t identify(const sdk::Probe& probe) {
    if (probe.is_directory()) return 0;
    // Every sample is a msgpack map: a file starting otherwise is not a
    // dataset, and needs no look at its siblings.
    if (probe.is_file() && !probe.header().empty() && !starts_with_msgpack_map(probe.header()))
      return 0;
    std::string path(probe.path());
    try {
      sdk::Storage storage = sdk::Storage::for_location(probe.host(), path);
      if (storage.is_file(journal_of(path))) return 100;  // open() finishes it
      if (!probe.is_file()) return 0;
      datadings::DatasetPaths paths(path);
      return storage.is_file(paths.offsets) || storage.is_file(paths.legacy_index) ? 100 : 0;
    } catch (const sdk::Error&) {  // not readable here: not ours
      return 0;
    }
  }

  // msgpack's fixmap (0x80-0x8f), map 16 (0xde) or map 32 (0xdf).
  static bool starts_with_msgpack_map(std::string_view header) {
    const auto first = static_cast<uint8_t>(header[0]);
    return (first & 0xf0) == 0x80 || first == 0xde || first == 0xdf;
  }

  // The journal a set publish leaves beside its first file until done
  // (stowage/storage.h: ".<name>.stowage-commit").
  static std::string journal_of(const std::string& path) {
    size_t slash = path.rfind('/');
    size_t at = slash == std::string::npos ? 0 : slash + 1;
    return path.substr(0, at) + "." + path.substr(at) + ".stowage-commit";
  }

  static std::unique_ptr<sdk::Store> open(const sdk::Host& host, std::string_view path_view,
                                          uint32_t mode, std::string_view options) {
    std::string path(path_view);
    bool use_map = map_option(path, options);
    sdk::Storage storage = sdk::Storage::for_location(host, path);
    // A writer killed while publishing its six files: finish its commit, so
    // this store sees its dataset whole.
    storage.recover(path);
    auto store = std::make_unique<DatadingsStore>();
    bool write =
        mode == STOWAGE_MODE_TRUNCATE || (mode == STOWAGE_MODE_CREATE && !storage.is_file(path));
    if (mode > STOWAGE_MODE_TRUNCATE)
      sdk::invalid(path + ": unknown open mode " + std::to_string(mode));
    if (write)
      store->writer_ = std::make_unique<Writer>(storage, path);
    else
      store->reader_ = std::make_unique<Reader>(storage, path, host, use_map);
    store->path_ = path;
    return store;
  }

  // Whether samples are read from a read-only map of the data file (the
  // default, where the storage maps files: it saves pread's copy,
  // docs/performance.md) or with ranged reads ("mmap": false, for a dataset that another
  // program, such as datadings' own writer, may rewrite in place while it is
  // being read).
  static bool map_option(const std::string& path, std::string_view options) {
    if (options.empty()) return true;
    json o = sdk::parse_json_object(options, path + ": the open options");
    if (!o.contains("mmap")) return true;
    if (!o["mmap"].is_boolean())
      sdk::invalid(path + ": open option \"mmap\" must be true or false");
    return o["mmap"].get<bool>();
  }

  void close() override {
    if (writer_) writer_->commit();
  }

  std::vector<std::string> list(std::string_view node) override {
    root(node);
    return {};
  }

  std::string describe(std::string_view node) override {
    root(node);
    json j = {{"kind", "records"}, {"attributes", json::object()}, {"count", count()}};
    if (reader_) j["index"] = reader_->legacy() ? "legacy" : "new";
    return j.dump();
  }

  void create(std::string_view node, std::string_view description) override {
    root(node);
    if (!writer_)
      sdk::unsupported(path_ + ": the dataset exists; open it with mode truncate to rewrite it");
    json j = sdk::parse_json_object(description, path_ + ": the node description");
    if (j.value("kind", "") != "records")
      sdk::unsupported(path_ + ": a datadings dataset holds one record set, not a '" +
                       j.value("kind", "") + "' node");
    if (j.contains("attributes") && !j["attributes"].empty())
      sdk::unsupported(path_ + ": datadings has no place for attributes");
  }

  // The record set at the root (DatadingsRecords below).
  std::unique_ptr<sdk::Node> open_node(std::string_view node) override;

  // ---- the record set ----

  void read_records(uint64_t begin, uint64_t end, const sdk::ItemFn& item) {
    reading("").read(begin, end, item);
  }

  std::string record_key(uint64_t index) {
    return std::string(writer_ ? writer_->key(index) : reader_->key(index));
  }

  std::optional<uint64_t> find_key(std::string_view key) {
    return writer_ ? writer_->find(key) : reader_->find(key);
  }

  // The reader checks the Bloom filter of every key before it looks any up.
  void contains_keys(uint64_t count, const char* const* keys, const uint64_t* key_sizes,
                     uint8_t* present) {
    if (reader_) return reader_->contains(count, keys, key_sizes, present);
    for (uint64_t i = 0; i < count; ++i)
      present[i] = writer_->find(std::string_view(keys[i], key_sizes[i])).has_value() ? 1 : 0;
  }

  void append_records(uint64_t count, const void* const* records, const uint64_t* sizes) {
    if (!writer_)
      sdk::unsupported(path_ +
                       ": datadings datasets are written once; open with mode "
                       "truncate (or create, for a new path) to write a dataset");
    writer_->append(count, records, sizes);
  }

  uint64_t count() { return writer_ ? writer_->count() : reader_->count(); }

  // "verify": md5 lines vs files. "filter_contains" {"key"}: the Bloom
  // filter's answer alone. "key_hash" {"key"}: the salted hash datadings
  // looks the key up with.
  std::string command(std::string_view node, std::string_view name,
                      std::string_view args_json) override {
    Reader& reader = reading(node);
    if (name == "verify") return reader.verify().dump();
    if (name == "filter_contains") {
      std::optional<bool> maybe = reader.filter_maybe(key_argument(args_json, name));
      return json{{"maybe", maybe ? json(*maybe) : json(nullptr)}}.dump();
    }
    if (name == "key_hash") {
      const datadings::HashIndex& index = reader.hash_index();
      uint8_t be[8];
      sdk::store_be<uint64_t>(be, index.hash(key_argument(args_json, name)));
      return json{{"hash", datadings::to_hex(be, 8)}, {"salt", datadings::to_hex(index.salt(), 8)}}
          .dump();
    }
    sdk::unsupported(path_ + ": datadings has no command '" + std::string(name) +
                     "' (known: verify, filter_contains, key_hash)");
  }

 private:
  void root(std::string_view node) const {
    sdk::split_node_path(node);  // "..", absolute or empty components: INVALID_ARGUMENT
    if (!node.empty())
      sdk::fail(STOWAGE_NOT_FOUND, path_ + ": no node '" + std::string(node) +
                                       "'; a datadings dataset is one record set at the root \"\"");
  }
  Reader& reading(std::string_view node) const {
    root(node);
    if (!reader_)
      sdk::unsupported(path_ + ": the dataset is being written; it can be read after close()");
    return *reader_;
  }
  std::string key_argument(std::string_view args_json, std::string_view command) const {
    json args = json::parse(args_json.begin(), args_json.end(), nullptr, false);
    if (args.is_discarded() || !args.is_object() || !args.contains("key") ||
        !args["key"].is_string())
      sdk::invalid(path_ + ": command '" + std::string(command) +
                   "' takes {\"key\": \"<string>\"}");
    return args["key"].get<std::string>();
  }

  std::string path_;
  std::unique_ptr<Reader> reader_;
  std::unique_ptr<Writer> writer_;
};

class DatadingsRecords final : public sdk::RecordsNode {
 public:
  explicit DatadingsRecords(DatadingsStore& store) : store_(store) {}
  uint64_t count() override { return store_.count(); }
  void read(uint64_t begin, uint64_t end, const sdk::ItemFn& item) override {
    store_.read_records(begin, end, item);
  }
  std::string key(uint64_t index) override { return store_.record_key(index); }
  std::optional<uint64_t> find_key(std::string_view key) override { return store_.find_key(key); }
  void contains_keys(uint64_t count, const char* const* keys, const uint64_t* key_sizes,
                     uint8_t* present) override {
    store_.contains_keys(count, keys, key_sizes, present);
  }
  void append(uint64_t count, const void* const* records, const uint64_t* sizes) override {
    store_.append_records(count, records, sizes);
  }

 private:
  DatadingsStore& store_;
};

std::unique_ptr<sdk::Node> DatadingsStore::open_node(std::string_view node) {
  root(node);
  return std::make_unique<DatadingsRecords>(*this);
}

const char* const extensions[] = {".msgpack", nullptr};

}  // namespace

STOWAGE_DEFINE_FORMAT_PLUGIN(DatadingsStore, "datadings", "1.0.0",
                             "datadings msgpack sample datasets (offsets, keys, key hashes, "
                             "Bloom filter, md5; legacy .msgpack.index read)",
                             R"({"mmap": {"type": "boolean", "default": true}})",
                             STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE |
                                 STOWAGE_CAP_PARTIAL | STOWAGE_CAP_RECORDS,
                             extensions)
