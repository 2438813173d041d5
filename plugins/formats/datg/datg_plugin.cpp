// Format "datg": the systemsgenetics row-compressed double matrix
// (<base>.datg + <base>.rows.txt.gz + <base>.cols.txt.gz).
//
// In the data model the dataset is one 2-D float64 array at the root node "":
// shape [rows, cols], one chunk per block of rows ([rows_per_block, cols]),
// big-endian values (the host swaps). Row and column names are the hidden
// string nodes "rows" and "cols", referenced from "dims". The three metadata
// strings and the creation time are attributes.
#include "datg_layout.hpp"
#include "datg_names.hpp"
#include "datg_reader.hpp"
#include "datg_writer.hpp"

#include <stowage/plugin_json.hpp>
#include <stowage/plugin_util.hpp>
#include <stowage/storage.hpp>

#include <nlohmann/json.hpp>

#include <memory>
#include <mutex>

namespace {

namespace sdk = stowage::sdk;
using nlohmann::json;

// Attribute keys of the metadata strings and the creation time.
constexpr const char* kDatasetName = "dataset_name";
constexpr const char* kRowEntity = "row_entity";
constexpr const char* kColumnEntity = "column_entity";
constexpr const char* kCreated = "created_epoch_seconds";
// Hidden string nodes holding the labels.
constexpr const char* kRowsNode = "rows";
constexpr const char* kColsNode = "cols";

std::string string_attribute(const json& attributes, const char* key) {
  const json& v = attributes.at(key);
  if (!v.is_string()) sdk::invalid(std::string("datg attribute \"") + key + "\" must be a string");
  return v.get<std::string>();
}

// Takes the metadata strings from user attributes. datg has no room for any
// other attribute: those are refused (UNSUPPORTED, naming them), so nothing
// is lost unnoticed; stowage::copy drops them only when asked to.
datg::Metadata metadata_from(const json& attributes, datg::Metadata metadata) {
  if (attributes.is_null()) return metadata;
  if (!attributes.is_object()) sdk::invalid("datg: \"attributes\" must be a JSON object");
  std::string others;
  for (auto it = attributes.begin(); it != attributes.end(); ++it) {
    const std::string& key = it.key();
    if (key == kDatasetName)
      metadata.dataset_name = string_attribute(attributes, kDatasetName);
    else if (key == kRowEntity)
      metadata.row_entity = string_attribute(attributes, kRowEntity);
    else if (key == kColumnEntity)
      metadata.column_entity = string_attribute(attributes, kColumnEntity);
    else if (key != kCreated)  // kept by keep_created()
      others += (others.empty() ? "'" : ", '") + key + "'";
  }
  if (!others.empty())
    sdk::unsupported(std::string("datg keeps only the attributes ") + kDatasetName + ", " +
                     kRowEntity + ", " + kColumnEntity + " and " + kCreated + ", not " + others);
  return metadata;
}

// A given creation time is kept (so conversions round-trip); else the writer stamps now.
void keep_created(const json& attributes, datg::Writer& writer) {
  if (!attributes.is_object() || !attributes.contains(kCreated)) return;
  const json& v = attributes[kCreated];
  if (!v.is_number_integer())
    sdk::invalid(std::string("datg attribute \"") + kCreated + "\" must be an integer");
  writer.set_created_seconds(v.get<int64_t>());
}

// Entity names may also come as dimension names (e.g. from another format).
datg::Metadata entities_from_dims(const json& description, datg::Metadata metadata) {
  if (!description.contains("dims") || !description["dims"].is_array()) return metadata;
  const json& dims = description["dims"];
  const auto dim_name = [&](size_t i) -> std::string {
    if (dims.size() <= i || !dims[i].is_object() || !dims[i].contains("name") ||
        !dims[i]["name"].is_string())
      return {};
    return dims[i]["name"].get<std::string>();
  };
  if (metadata.row_entity.empty()) metadata.row_entity = dim_name(0);
  if (metadata.column_entity.empty()) metadata.column_entity = dim_name(1);
  return metadata;
}

int64_t json_count(const json& j, const char* what) {
  if (!j.is_number_integer() || j.get<int64_t>() < 0)
    sdk::invalid(std::string("datg: ") + what + " must be a non-negative integer, got " + j.dump());
  return j.get<int64_t>();
}

// The footer layout (rows, cols, rows per block) a description asks for,
// checked against the reference writer's limits.
datg::Footer layout_from(const json& d, const sdk::Host& host) {
  if (d.contains("kind") && d["kind"] != "array")
    sdk::unsupported("datg stores one dense array, not a " + d["kind"].dump());
  if (d.contains("dtype") && d["dtype"] != "float64")
    sdk::unsupported("datg stores only float64 values, not " + d["dtype"].dump());
  if (!d.contains("shape") || !d["shape"].is_array() || d["shape"].size() != 2)
    sdk::invalid("datg: \"shape\" must be [rows, cols]");
  datg::Footer f;
  f.rows = json_count(d["shape"][0], "the row count");
  f.cols = json_count(d["shape"][1], "the column count");
  if (f.cols > datg::kMaxWriterColumns)
    sdk::invalid("datg: " + std::to_string(f.cols) +
                 " columns; the datg specification allows "
                 "writers at most 4,194,304");
  if (f.rows > datg::kMaxWriterRows)
    sdk::invalid("datg: " + std::to_string(f.rows) + " rows; the datg writer allows at most " +
                 std::to_string(datg::kMaxWriterRows));
  f.rows_per_block = datg::default_rows_per_block(f.cols);
  if (d.contains("chunks") && !d["chunks"].is_null()) {
    const json& c = d["chunks"];
    if (!c.is_array() || c.size() != 2)
      sdk::invalid("datg: \"chunks\" must be [rows_per_block, cols], got " + c.dump());
    if (json_count(c[1], "the chunk width") == std::max<int64_t>(f.cols, 1)) {
      f.rows_per_block = json_count(c[0], "rows per block");
      if (f.rows_per_block < 1 || f.rows_per_block > INT32_MAX)
        sdk::invalid("datg: rows per block must be 1.." + std::to_string(INT32_MAX));
    } else {
      // Another format's tiles (e.g. from a conversion): datg blocks are whole rows.
      host.log(STOWAGE_LOG_INFO, "datg blocks are whole rows: chunks " + c.dump() + " become [" +
                                     std::to_string(f.rows_per_block) + ", " +
                                     std::to_string(f.cols) + "]");
    }
  }
  if (d.contains("codec") && !d["codec"].is_null() &&
      !(d["codec"].is_object() && d["codec"].value("type", "") == "lz4"))
    host.log(STOWAGE_LOG_WARNING,
             "datg always compresses with LZ4 frames; codec " + d["codec"].dump() + " is not used");
  if (f.rows_per_block * std::max<int64_t>(f.cols, 1) * 8 > datg::kMaxBlockBytes)
    sdk::invalid("datg: a block of " + std::to_string(f.rows_per_block) + " rows of " +
                 std::to_string(f.cols) + " doubles exceeds the writer's 2,000,000,000 bytes");
  return f;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The footer's last 4 bytes, of a file of `size` bytes whose tail is `tail`.
bool has_datg_magic(std::string_view tail, uint64_t size) {
  return size >= datg::kFooterSize && tail.size() >= 4 && tail.substr(tail.size() - 4) == "UMCG";
}
bool has_datg_magic(const sdk::Storage& storage, const std::string& path, uint64_t size) {
  return size >= datg::kFooterSize && has_datg_magic(storage.read(path, size - 4, 4).text(), size);
}

// The journal a set publish leaves beside its first file while it renames
// (named in stowage/storage.h: ".<name>.stowage-commit").
std::string commit_journal_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  const size_t name = slash == std::string::npos ? 0 : slash + 1;
  return path.substr(0, name) + "." + path.substr(name) + ".stowage-commit";
}

// Rows per chunk: the footer's rows per block, but never more than the rows
// there are (same chunk grid; a huge bogus value must not size host buffers).
int64_t chunk_rows(const datg::Footer& f) {
  return std::max<int64_t>(1, std::min(f.rows_per_block, f.rows));
}

class DatgStore : public sdk::Store {
 public:
  static int32_t identify(const sdk::Probe& probe) {
    const std::string_view path = probe.path();
    if (probe.is_directory()) return 0;
    if (probe.is_file() && ends_with(path, ".datg"))
      return has_datg_magic(probe.trailer(), probe.size()) ? 100 : 10;
    if (probe.is_file()) return 0;  // a file named by its own name is not a base name
    // A base name ("x" for x.datg), or a .datg a killed writer left as a
    // journal: ask the storage.
    const datg::DatasetPaths paths(path);
    try {
      const sdk::Storage storage = sdk::Storage::for_location(probe.host(), paths.matrix);
      if (storage.is_file(commit_journal_of(paths.matrix))) return 100;  // open() finishes it
      uint64_t size = 0;
      if (storage.kind(paths.matrix, &size) != STOWAGE_ENTRY_FILE) return 0;
      const int32_t named = ends_with(path, ".datg") ? 100 : 90;  // base name given: less sure
      return has_datg_magic(storage, paths.matrix, size) ? named : 10;
    } catch (const sdk::Error&) {
      return 0;  // unreadable here: some other format's, or an error open() reports
    }
  }

  static std::unique_ptr<sdk::Store> open(const sdk::Host& host, std::string_view path,
                                          uint32_t mode, std::string_view options) {
    datg::DatasetPaths paths(path);
    const sdk::Storage storage = sdk::Storage::for_location(host, paths.matrix);
    // A writer killed while renaming its four files into place: finish its
    // commit, so this store sees its matrix whole.
    storage.recover(paths.matrix);
    const bool exists = storage.exists(paths.matrix);
    auto store = std::make_unique<DatgStore>(storage, paths);
    store->max_pending_bytes_ = max_pending_bytes(options, paths.matrix);
    if (mode == STOWAGE_MODE_TRUNCATE || (mode == STOWAGE_MODE_CREATE && !exists))
      store->writable_ = true;
    else
      store->reader_ = std::make_unique<datg::Reader>(storage, paths, host);
    return store;
  }

  DatgStore(const sdk::Storage& storage, datg::DatasetPaths paths)
      : storage_(storage), paths_(std::move(paths)) {}

  std::vector<std::string> list(std::string_view node) override {
    check_root(node);
    return {};  // the root is the array; the label nodes are hidden
  }

  std::string describe(std::string_view node) override {
    if (node == kRowsNode || node == kColsNode) {
      const int64_t count = node == kRowsNode ? footer().rows : footer().cols;
      return json{{"kind", "strings"}, {"shape", {count}}, {"attributes", json::object()}}.dump();
    }
    check_root(node);
    const datg::Footer& f = footer();
    const datg::Metadata& m = reader_ ? reader_->metadata() : writer_->metadata();
    json attributes = {{kDatasetName, m.dataset_name},
                       {kRowEntity, m.row_entity},
                       {kColumnEntity, m.column_entity}};
    if (reader_) attributes[kCreated] = f.created_seconds;
    const uint8_t flag = reader_ ? reader_->flag() : datg::kFlagLz4Frame;
    return json{{"kind", "array"},
                {"dtype", "float64"},
                {"shape", {f.rows, f.cols}},
                {"chunks", {chunk_rows(f), std::max<int64_t>(f.cols, 1)}},
                {"byte_order", "big"},
                {"order", "C"},
                {"codec", json::parse(datg::codec_config_for_flag(flag))},
                {"fill_value", reader_ ? 0.0 : writer_->fill_value()},
                {"attributes", attributes},
                {"dims",
                 {{{"name", m.row_entity}, {"labels", kRowsNode}},
                  {{"name", m.column_entity}, {"labels", kColsNode}}}}}
        .dump();
  }

  void create(std::string_view node, std::string_view text) override {
    must_be_writable("create");
    check_root(node);
    if (writer_) sdk::invalid(paths_.matrix + ": the datg array was already created");
    const json d = sdk::parse_json_object<json>(text, paths_.matrix + ": the create description");
    datg::Metadata metadata =
        metadata_from(d.contains("attributes") ? d["attributes"] : json(), datg::Metadata{});
    metadata = entities_from_dims(d, metadata);
    double fill = 0;
    if (d.contains("fill_value") && d["fill_value"].is_number())
      fill = d["fill_value"].get<double>();
    writer_ = std::make_unique<datg::Writer>(storage_, paths_, host(), layout_from(d, host()),
                                             metadata, fill, max_pending_bytes_);
    if (d.contains("attributes")) keep_created(d["attributes"], *writer_);
  }

  void set_attributes(std::string_view node, std::string_view text) override {
    check_root(node);
    recording_failure([&] {
      const datg::Writer& w = writer("set_attributes");
      const json attributes = sdk::parse_json_object<json>(text, paths_.matrix + ": attributes");
      writer_->set_metadata(metadata_from(attributes, w.metadata()));
      keep_created(attributes, *writer_);
    });
  }

  // The array at the root; the row and column labels as strings nodes.
  std::unique_ptr<sdk::Node> open_node(std::string_view node) override;

  bool read_chunk(const uint64_t* index, void* out, size_t capacity, uint64_t* chunk_shape) {
    const uint64_t block = checked_block(index);
    chunk_shape[0] = static_cast<uint64_t>(datg::rows_in_block(footer(), block));
    chunk_shape[1] = static_cast<uint64_t>(footer().cols);
    if (reader_) {
      reader_->read_block(block, out, capacity);
      return true;
    }
    const size_t size = chunk_shape[0] * chunk_shape[1] * 8;
    if (capacity < size) sdk::invalid(paths_.matrix + ": read_chunk buffer too small");
    return writer_->read_block(block, out, size);
  }

  void write_chunk(const uint64_t* index, const void* in, size_t size,
                   const uint64_t* chunk_shape) {
    recording_failure([&] {
      writer("write_chunk");
      const uint64_t block = checked_block(index);
      if (chunk_shape[0] != static_cast<uint64_t>(datg::rows_in_block(footer(), block)) ||
          chunk_shape[1] != static_cast<uint64_t>(footer().cols))
        sdk::invalid(paths_.matrix + ": write_chunk: chunk " + std::to_string(block) +
                     " must be the whole block of rows");
      writer_->write_block(block, in, size);
    });
  }

  // A file holds every block; a file being written, those written so far.
  bool chunk_exists(const uint64_t* index) {
    const uint64_t block = checked_block(index);
    return reader_ ? true : writer_->has_block(block);
  }

  void read_strings(bool rows, uint64_t begin, uint64_t end, const sdk::ItemFn& item) {
    if (reader_) {
      const datg::NameList& names = rows ? reader_->row_names() : reader_->col_names();
      for (uint64_t i = begin; i < clip(begin, end, names.size()); ++i)
        item(names[i].data(), names[i].size());
      return;
    }
    const auto& names = writer("read_strings").names(rows);
    if (!names)
      sdk::fail(STOWAGE_NOT_FOUND,
                paths_.matrix + ": " + (rows ? kRowsNode : kColsNode) + " not written yet");
    for (uint64_t i = begin; i < clip(begin, end, names->size()); ++i)
      item((*names)[i].data(), (*names)[i].size());
  }

  void write_strings(std::string_view node, const std::vector<std::string_view>& values) override {
    recording_failure([&] {
      const bool rows = label_node(node);
      writer("write_strings");
      writer_->set_names(rows, std::vector<std::string>(values.begin(), values.end()));
    });
  }

  void close() override {
    if (!writer_) return;  // reading, or nothing was ever created
    std::unique_ptr<datg::Writer> writer = std::move(writer_);
    if (!first_error_.empty())
      sdk::fail(STOWAGE_IO,
                paths_.matrix + ": not written, an earlier write failed: " + first_error_);
    writer->commit();
  }

 private:
  const datg::Footer& footer() const {
    if (reader_) return reader_->footer();
    if (!writer_)
      sdk::fail(STOWAGE_NOT_FOUND, paths_.matrix + ": the datg array is not created yet");
    return writer_->footer();
  }

  void check_root(std::string_view node) const {
    sdk::split_node_path(node);  // "..", absolute or empty components: INVALID_ARGUMENT
    if (!node.empty())
      sdk::fail(STOWAGE_NOT_FOUND, paths_.matrix + ": no node '" + std::string(node) +
                                       "' (a datg store holds one array, at the root \"\")");
  }

  bool label_node(std::string_view node) const {
    if (node == kRowsNode) return true;
    if (node == kColsNode) return false;
    sdk::fail(STOWAGE_NOT_FOUND, paths_.matrix + ": no string node '" + std::string(node) +
                                     "' (the labels are \"rows\" and \"cols\")");
  }

  uint64_t checked_block(const uint64_t* index) const {
    const uint64_t blocks = datg::block_count(footer().rows, footer().rows_per_block);
    if (index[0] >= blocks || index[1] != 0)
      sdk::invalid(paths_.matrix + ": chunk [" + std::to_string(index[0]) + ", " +
                   std::to_string(index[1]) + "] out of range (" + std::to_string(blocks) +
                   " blocks of whole rows)");
    return index[0];
  }

  static uint64_t clip(uint64_t begin, uint64_t end, uint64_t size) {
    if (begin > size)
      sdk::invalid("datg: string range starts at " + std::to_string(begin) + " beyond the " +
                   std::to_string(size) + " names");
    return std::min(end, size);
  }

  void must_be_writable(const char* op) const {
    if (!writable_)
      sdk::unsupported(paths_.matrix + ": " + op +
                       ": a datg file cannot be changed in place; "
                       "write a new one (open mode \"w\")");
  }

  datg::Writer& writer(const char* op) const {
    must_be_writable(op);
    if (!writer_) sdk::invalid(paths_.matrix + ": " + op + " before create(\"\")");
    return *writer_;
  }

  // Runs a write operation; a failure is remembered so close() writes nothing.
  template <class Fn>
  void recording_failure(Fn&& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (first_error_.empty()) first_error_ = e.what();
      throw;
    }
  }

  // The "max_pending_bytes" open option (see Writer).
  static uint64_t max_pending_bytes(std::string_view options, const std::string& file) {
    if (options.empty()) return datg::Writer::kDefaultMaxPendingBytes;
    const json o = sdk::parse_json_object<json>(options, file + ": the open options");
    if (!o.contains("max_pending_bytes")) return datg::Writer::kDefaultMaxPendingBytes;
    return static_cast<uint64_t>(json_count(o["max_pending_bytes"], "max_pending_bytes"));
  }

  sdk::Storage storage_;  // the backend of paths_.matrix
  datg::DatasetPaths paths_;
  uint64_t max_pending_bytes_ = datg::Writer::kDefaultMaxPendingBytes;
  bool writable_ = false;
  std::unique_ptr<datg::Reader> reader_;
  std::unique_ptr<datg::Writer> writer_;
  std::mutex error_mutex_;
  std::string first_error_;
};

class DatgArray final : public sdk::ArrayNode {
 public:
  explicit DatgArray(DatgStore& store) : store_(store) {}
  bool read_chunk(const uint64_t* index, void* out, size_t capacity,
                  uint64_t* chunk_shape) override {
    return store_.read_chunk(index, out, capacity, chunk_shape);
  }
  void write_chunk(const uint64_t* index, const void* in, size_t size,
                   const uint64_t* chunk_shape) override {
    store_.write_chunk(index, in, size, chunk_shape);
  }
  bool chunk_exists(const uint64_t* index) override { return store_.chunk_exists(index); }

 private:
  DatgStore& store_;
};

class DatgLabels final : public sdk::StringsNode {
 public:
  DatgLabels(DatgStore& store, bool rows) : store_(store), rows_(rows) {}
  void read(uint64_t begin, uint64_t end, const sdk::ItemFn& item) override {
    store_.read_strings(rows_, begin, end, item);
  }

 private:
  DatgStore& store_;
  bool rows_;
};

std::unique_ptr<sdk::Node> DatgStore::open_node(std::string_view node) {
  if (node == kRowsNode || node == kColsNode)
    return std::make_unique<DatgLabels>(*this, node == kRowsNode);
  check_root(node);
  footer();  // NOT_FOUND before create()
  return std::make_unique<DatgArray>(*this);
}

const char* const kExtensions[] = {".datg", nullptr};

}  // namespace

STOWAGE_DEFINE_FORMAT_PLUGIN(
    DatgStore, "datg", "1.0.0",
    "systemsgenetics row-compressed double matrix (.datg + .rows.txt.gz + .cols.txt.gz)",
    R"({"max_pending_bytes": {"type": "integer", "default": 268435456, "min": 0}})",
    STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE | STOWAGE_CAP_PARTIAL |
        STOWAGE_CAP_DENSE | STOWAGE_CAP_STRINGS,
    kExtensions)
