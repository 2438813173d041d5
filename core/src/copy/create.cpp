// Creating a node in the destination: the codec carried over or asked for,
// the attributes a format cannot keep, the errors in the user's terms.
#include "internal.hpp"

namespace stowage::copying {

// The metadata rule (README, "stowage-convert"): attributes and labels go
// wherever the destination keeps them; what it cannot keep is an error
// naming it, unless --drop-metadata, which drops just that and says so in
// the notes. A format's storage parameters ("storage", e.g. BPCells'
// packing) go only to the same format, as its codec does.
void Converter::create_node(Store& dst, const std::string& node, json desc, const std::string& what,
                            const json& storage) {
  if (storage.is_object()) desc["storage"] = storage;
  const std::string dtype = desc.value("dtype", "");
  try {
    create_keeping_codec(dst, node, desc);
  } catch (const Error& e) {
    const json& attrs = desc.contains("attributes") ? desc["attributes"] : json::object();
    if (e.code() != ErrorCode::unsupported || attrs.empty() ||
        !created_without_attributes(dst, node, desc))
      cannot_create(e, dst, what, dtype.empty() ? nullptr : dtype.c_str());
    const std::string keys = key_list(attrs),
                      where = node.empty() ? std::string("the array") : node;
    require_codec_kept(dst, node, what);  // the mistake to report first, if both
    if (!opts_.drop_metadata)
      throw Error(ErrorCode::invalid_argument,
                  dst.path() + ": format " + dst.format() + " cannot keep the attributes " + keys +
                      " of " + where + "; pass --drop-metadata to convert without them",
                  dst.path());
    notes.push_back(where + ": dropped the attributes " + keys + ", which " + dst.format() +
                    " cannot keep");
  }
  require_codec_kept(dst, node, what);
}

json Converter::storage_for(const Store& src, const Store& dst, const NodeInfo& info) const {
  return same_format(src, dst) && info.raw.contains("storage") ? info.raw["storage"] : json();
}

std::string Converter::key_list(const json& object) {
  std::string keys;
  for (const auto& [key, value] : object.items()) keys += (keys.empty() ? "'" : ", '") + key + "'";
  return keys;
}

// A codec the user asked for must be the one the node was written with:
// .npy and BPCells, for instance, have no such codecs, and silently
// ignoring --compression there hid the mistake.
void Converter::require_codec_kept(Store& dst, const std::string& node, const std::string& what) {
  if (codec_id_.empty()) return;
  const std::string& wanted = codec_id_;
  const json made = dst.describe(node).codec;
  if (made.is_object() && made.value("type", "") == wanted) return;
  throw Error(ErrorCode::invalid_argument,
              dst.path() + ": format " + dst.format() + " does not compress " + what + " with a " +
                  wanted +
                  " codec, so the compression asked for would be ignored; leave out --compression",
              dst.path());
}

// Creates the node without its attributes; false if the format refuses
// that too (the attributes were not the problem).
bool Converter::created_without_attributes(Store& dst, const std::string& node, const json& desc) {
  json bare = desc;
  bare["attributes"] = json::object();
  try {
    create_keeping_codec(dst, node, bare);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// --compression; else the source's codec: as it is within one format,
// across formats as the codec plugin's canonical config (its defaults
// filled in, so the destination need not know them), which the
// destination may refuse (create_keeping_codec); else the destination's
// default.
json Converter::codec_for(const Store& src, const Store& dst, const NodeInfo& info) const {
  if (!opts_.compression.is_null()) return opts_.compression;
  if (info.codec.is_null()) return nullptr;
  if (same_format(src, dst)) return info.codec;
  try {
    return registry_.codec(info.codec).config();
  } catch (const Error&) {
    return nullptr;  // a codec this host lacks: the destination's default
  }
}

// Creates the node. A codec carried over from another format that the
// destination refuses as UNSUPPORTED (N5's lz4 framing in a format with
// no such codec) gives way to the destination's default, noted; any other
// error is the caller's.
void Converter::create_keeping_codec(Store& dst, const std::string& node, json desc) {
  try {
    dst.create(node, desc);
  } catch (const Error& e) {
    const bool inherited = opts_.compression.is_null() && desc.contains("codec");
    if (e.code() != ErrorCode::unsupported || !inherited) throw;
    const std::exception_ptr original = std::current_exception();
    const json codec = desc["codec"];
    desc.erase("codec");
    try {
      dst.create(node, desc);
    } catch (const Error&) {
      std::rethrow_exception(original);  // the codec was not (only) the problem
    }
    notes.push_back((node.empty() ? std::string("the array") : node) + ": " + dst.format() +
                    " cannot keep the codec " + codec.dump() + " (" + e.what() +
                    "); wrote its default codec");
  }
}

// "Cannot hold" is the user's to fix (another format, a cast, --drop-metadata):
// a usage error, whatever the plugin called it; an I/O failure stays one.
// The cast hint only where the plugin refused the dtype itself.
void Converter::cannot_create(const Error& e, const Store& dst, const std::string& what,
                              const char* dtype) const {
  std::string why = e.what();
  if (why.rfind(dst.path() + ": ", 0) == 0) why.erase(0, dst.path().size() + 2);  // said once
  const bool usage = e.code() == ErrorCode::unsupported || e.code() == ErrorCode::invalid_argument;
  if (!usage) throw e;  // the storage failed (a name too long, a full disk): not the format's doing
  const bool dtype_refused = dtype && why.find(dtype) != std::string::npos;
  throw Error(ErrorCode::invalid_argument,
              dst.path() + ": format " + dst.format() + " cannot hold " + what + ": " + why +
                  (dtype_refused && !opts_.cast_all && opts_.casts.empty()
                       ? "; convert the values with --cast (e.g. --cast float64)"
                       : ""),
              dst.path());
}

}  // namespace stowage::copying
