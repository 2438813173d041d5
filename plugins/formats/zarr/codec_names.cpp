#include "codec_names.hpp"

#include "filter_chain.hpp"
#include "metadata_v3.hpp"

#include <algorithm>

#include <memory>

namespace zarr {

namespace sdk = stowage::sdk;

json resolve_codec(const sdk::Host& host, const char* dialect, const json& entry, size_t item_size,
                   const std::string& file, std::string& error) {
  if (entry.is_null()) return nullptr;
  try {
    return json::parse(sdk::codec_resolve(host, dialect, entry.dump(), item_size));
  } catch (const sdk::Error& e) {
    // An unknown name (or its plugin missing) leaves the rest of the store readable.
    if (e.code() != STOWAGE_NOT_FOUND) sdk::fail(e.code(), file + ": " + e.what());
    error = file + ": " + e.what();
    return nullptr;
  }
}

json export_codec(const sdk::Host& host, const json& codec, const char* dialect, size_t item_size,
                  const std::string& dir) {
  if (codec.is_null() || codec.value("type", "") == "raw") return nullptr;
  nlohmann::json entry;  // keys sorted, as zarr-python writes them
  try {
    entry = nlohmann::json::parse(sdk::codec_export(host, codec.dump(), dialect, item_size));
  } catch (const sdk::Error& e) {
    sdk::fail(e.code(), dir + ": codec " + codec.dump() + ": " + e.what());
  }
  if (std::string(dialect) != "zarr3") return json(entry);
  // v3 writes the name first, as the specification's examples do.
  json v3 = {{"name", entry.value("name", "")}};
  if (entry.contains("configuration")) v3["configuration"] = json(entry["configuration"]);
  return v3;
}

void resolve_codecs(const sdk::Host& host, ArrayMeta& a, const std::string& file) {
  if (!a.v3) {
    a.codec = resolve_codec(host, "numcodecs", a.compressor, a.type.size, file, a.codec_error);
    if (!a.strings)  // vlen-utf8 is the strings node's own (strings.cpp)
      a.filter_chain = make_filters(host, "numcodecs", a.filters, a.type, a.chunks, file,
                                    a.codec_error, false, &a.codec_unknown);
    if (a.codec_unknown.is_null() && !a.codec_error.empty()) a.codec_unknown = a.compressor;
    return;
  }
  // The chunk the array -> array codecs see: after "transpose" (F order: reversed).
  std::vector<uint64_t> shape = a.chunks;
  if (a.fortran) std::reverse(shape.begin(), shape.end());
  a.filter_chain = make_filters(host, "zarr3", a.v3->filters, a.type, shape, file, a.codec_error,
                                false, &a.codec_unknown);
  auto layout = std::make_shared<V3Layout>(*a.v3);
  for (BytesCodec& c : layout->codecs) {
    if (c.crc32c) continue;
    c.host = resolve_codec(host, "zarr3", c.entry, a.type.size, file, a.codec_error);
    if (c.host.is_null() && a.codec_unknown.is_null() && !a.codec_error.empty())
      a.codec_unknown = c.entry;
    if (a.codec.is_null() && !c.host.is_null()) a.codec = c.host;  // the host sees the first
  }
  a.v3 = std::move(layout);
}

json unreadable_codec(const ArrayMeta& a) {
  return json{{"written", a.codec_unknown}, {"error", a.codec_error}};
}

void require_codec(const ArrayMeta& a) {
  if (!a.codec_error.empty()) sdk::fail(STOWAGE_NOT_FOUND, a.codec_error);
}

}  // namespace zarr
