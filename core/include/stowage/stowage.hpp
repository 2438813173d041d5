// stowage/stowage.hpp -- the C++ API of libstowage.
//
//   Registry   finds plugins (stowage_codec_<id>.so, stowage_format_<id>.so,
//              stowage_storage_<scheme>.so), loads them on first use and
//              reports why one failed.
//   Codec      a bytes-to-bytes compressor created from N5's "compression" JSON.
//   Store      an open dataset: a tree of nodes (groups and arrays) with JSON
//              attributes. Four kinds of array share one data model:
//                Array    dense n-d, chunked; region I/O done here, in parallel
//                Sparse   CSC/CSR matrices (also readable as dense)
//                Strings  string arrays (names, axes)
//                Records  keyed msgpack samples (datadings)
//
// Every shape is in C order (slowest dimension first). Values are in the
// host's byte order. Errors are stowage::Error exceptions.
#ifndef STOWAGE_STOWAGE_HPP
#define STOWAGE_STOWAGE_HPP

#include <stowage/plugin.h>

#include <nlohmann/json.hpp>

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace stowage {

using json = nlohmann::ordered_json;

const char* version();

// ---- errors -------------------------------------------------------------------

enum class ErrorCode : int32_t {
  ok = STOWAGE_OK,
  not_found = STOWAGE_NOT_FOUND,
  missing = STOWAGE_MISSING,
  invalid_argument = STOWAGE_INVALID_ARGUMENT,
  corrupt = STOWAGE_CORRUPT,
  unsupported = STOWAGE_UNSUPPORTED,
  io = STOWAGE_IO,
  abi_mismatch = STOWAGE_ABI_MISMATCH,
  internal = STOWAGE_INTERNAL,
};
const char* error_code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, std::string message, std::string path = {}, std::string plugin = {});
  ErrorCode code() const noexcept { return code_; }
  const std::string& path() const noexcept { return path_; }      // the file or dataset
  const std::string& plugin() const noexcept { return plugin_; }  // e.g. "codec gzip"

 private:
  ErrorCode code_;
  std::string path_, plugin_;
};

// ---- element types ----------------------------------------------------------------

enum class DType : uint8_t {
  boolean,
  int8,
  int16,
  int32,
  int64,
  uint8,
  uint16,
  uint32,
  uint64,
  float32,
  float64,
  float16,    // IEEE binary16, as numpy's float16
  complex64,  // two float32, real part first, as numpy's complex64
  complex128  // two float64
};
size_t dtype_size(DType t);
const char* dtype_name(DType t);  // "bool", "int8", ..., "float64", "float16", "complex64", ...
// A float16 element: C++20 has no such type, so its bits (stowage/half.hpp converts them).
struct Float16 {
  uint16_t bits;
};
// Calls f(T{}) with the C++ element type of t (uint8_t for boolean, Float16,
// std::complex): one switch for every loop that must be written per element type.
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::boolean:
    case DType::uint8:
      return f(uint8_t{});
    case DType::int8:
      return f(int8_t{});
    case DType::int16:
      return f(int16_t{});
    case DType::uint16:
      return f(uint16_t{});
    case DType::int32:
      return f(int32_t{});
    case DType::uint32:
      return f(uint32_t{});
    case DType::int64:
      return f(int64_t{});
    case DType::uint64:
      return f(uint64_t{});
    case DType::float32:
      return f(float{});
    case DType::float16:
      return f(Float16{});
    case DType::complex64:
      return f(std::complex<float>{});
    case DType::complex128:
      return f(std::complex<double>{});
    case DType::float64:
      break;
  }
  return f(double{});
}
DType parse_dtype(std::string_view name);  // throws invalid_argument
bool dtype_is_float(DType t);              // float16, float32, float64
bool dtype_is_complex(DType t);            // complex64, complex128
bool dtype_is_signed(DType t);

// ---- plugins --------------------------------------------------------------------

enum class PluginState { available, loaded, failed, shadowed };
const char* plugin_state_name(PluginState s);

struct PluginInfo {
  std::string kind;  // "codec", "format" or "storage" (from the file name)
  std::string id;
  std::string path;
  PluginState state = PluginState::available;
  std::string reason;  // why it failed, or the path that shadows it
  // Known once loaded:
  uint32_t abi_version = 0;
  std::string version, build_info, params_schema, description;
  uint64_t capabilities = 0;
  std::vector<std::string> aliases, extensions;
  std::vector<std::string> metadata_files;  // a format's (stowage_plugin.metadata_files), in order
  std::string codec_kind;                   // a codec's: "bytes" (-> bytes) or "array" (-> array)
};
std::string capability_letters(uint64_t caps);  // "rwtp" style

struct LoadedPlugin;  // internal

// What `stowage-plugin-list --json` prints, for every front end (the tool,
// the Python package): one plugin's entry (detail adds build_info and
// params_schema), and the whole document {"stowage_version", "abi",
// "search_path", "plugins"} of `plugins` in the order given.
json plugin_info_json(const PluginInfo& plugin, bool detail = false);
class Registry;
json plugin_list_json(const Registry& registry, const std::vector<PluginInfo>& plugins);
// Sorts by kind, id, then state (the order the tools print).
void sort_plugins(std::vector<PluginInfo>& plugins);

class Codec;
class Store;
namespace detail {
struct CodecAccess;
}

class Registry {
 public:
  struct Options {
    std::vector<std::string> paths;  // searched first (API / --plugin-path)
    bool use_environment = true;     // STOWAGE_PLUGIN_PATH, STOWAGE_PLUGIN_PATH_ONLY
    bool use_default_dir = true;     // <libdir>/stowage/plugins-<ABI>
  };
  Registry();
  explicit Registry(Options options);
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // The process-wide registry (environment and default directory).
  static Registry& global();

  // Directories searched, in order, and whether each exists.
  std::vector<std::pair<std::string, bool>> search_path() const;
  // Every plugin file found (shadowed duplicates included); load=true loads
  // each so versions, capabilities and failures are known.
  std::vector<PluginInfo> plugins(bool load = false);
  // Info on the active plugin of a kind ("codec"/"format"/"storage") and id, or nullopt.
  std::optional<PluginInfo> find(std::string_view kind, std::string_view id);

  // A codec from its JSON config ({"type": "gzip", ...}). `context` names the
  // dataset that needs it, for the error when the codec is missing.
  Codec codec(const json& config, std::string_view context = {});
  Codec codec(std::string_view config_json, std::string_view context = {});
  Codec codec(const char* config_json, std::string_view context = {});
  Codec codec(const std::string& config_json, std::string_view context = {});
  // An array -> array codec (a filter: numcodecs' delta, shuffle, astype)
  // for chunks of `chunk` ({"dtype": numpy typestr, "shape": [...]});
  // Codec::encoded_chunk() tells what it encodes them into. A bytes ->
  // bytes codec here, or an array -> array one in codec(), is
  // INVALID_ARGUMENT naming its kind.
  Codec array_codec(std::string_view config_json, const json& chunk, std::string_view context = {});

  // Codec names in a format's codec registry (stowage_codec_vtable.names):
  // a dialect's entry ("numcodecs": {"id": ...}, "zarr3": {"name": ...,
  // "configuration": ...}) as the config of the codec plugin answering to
  // its name, with "type"; NOT_FOUND naming the name, the dialect and the
  // directories searched when none does. `item_size`: the array's element size.
  json codec_import(std::string_view dialect, const json& entry, uint64_t item_size,
                    std::string_view context = {});
  // A codec config ({"type": ...}) as the dialect's entry; UNSUPPORTED when
  // the codec has none.
  json codec_export(const json& config, std::string_view dialect, uint64_t item_size);

  // Ids of the format plugins and their identify() scores for a path.
  std::vector<std::pair<std::string, int32_t>> identify(const std::string& path);
  // The format of a path: the best identify() score (an error if none or a tie).
  std::string detect_format(const std::string& path);
  // Format id for a file name extension (".n5"), from the plugins' descriptors.
  std::optional<std::string> format_for_extension(const std::string& path);

  // Low level: the loaded descriptor of a plugin (throws not_found with the
  // directories searched and any recorded failure).
  const stowage_plugin* load(std::string_view kind, std::string_view id,
                             std::string_view context = {});
  const stowage_host* host() const;
  // The storage backend serving a location, by its scheme ("file" for a
  // path, "http", "mem"...), loaded and opened on first use; owned by the
  // registry. stowage/storage.hpp's sdk::Storage wraps it.
  struct StorageBackend {
    const stowage_storage_vtable* vtable;
    stowage_storage_handle handle;
    uint64_t capabilities;
  };
  StorageBackend storage(std::string_view location);
  // Storage options (the backend's params_schema: timeouts, retries,
  // headers, credentials) for every location starting with `location` (its
  // files, and those a format finds beside it: "x.datg" for "x") while
  // the returned handle lives: storage() then serves them from a backend
  // instance opened with those options (one per scheme and options). An
  // unknown option or a bad value is INVALID_ARGUMENT naming the valid ones
  // (a secret's value never shown); empty options bind nothing. Store::open
  // binds its options' "storage" object this way, stowage::copy the source's
  // and the destination's; the innermost binding of a location wins.
  std::shared_ptr<void> bind_storage_options(const std::string& location, const json& options);
  // Serves `location` and every location under it (past a '/') from
  // `layer`, a storage table the host puts over the location's own backend
  // (core/src/metadata_last.hpp), while the returned handle lives.
  std::shared_ptr<void> bind_storage_layer(const std::string& location, StorageBackend layer);

  // Worker threads for region I/O (default: hardware concurrency).
  void set_threads(unsigned n);
  unsigned threads() const;

  // Where the messages that this registry's plugins log go (level: a
  // stowage_log_level). Unset: standard error, from STOWAGE_LOG's level
  // (default warning) up. Each registry has its own host table, so a plugin
  // loaded by two registries logs to each one's sink.
  using LogSink = std::function<void(int level, std::string_view message)>;
  void set_log_sink(LogSink sink);
  // Sends one message as a plugin's log() does.
  void log(int level, std::string_view message) const;

 private:
  Codec make_codec(std::string_view config_json, const json* chunk, std::string_view context);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- codecs ------------------------------------------------------------------------

// One immutable configuration of a codec plugin, used by many threads at
// once: each call borrows a context (the plugin's scratch state) from the
// codec's pool. Copies share the configuration and the pool. A Codec must not
// outlive the Registry that created it.
class Codec {
 public:
  Codec() = default;
  const std::string& id() const;
  json config() const;                   // canonical config
  std::string canonical_config() const;  // as text
  bool thread_safe() const;              // always, since plugin ABI 2
  uint64_t bound(uint64_t n) const;
  size_t encode(const void* in, size_t n, void* out, size_t capacity) const;
  size_t decode(const void* in, size_t n, void* out, size_t capacity) const;
  std::vector<uint8_t> encode(const void* in, size_t n) const;
  std::vector<uint8_t> decode(const void* in, size_t n, size_t decoded_size) const;
  // An array -> array codec's encoded chunk {"dtype", "shape"}; null for a
  // bytes -> bytes codec.
  json encoded_chunk() const;
  // The raw C view (for benchmarks measuring dispatch).
  const stowage_codec_vtable* vtable() const;
  stowage_codec_config handle() const;
  explicit operator bool() const { return state_ != nullptr; }

 private:
  friend class Registry;
  friend struct detail::CodecAccess;
  struct State;
  std::shared_ptr<State> state_;
};

// ---- stores and nodes ------------------------------------------------------------

enum class Mode : uint32_t {
  read = STOWAGE_MODE_READ,
  update = STOWAGE_MODE_UPDATE,
  create = STOWAGE_MODE_CREATE,
  truncate = STOWAGE_MODE_TRUNCATE,
};

enum class NodeKind { group, array, sparse, strings, records };
const char* node_kind_name(NodeKind k);

struct Dim {
  std::string name;    // may be empty
  std::string labels;  // node path of a strings node holding the labels, or empty
};

// What describe() says about a node, parsed. `raw` keeps everything.
struct NodeInfo {
  NodeKind kind = NodeKind::group;
  json attributes = json::object();
  DType dtype = DType::uint8;
  std::vector<uint64_t> shape, chunks;  // C order
  bool big_endian = false;              // byte order of chunk bytes
  bool fortran_order = false;           // element order inside a chunk
  json codec;                           // null when none
  double fill_value = 0;                // "fill_value": a number, or "NaN", "Infinity", "-Infinity"
  double fill_value_imag = 0;           // complex: the imaginary part ("fill_value": [re, im])
  bool csr = false;                     // sparse layout
  uint64_t nnz = 0;                     // sparse
  uint64_t count = 0;                   // records
  std::vector<Dim> dims;
  json raw;
  uint64_t element_count() const;
};
NodeInfo parse_node_info(const json& j);

class Array;
class Sparse;
class Records;

class Store {
 public:
  Store() = default;
  // Opens a dataset. format "" detects it; options is a JSON object passed to
  // the plugin, but for its "storage" object: the storage options of the
  // path's backend (Registry::bind_storage_options), e.g.
  // {"storage": {"timeout_ms": 5000}} for http, held while the store lives.
  static Store open(const std::string& path, Mode mode = Mode::read, std::string format = {},
                    const json& options = json::object(), Registry& registry = Registry::global());

  const std::string& path() const;
  const std::string& format() const;
  Registry& registry() const;

  std::vector<std::string> list(std::string_view node = "") const;
  NodeInfo describe(std::string_view node = "") const;
  json describe_json(std::string_view node = "") const;
  void create(std::string_view node, const json& description);
  void set_attributes(std::string_view node, const json& attributes);
  void remove(std::string_view node);
  // Whether move() is available: the format renames a node whole (a
  // directory per node, as in N5).
  bool can_move_nodes() const;
  // Renames node `from` to `to` in one step a kill cannot leave half done;
  // with `replace`, an existing `to` is swapped out and removed.
  void move(std::string_view from, std::string_view to, bool replace);

  Array array(std::string_view node = "") const;
  Sparse sparse(std::string_view node = "") const;
  Records records(std::string_view node = "") const;
  std::vector<std::string> read_strings(std::string_view node, uint64_t begin = 0,
                                        uint64_t end = UINT64_MAX) const;
  void write_strings(std::string_view node, const std::vector<std::string>& values);
  json command(std::string_view node, std::string_view name, const json& args = json::object());

  // Commits and closes; also done by the destructor of the last copy (which
  // cannot report errors, so call close() when writing), except for a store
  // being created (below), whose destructor discards.
  //
  // Mode::truncate ("w"), and Mode::create ("w+") where nothing exists yet,
  // build the dataset in a hidden staging directory beside `path`; close()
  // publishes it in place of what was there (one rename, or an exchange
  // with the old directory; a file set as one journaled change) only once
  // the format's close completed. An exception, a failed close, discard()
  // or a store never closed leave the old dataset byte for byte. "w"
  // replaces only a dataset of its format (or an empty file or directory).
  // A format without STOWAGE_CAP_SHARED_WRITES takes one writer at a time:
  // opening it for writing while another handle or process writes it is an
  // error naming the path.
  void close();
  // Closes without publishing anything more: a store being created leaves
  // nothing (the old dataset stays); any other store drops what the format
  // holds pending until close (writes already published stay). Never throws.
  void discard() noexcept;
  bool closed() const;
  // Where a store being created is built until close() ("" for others, and
  // once closed), and the store of that location in another handle or
  // process (what a pickled "w" store reopens as): Mode::update there,
  // messages naming `path`, and no publishing at its close. Only for formats
  // with STOWAGE_CAP_SHARED_WRITES.
  std::string staging_location() const;
  static Store open_staged(const std::string& path, const std::string& staging_location,
                           std::string format = {}, const json& options = json::object(),
                           Registry& registry = Registry::global());
  // A store being created on storage that cannot rename holds its metadata
  // until close() (core/src/metadata_last.hpp); this puts what it holds now,
  // so that other handles or processes can open the dataset while this one
  // writes (what pickling a "w" store does). The dataset is then visible as
  // written, as an update is. Nothing to do for other stores.
  void publish_held_metadata();
  // Whether writers through several handles or processes at once are safe
  // (the format's STOWAGE_CAP_SHARED_WRITES: N5, Zarr).
  bool shared_writes() const;
  explicit operator bool() const { return state_ != nullptr; }

  struct State;  // internal
  struct Node;   // internal: an open node handle of the plugin

 private:
  std::shared_ptr<State> state_;
  static Store open_state(std::shared_ptr<State> state, Mode mode, const json& options);
  // An Array, Sparse or Records view of a node, checked to be of that kind.
  template <class View>
  View bind(std::string_view node, NodeKind kind) const;
  friend class Array;
  friend class Sparse;
  friend class Records;
};

// A dense n-d array. Regions are (offset, shape) in C order; buffers are
// C-order, contiguous, host byte order, of the array's dtype.
class Array {
 public:
  const NodeInfo& info() const { return info_; }
  const std::string& node() const { return node_; }
  size_t ndim() const { return info_.shape.size(); }
  DType dtype() const { return info_.dtype; }
  const std::vector<uint64_t>& shape() const { return info_.shape; }

  void read(const std::vector<uint64_t>& offset, const std::vector<uint64_t>& shape,
            void* out) const;
  void write(const std::vector<uint64_t>& offset, const std::vector<uint64_t>& shape,
             const void* in) const;
  template <class T>
  std::vector<T> read_all() const {
    std::vector<T> out(info_.element_count());
    read(std::vector<uint64_t>(ndim(), 0), info_.shape, out.data());
    return out;
  }
  // Chunk grid: number of chunks along each dimension.
  std::vector<uint64_t> chunk_grid() const;
  // Whether a chunk is stored (asked of the plugin, which looks without
  // decoding: a stat, an index entry); false for one never written.
  bool chunk_exists(const std::vector<uint64_t>& chunk_index) const;
  // Copies this array into `dst`, chunk by chunk, when both have the same
  // shape, dtype and chunk shape: each chunk is decoded and re-encoded
  // without a pass through a region buffer (byte order and element order
  // are converted in the chunk where they differ). Chunks run in parallel;
  // with part_count > 1 only those whose flat index % part_count is
  // part_index. `done` (if set) is called after each chunk with its bytes,
  // from the worker threads; an exception it throws stops the copy. Returns
  // false, copying nothing, when the shapes, dtypes or chunk shapes differ.
  bool copy_chunks_to(const Array& dst, uint64_t part_index = 0, uint64_t part_count = 1,
                      const std::function<void(uint64_t bytes)>& done = {}) const;

 private:
  friend class Store;
  std::shared_ptr<Store::State> store_;
  std::string node_;
  NodeInfo info_;
  std::shared_ptr<Store::Node> handle_;  // the plugin's handle of the node, opened once
};

// A sparse matrix slice: majors [begin, end) of a CSC (majors = columns) or
// CSR (majors = rows) matrix.
struct SparseSlice {
  std::vector<uint64_t> indptr;   // end-begin+1 entries, starting at 0
  std::vector<uint32_t> indices;  // minor index of each value
  std::vector<uint8_t> values;    // nnz values of the matrix dtype, host order
  template <class T>
  const T* values_as() const {
    return reinterpret_cast<const T*>(values.data());
  }
};

class Sparse {
 public:
  const NodeInfo& info() const { return info_; }
  const std::string& node() const { return node_; }
  uint64_t majors() const { return info_.csr ? info_.shape[0] : info_.shape[1]; }
  SparseSlice read(uint64_t major_begin, uint64_t major_end) const;
  // The same into a slice whose buffers are reused (no allocation or zero
  // fill once they are large enough): for streaming through a matrix.
  void read_into(uint64_t major_begin, uint64_t major_end, SparseSlice& slice) const;
  // The same into the caller's buffers, for hosts that own their arrays (the
  // Python package reads into numpy arrays): count() gives the values in
  // [major_begin, major_end); indptr holds end-begin+1 entries, indices
  // and values nnz each.
  uint64_t count(uint64_t major_begin, uint64_t major_end) const;
  void read_into(uint64_t major_begin, uint64_t major_end, uint64_t nnz, uint64_t* indptr,
                 uint32_t* indices, void* values) const;
  // Reads a dense C-order region [row0,row0+rows) x [col0,col0+cols).
  void read_dense(uint64_t row0, uint64_t col0, uint64_t rows, uint64_t cols, void* out) const;
  void append(const SparseSlice& slice, uint64_t n_major) const;

 private:
  void require_majors(uint64_t begin,
                      uint64_t end) const;  // invalid_argument unless begin <= end <= majors()
  friend class Store;
  std::shared_ptr<Store::State> store_;
  std::string node_;
  NodeInfo info_;
  std::shared_ptr<Store::Node> handle_;  // the plugin's handle of the node, opened once
};

class Records {
 public:
  uint64_t size() const;
  std::string read(uint64_t index) const;  // msgpack bytes
  void read_range(uint64_t begin, uint64_t end,
                  const std::function<void(std::string_view record)>& fn) const;
  std::string key(uint64_t index) const;
  std::optional<uint64_t> find(std::string_view key) const;
  bool contains(std::string_view key) const;
  // contains() of each key, in one call to the plugin (faster for many).
  std::vector<bool> contains(const std::vector<std::string_view>& keys) const;
  void append(const std::vector<std::string>& records) const;

 private:
  friend class Store;
  std::shared_ptr<Store::State> store_;
  std::string node_;
  NodeInfo info_;
  std::shared_ptr<Store::Node> handle_;  // the plugin's handle of the node, opened once
};

// Splits "PATH::inner/node" into (PATH, inner/node).
std::pair<std::string, std::string> split_dataset_spec(const std::string& spec);
// A tool's KEY=VALUE option (--open-option, --storage-option): VALUE as JSON
// where it parses ("3", "true", "[1,2]"), else as a string, into
// options[KEY]; INVALID_ARGUMENT naming `flag` otherwise (the text not shown:
// it may be a secret).
void parse_key_value(const std::string& spec, json& options, const char* flag);

}  // namespace stowage

#endif  // STOWAGE_STOWAGE_HPP
