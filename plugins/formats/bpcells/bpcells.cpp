// Format "bpcells": a BPCells matrix directory (bnprks/BPCells) as one sparse
// matrix at the root node "". Its row and column names are the hidden string
// nodes "row_names" and "col_names", referenced from describe()'s "dims".
//
//   reader.cpp   opens and validates a directory, reads ranges of majors
//   writer.cpp   streams a new directory (v2) and moves it into place
//   bp128.cpp    the BP-128 codecs (SIMD and scalar)
//   files.cpp    the numeric (magic + elements) and text files
// All I/O goes through the storage layer (sdk::Storage of the path's
// scheme): a local directory, mem://, or http:// (read only).
#include "reader.hpp"
#include "writer.hpp"

#include <stowage/plugin.hpp>
#include <stowage/plugin_json.hpp>
#include <stowage/plugin_util.hpp>
#include <stowage/storage.hpp>

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace stowage::bpcells {

namespace {

using json = nlohmann::ordered_json;

constexpr std::string_view kRowNames = "row_names";
constexpr std::string_view kColNames = "col_names";

bool is_label_node(std::string_view node) { return node == kRowNames || node == kColNames; }

Element element_for_dtype(const std::string& dtype, const std::string& where) {
  if (dtype == "uint32") return Element::uint32;
  if (dtype == "float32") return Element::float32;
  if (dtype == "float64") return Element::float64;
  if (dtype == "uint64") return Element::uint64;
  sdk::unsupported(
      where + ": BPCells stores uint32, float32 or float64 values (and uint64 unpacked), not " +
      dtype);
}

json dims_json(bool has_row_names, bool has_col_names) {
  auto labels = [](bool has, std::string_view path) { return has ? json(path) : json(nullptr); };
  return json::array({{{"name", "rows"}, {"labels", labels(has_row_names, kRowNames)}},
                      {{"name", "cols"}, {"labels", labels(has_col_names, kColNames)}}});
}

json matrix_json(const MatrixVersion& version, const std::string& version_text, bool row_major,
                 uint64_t rows, uint64_t cols, uint64_t nnz, json dims) {
  return {{"kind", "sparse"},
          {"dtype", MatrixVersion::dtype(version.value)},
          {"shape", {rows, cols}},
          {"layout", row_major ? "csr" : "csc"},
          {"nnz", nnz},
          {"attributes", json::object()},
          // How the matrix is stored, not what it means: kept by a copy into
          // BPCells, not carried into other formats as attributes.
          {"storage",
           {{"version", version_text},
            {"storage_order", row_major ? "row" : "col"},
            {"packed", version.packed}}},
          {"dims", std::move(dims)}};
}

class BPCellsStore : public sdk::Store {
 public:
  BPCellsStore(const sdk::Host& host, std::string path, uint32_t mode, json options)
      : storage_(sdk::Storage::for_location(host, path)),
        path_(std::move(path)),
        mode_(mode),
        options_(std::move(options)) {
    bool want_existing = mode_ == STOWAGE_MODE_READ || mode_ == STOWAGE_MODE_UPDATE;
    if (want_existing || (mode_ == STOWAGE_MODE_CREATE && storage_.exists(path_) &&
                          looks_like_matrix_dir(storage_, path_)))
      reader_ = std::make_unique<MatrixReader>(storage_, path_, map_files());
  }

  void close() override {
    if (writer_) writer_->commit();
    writer_.reset();
  }

  // ---- tree ----

  std::vector<std::string> list(std::string_view node) override {
    require_node(node);
    return {};  // the root is the matrix itself; its label nodes are hidden
  }

  std::string describe(std::string_view node) override {
    require_node(node);
    if (is_label_node(node))
      return json{
          {"kind", "strings"}, {"shape", {names(node).size()}}, {"attributes", json::object()}}
          .dump();
    if (writer_) {
      const MatrixSpec& s = writer_->spec();
      return matrix_json(s.version, s.version.text(), s.row_major, s.rows, s.cols, writer_->nnz(),
                         dims_json(true, true))
          .dump();
    }
    const MatrixReader& r = reader();
    return matrix_json(r.version(), r.version_text(), r.row_major(), r.rows(), r.cols(), r.nnz(),
                       dims_json(!r.row_names().empty(), !r.col_names().empty()))
        .dump();
  }

  void create(std::string_view node, std::string_view text) override {
    require_writable();
    json desc = sdk::parse_json_object(text, path_ + ": the create description");
    if (is_label_node(node)) {  // label nodes exist with the matrix; filled by write_strings
      if (desc.value("kind", "strings") != "strings")
        sdk::invalid(path_ + ": '" + std::string(node) + "' is reserved for the matrix's names");
      return;
    }
    if (!node.empty())
      sdk::invalid(path_ + ": a BPCells directory holds one matrix, at the root node \"\", not '" +
                   std::string(node) + "'");
    if (writer_) sdk::invalid(path_ + ": the matrix was already created");
    writer_ = std::make_unique<MatrixWriter>(storage_, path_, spec_from(desc));
    reader_.reset();
  }

  void set_attributes(std::string_view node, std::string_view text) override {
    require_node(node);
    json attrs = sdk::parse_json_object(text, path_ + ": attributes");
    if (!attrs.empty()) refuse_attributes(attrs);
  }

  // The matrix at the root, its row and column names as strings nodes;
  // each node serves through the store (BPCellsMatrix, BPCellsNames below).
  std::unique_ptr<sdk::Node> open_node(std::string_view node) override;

  // ---- sparse ----

  uint64_t sparse_count(std::string_view node, uint64_t begin, uint64_t end) {
    require_matrix(node);
    return reader().count(begin, end);
  }

  void read_sparse(std::string_view node, uint64_t begin, uint64_t end, uint64_t* indptr,
                   uint32_t* indices, void* values, uint64_t capacity) {
    require_matrix(node);
    reader().read(begin, end, indptr, indices, values, capacity);
  }

  void append_sparse(std::string_view node, uint64_t n_major, const uint64_t* indptr,
                     const uint32_t* indices, const void* values) {
    require_matrix(node);
    writer().append(n_major, indptr, indices, values);
  }

  // ---- names ----

  void read_strings(std::string_view node, uint64_t begin, uint64_t end, const sdk::ItemFn& item) {
    require_node(node);
    if (!is_label_node(node))
      sdk::invalid(path_ + ": the root node is a sparse matrix, not strings");
    const std::vector<std::string>& all = names(node);
    end = std::min<uint64_t>(end, all.size());
    if (begin > end)
      sdk::invalid(path_ + "/" + std::string(node) + ": range starts at " + std::to_string(begin) +
                   ", past the " + std::to_string(all.size()) + " names");
    for (uint64_t i = begin; i < end; ++i) item(all[i].data(), all[i].size());
  }

  void write_strings(std::string_view node, const std::vector<std::string_view>& values) override {
    if (!is_label_node(node))
      sdk::invalid(path_ + ": BPCells stores strings only as '" + std::string(kRowNames) +
                   "' and '" + std::string(kColNames) + "', not '" + std::string(node) + "'");
    writer().set_names(node == kRowNames, values);
  }

 private:
  void require_node(std::string_view node) const {
    sdk::split_node_path(node);  // refuses malformed paths
    if (!node.empty() && !is_label_node(node))
      sdk::fail(STOWAGE_NOT_FOUND,
                path_ + ": no node '" + std::string(node) +
                    "' (a BPCells directory holds one matrix at \"\" and its names)");
  }
  void require_matrix(std::string_view node) const {
    require_node(node);
    if (!node.empty())
      sdk::invalid(path_ + ": '" + std::string(node) + "' is a string array, not the matrix");
  }
  void require_writable() const {
    if (mode_ == STOWAGE_MODE_READ) sdk::invalid(path_ + ": opened read-only");
  }

  const MatrixReader& reader() const {
    if (writer_)
      sdk::unsupported(path_ + ": the matrix is being written; reopen it after close() to read it");
    if (!reader_) sdk::fail(STOWAGE_NOT_FOUND, path_ + ": no matrix yet (create \"\" first)");
    return *reader_;
  }
  MatrixWriter& writer() const {
    if (!writer_) {
      if (mode_ == STOWAGE_MODE_READ) sdk::invalid(path_ + ": opened read-only");
      sdk::invalid(path_ + ": create the matrix (node \"\") before writing its data or names");
    }
    return *writer_;
  }
  const std::vector<std::string>& names(std::string_view node) const {
    bool rows = node == kRowNames;
    if (writer_) return writer_->names(rows);
    return rows ? reader().row_names() : reader().col_names();
  }

  [[noreturn]] void refuse_attributes(const json& attrs) const {
    std::string keys;
    for (auto& [key, value] : attrs.items()) keys += (keys.empty() ? "'" : ", '") + key + "'";
    sdk::unsupported(path_ + ": BPCells directories hold no attributes (given " + keys + ")");
  }

  // Whether reads decode from read-only maps of the data files (the default,
  // where the storage maps files: faster than pread windows, docs/performance.md) or
  // through ranged reads ("mmap": false, for a file system where another
  // program may truncate files being read).
  bool map_files() const {
    if (!options_.contains("mmap")) return true;
    if (!options_["mmap"].is_boolean())
      sdk::invalid(path_ + ": open option \"mmap\" must be true or false");
    return options_["mmap"].get<bool>();
  }

  // Reads a create() description: kind "sparse", dtype, shape, layout and
  // whether to bit-pack (top-level "packed", else "storage": {"packed"} as
  // describe() gives it, else the open option, else BPCells' default: packed).
  MatrixSpec spec_from(const json& desc) const {
    std::string where = path_ + ": create";
    if (desc.value("kind", "") != "sparse")
      sdk::unsupported(where + ": BPCells directories hold sparse matrices, not '" +
                       desc.value("kind", "") + "'");
    if (!desc.contains("dtype") || !desc["dtype"].is_string())
      sdk::invalid(where + ": needs a \"dtype\"");
    const json& shape = desc.contains("shape") ? desc["shape"] : json();
    if (!shape.is_array() || shape.size() != 2 || !shape[0].is_number_unsigned() ||
        !shape[1].is_number_unsigned())
      sdk::invalid(where + ": needs \"shape\": [rows, cols]");
    std::string layout = desc.value("layout", "csc");
    if (layout != "csc" && layout != "csr")
      sdk::invalid(where + ": layout must be \"csc\" or \"csr\", not " + layout);

    MatrixSpec spec;
    spec.version.value = element_for_dtype(desc["dtype"].get<std::string>(), where);
    spec.rows = shape[0].get<uint64_t>();
    spec.cols = shape[1].get<uint64_t>();
    spec.row_major = layout == "csr";
    json attrs = desc.contains("attributes") && desc["attributes"].is_object() ? desc["attributes"]
                                                                               : json::object();
    if (!attrs.empty()) refuse_attributes(attrs);
    const json storage =
        desc.contains("storage") && desc["storage"].is_object() ? desc["storage"] : json::object();
    spec.version.packed = spec.version.value != Element::uint64;
    if (options_.contains("packed") && options_["packed"].is_boolean())
      spec.version.packed = options_["packed"];
    if (storage.contains("packed") && storage["packed"].is_boolean())
      spec.version.packed = storage["packed"];
    if (desc.contains("packed")) {
      if (!desc["packed"].is_boolean()) sdk::invalid(where + ": \"packed\" must be true or false");
      spec.version.packed = desc["packed"];
    }
    return spec;
  }

  sdk::Storage storage_;  // the backend of path_'s scheme
  std::string path_;
  uint32_t mode_;
  json options_;
  std::unique_ptr<MatrixReader> reader_;  // the matrix on disk, if any
  std::unique_ptr<MatrixWriter> writer_;  // the matrix being written, if any
};

class BPCellsMatrix final : public sdk::SparseNode {
 public:
  explicit BPCellsMatrix(BPCellsStore& store) : store_(store) {}
  uint64_t count(uint64_t begin, uint64_t end) override {
    return store_.sparse_count("", begin, end);
  }
  void read(uint64_t begin, uint64_t end, uint64_t* indptr, uint32_t* indices, void* values,
            uint64_t capacity) override {
    store_.read_sparse("", begin, end, indptr, indices, values, capacity);
  }
  void append(uint64_t n_major, const uint64_t* indptr, const uint32_t* indices,
              const void* values) override {
    store_.append_sparse("", n_major, indptr, indices, values);
  }

 private:
  BPCellsStore& store_;
};

class BPCellsNames final : public sdk::StringsNode {
 public:
  BPCellsNames(BPCellsStore& store, std::string node) : store_(store), node_(std::move(node)) {}
  void read(uint64_t begin, uint64_t end, const sdk::ItemFn& item) override {
    store_.read_strings(node_, begin, end, item);
  }

 private:
  BPCellsStore& store_;
  std::string node_;
};

std::unique_ptr<sdk::Node> BPCellsStore::open_node(std::string_view node) {
  describe(node);  // NOT_FOUND for other nodes, and for a matrix not yet created
  if (node.empty()) return std::make_unique<BPCellsMatrix>(*this);
  return std::make_unique<BPCellsNames>(*this, std::string(node));
}

class BPCellsFormat {
 public:
  static int32_t identify(const sdk::Probe& probe) {
    if (!probe.has_file("version")) return 0;  // no read unless it may be ours
    try {
      std::string p(probe.path());
      return looks_like_matrix_dir(sdk::Storage::for_location(probe.host(), p), p) ? 100 : 0;
    } catch (const sdk::Error&) {  // no storage for it: not ours
      return 0;
    }
  }
  static std::unique_ptr<sdk::Store> open(const sdk::Host& host, std::string_view path,
                                          uint32_t mode, std::string_view options) {
    if (path.empty()) sdk::invalid("bpcells: empty path");
    if (mode > STOWAGE_MODE_TRUNCATE)
      sdk::invalid(std::string(path) + ": unknown open mode " + std::to_string(mode));
    json opts = sdk::parse_json_object(options, std::string(path) + ": the open options");
    return std::make_unique<BPCellsStore>(host, std::string(path), mode, std::move(opts));
  }
};

}  // namespace
}  // namespace stowage::bpcells

// The file that makes a directory a BPCells matrix (identify looks for it).
static const char* const kBPCellsMetadata[] = {"version", nullptr};

STOWAGE_DEFINE_FORMAT_PLUGIN_WITH_METADATA(
    stowage::bpcells::BPCellsFormat, "bpcells", "1.0.0",
    "BPCells matrix directories (packed/unpacked uint, float, double; v1 and v2) with SIMD BP-128",
    R"({"packed": {"type": "boolean", "default": true}, "mmap": {"type": "boolean", "default": true}})",
    STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE | STOWAGE_CAP_PARTIAL |
        STOWAGE_CAP_SPARSE | STOWAGE_CAP_STRINGS,
    nullptr, kBPCellsMetadata)
