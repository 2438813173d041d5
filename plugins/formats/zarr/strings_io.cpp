// A Zarr string array as a strings node: elements [begin, end) of the
// C-order array, read chunk by chunk; written whole (write_strings), every
// chunk through vlen-utf8 and the array's compressor (v2) or bytes -> bytes
// codecs (v3). Metadata and the encoding are strings.cpp's.
#include "codec_names.hpp"
#include "store.hpp"
#include "strings.hpp"

#include <algorithm>
#include <map>
#include <memory>

namespace zarr {

namespace sdk = stowage::sdk;
using sdk::corrupt;
using sdk::fail;
using sdk::invalid;
using sdk::unsupported;

namespace {

class StringsNode final : public sdk::StringsNode {
 public:
  StringsNode(ZarrStore& store, std::shared_ptr<OpenArray> a) : store_(store), a_(std::move(a)) {}
  void read(uint64_t begin, uint64_t end, const sdk::ItemFn& item) override {
    store_.read_strings(*a_, begin, end, item);
  }

 private:
  ZarrStore& store_;
  std::shared_ptr<OpenArray> a_;
};

uint64_t element_count(const ArrayMeta& m) {
  uint64_t n = 1;
  for (uint64_t s : m.shape)
    if (__builtin_mul_overflow(n, s, &n)) return UINT64_MAX;
  return n;
}

// A chunk's decoded size is not stored: the buffer grows until it fits, up
// to what `n` bytes can expand to besides the `count` lengths (garbage is
// refused after a few MiB, not 2 GiB).
std::vector<uint8_t> decode_growing(const sdk::HostCodec& codec, const uint8_t* in, size_t n,
                                    uint64_t count, const std::string& key) {
  const uint64_t lengths = 4 + 4 * count;
  const uint64_t limit =
      std::min<uint64_t>(kMaxChunkBytes, lengths + 4096 * uint64_t(n) + (16 << 20));
  for (uint64_t cap = std::min<uint64_t>(limit, lengths + 4 * uint64_t(n) + (64 << 10));;
       cap = std::min<uint64_t>(limit, 2 * cap)) {
    std::vector<uint8_t> out(cap);
    try {
      out.resize(codec.decode(in, n, out.data(), out.size()));
      return out;
    } catch (const sdk::Error& e) {
      // Codecs report a full buffer as CORRUPT or INVALID_ARGUMENT.
      const bool maybe_full = e.code() == STOWAGE_CORRUPT || e.code() == STOWAGE_INVALID_ARGUMENT;
      if (!maybe_full || cap >= limit) fail(e.code(), key + ": " + e.what());
    }
  }
}

// The place of the element at `at` (in the array) within its chunk: C order,
// or F order (the first dimension fastest) for v2's "order": "F", as
// numcodecs flattens such a chunk.
uint64_t chunk_offset(const ArrayMeta& m, const std::vector<uint64_t>& at) {
  uint64_t local = 0;
  for (size_t i = 0; i < at.size(); ++i) {
    const size_t d = m.fortran ? at.size() - 1 - i : i;
    local = local * m.chunks[d] + at[d] % m.chunks[d];
  }
  return local;
}

// The inverse: element `e` of a chunk at its place `local` in the chunk.
void chunk_place(const ArrayMeta& m, uint64_t e, std::vector<uint64_t>& local) {
  for (size_t i = local.size(); i-- > 0;) {
    const size_t d = m.fortran ? local.size() - 1 - i : i;
    local[d] = e % m.chunks[d], e /= m.chunks[d];
  }
}

// The dimension names of a strings array: v3's dimension_names, v2's
// xarray attribute _ARRAY_DIMENSIONS.
json dims_json(const json& names, size_t ndim) {
  if (!names.is_array() || names.size() != ndim || ndim == 0) return nullptr;
  json dims = json::array();
  for (const json& name : names)
    dims.push_back(json{{"name", name.is_string() ? name : json("")}, {"labels", nullptr}});
  return dims;
}

}  // namespace

std::unique_ptr<sdk::Node> strings_node(ZarrStore& store, std::shared_ptr<OpenArray> a) {
  return std::make_unique<StringsNode>(store, std::move(a));
}

// ---- chunks ---------------------------------------------------------------------

// A chunk's file: v2 "<i0>.<i1>" (or '/'), v3 by its key encoding.
std::string ZarrStore::string_chunk_key(const OpenArray& a,
                                        const std::vector<uint64_t>& index) const {
  const V3Layout* l = a.v3 ? a.meta.v3.get() : nullptr;
  const bool default_keys = l && l->default_keys;
  const char separator = l ? l->separator : a.meta.separator;
  std::string key = a.dir + '/';
  if (default_keys)
    key += 'c';
  else if (index.empty())
    key += '0';
  for (size_t d = 0; d < index.size(); ++d) {
    if (d || default_keys) key += separator;
    key += std::to_string(index[d]);
  }
  return key;
}

// Stored bytes back to vlen-utf8 bytes: v2's compressor, or v3's bytes ->
// bytes codecs last first (crc32c checked and taken off).
std::vector<uint8_t> ZarrStore::decode_string_chunk(OpenArray& a, std::vector<uint8_t> bytes,
                                                    const std::string& key) {
  const uint64_t count = a.meta.chunk_elements();
  if (!a.v3)
    return a.uncompressed ? bytes
                          : decode_growing(a.codec.get(), bytes.data(), bytes.size(), count, key);
  const V3Layout& l = *a.meta.v3;
  for (size_t i = l.codecs.size(); i-- > 0;) {
    if (!l.codecs[i].crc32c) {
      bytes = decode_growing(a.v3->codecs[i]->get(), bytes.data(), bytes.size(), count, key);
      continue;
    }
    bytes.resize(check_crc(bytes.data(), bytes.size(), key, "chunk"));
  }
  return bytes;
}

std::vector<std::string> ZarrStore::read_string_chunk(OpenArray& a,
                                                      const std::vector<uint64_t>& index) {
  const std::string key = string_chunk_key(a, index);
  const uint64_t count = a.meta.chunk_elements();
  std::optional<sdk::BufferPool::Lease> file;
  uint64_t got = 0;
  if (!read_whole(key, file, 64 << 10, &got)) {
    absent_chunk(a, key);  // an error if the array itself is gone
    return std::vector<std::string>(count, a.meta.fill.for_host.get<std::string>());
  }
  const std::vector<uint8_t> bytes =
      decode_string_chunk(a, std::vector<uint8_t>(file->data(), file->data() + got), key);
  return decode_vlen_utf8(bytes.data(), bytes.size(), count, key);
}

// Elements in C order; the decoded chunks of one row of chunks (along the
// first dimension) are kept while the range crosses it.
void ZarrStore::read_strings(OpenArray& a, uint64_t begin, uint64_t end, const sdk::ItemFn& item) {
  const ArrayMeta& m = a.meta;
  const uint64_t n = element_count(m);
  if (begin > end || end > n)
    invalid(a.dir + ": strings [" + std::to_string(begin) + ", " + std::to_string(end) +
            ") are outside the array's " + std::to_string(n));
  const size_t nd = m.ndim();
  std::map<uint64_t, std::vector<std::string>> decoded;
  uint64_t band = UINT64_MAX;
  std::vector<uint64_t> at(nd), index(nd);
  for (uint64_t k = begin; k < end; ++k) {
    uint64_t rest = k, chunk = 0;
    for (size_t d = nd; d-- > 0;) at[d] = rest % m.shape[d], rest /= m.shape[d];
    for (size_t d = 0; d < nd; ++d) {
      index[d] = at[d] / m.chunks[d];
      chunk = chunk * m.grid(d) + index[d];
    }
    const uint64_t local = chunk_offset(m, at);
    if (nd && index[0] != band) decoded.clear(), band = index[0];
    auto it = decoded.find(chunk);
    if (it == decoded.end()) it = decoded.emplace(chunk, read_string_chunk(a, index)).first;
    const std::string& s = it->second[local];
    item(s.data(), s.size());
  }
}

// ---- writing --------------------------------------------------------------------

void ZarrStore::write_string_chunk(OpenArray& a, const std::vector<uint64_t>& index,
                                   const std::vector<uint8_t>& bytes) {
  const std::string key = string_chunk_key(a, index);
  if (a.v3) {
    const std::vector<uint8_t> stored = a.v3->encode(*a.meta.v3, bytes.data(), bytes.size(), key);
    return storage_.write(key, stored.data(), stored.size());  // published whole
  }
  if (a.uncompressed) return storage_.write(key, bytes.data(), bytes.size());
  const sdk::HostCodec& codec = a.codec.get();
  std::vector<uint8_t> stored(codec.bound(bytes.size()));
  try {
    stored.resize(codec.encode(bytes.data(), bytes.size(), stored.data(), stored.size()));
  } catch (const sdk::Error& e) {
    fail(e.code(), key + ": " + e.what());
  }
  storage_.write(key, stored.data(), stored.size());
}

// Every chunk, whole (edge chunks padded with the fill value, as Zarr
// stores them), so the array holds exactly `values` afterwards.
void ZarrStore::write_strings(std::string_view node, const std::vector<std::string_view>& values) {
  require_writable("write_strings");
  std::vector<std::string> parts = sdk::split_node_path(node);
  const std::string dir = node_dir(parts);
  require_outside_arrays(parts);
  if (kind_of(dir) != Kind::array)  // a new node: one dimension
    create(node, json{{"kind", "strings"}, {"shape", {values.size()}}}.dump());
  std::shared_ptr<OpenArray> a = open_array(dir);
  const ArrayMeta& m = a->meta;
  if (!m.strings)
    invalid(dir + ": array '" + std::string(node) + "' holds " + m.type.name + ", not strings");
  if (values.size() != element_count(m))
    invalid(dir + ": " + std::to_string(values.size()) + " strings for an array of shape " +
            json(m.shape).dump());
  for (size_t i = 0; i < values.size(); ++i)
    if (!valid_utf8(values[i]) || values[i].size() > UINT32_MAX)
      invalid(dir + ": string " + std::to_string(i) + " is not valid UTF-8 under 4 GiB");
  const size_t nd = m.ndim();
  uint64_t chunks = 1;
  for (size_t d = 0; d < nd; ++d) chunks *= m.grid(d);
  const std::string fill = m.fill.for_host.get<std::string>();
  std::vector<std::string_view> chunk(m.chunk_elements());
  std::vector<uint64_t> index(nd), local(nd);
  for (uint64_t c = 0; c < chunks; ++c) {
    for (size_t d = nd, rest = c; d-- > 0;) index[d] = rest % m.grid(d), rest /= m.grid(d);
    for (uint64_t e = 0; e < chunk.size(); ++e) {
      uint64_t flat = 0;
      bool inside = true;
      chunk_place(m, e, local);
      for (size_t d = 0; d < nd; ++d) {
        const uint64_t at = index[d] * m.chunks[d] + local[d];
        inside = inside && at < m.shape[d];
        flat = flat * m.shape[d] + at;
      }
      chunk[e] = inside ? values[flat] : std::string_view(fill);
    }
    write_string_chunk(*a, index, encode_vlen_utf8(chunk));
  }
}

// ---- the tree -------------------------------------------------------------------

json ZarrStore::describe_strings(const OpenArray& open, const json& attributes) const {
  const ArrayMeta& a = open.meta;
  json d = json::object();
  d["kind"] = "strings";
  d["shape"] = a.shape;
  d["chunks"] = a.chunks;
  d["codec"] = a.codec;
  const json doc = open.v3 ? read_v3_document(open.dir) : json::object();
  const json names = open.v3 ? doc.value("dimension_names", json())
                             : attributes.value("_ARRAY_DIMENSIONS", json());
  if (json dims = dims_json(names, a.ndim()); !dims.is_null()) d["dims"] = dims;
  d["attributes"] = attributes;
  // How the array is stored, which only another Zarr store takes over.
  if (open.v3)
    d["storage"] = json{{"zarr_format", 3},
                        {"chunk_key_encoding", doc.value("chunk_key_encoding", json())},
                        {"codecs", a.compressor},
                        {"fill_value", a.fill.in_file}};
  else
    d["storage"] = json{{"zarr_format", 2},
                        {"dimension_separator", std::string(1, a.separator)},
                        {"compressor", a.compressor},
                        {"filters", a.filters},
                        {"fill_value", a.fill.in_file}};
  return d;
}

// A strings array of a create() description: its shape and chunks, the
// codec (numcodecs' compressor in v2, bytes -> bytes codecs in v3), and in
// "storage" the fill value and the chunk keys another Zarr store described.
void ZarrStore::create_strings(const std::string& dir, const json& d, json attributes) {
  ArrayMeta a = strings_description_meta(d, version_);
  const json storage = d.value("storage", json::object());
  json codec = d.value("codec", json());
  if (codec.is_string()) codec = json{{"type", codec}};
  storage_.make_directory(dir);
  if (version_ == 2) {
    const json separator = storage.value("dimension_separator", json("."));
    if (separator != "." && separator != "/")
      invalid("zarr create: \"dimension_separator\" must be \".\" or \"/\", got " +
              separator.dump());
    a.separator = separator.get<std::string>()[0];
    a.filters = json::array({json{{"id", "vlen-utf8"}}});
    a.codec = canonical_codec(codec, dir);
    a.compressor = export_codec(host(), a.codec, "numcodecs", 1, dir);
    if (!attributes.empty()) write_text(dir + "/" + kAttributesFile, attributes);
    return write_text(dir + "/" + kArrayFile, array_json(a));  // last: complete once it exists
  }
  auto layout = std::make_shared<V3Layout>();
  apply_chunk_keys(*layout, storage);
  a.codec = canonical_codec(codec, dir);
  if (json entry = export_codec(host(), a.codec, "zarr3", 1, dir); !entry.is_null())
    layout->codecs.push_back(BytesCodec{entry, a.codec});
  a.v3 = layout;
  write_text(dir + "/" + kV3File, strings_array_json_v3(a, attributes, nullptr));
}

}  // namespace zarr
