// String arrays.
#include "internal.hpp"

namespace stowage::copying {

void Converter::copy_strings(const Store& src, const std::string& src_node, Store& dst,
                             const std::string& dst_node) {
  ++nodes_;
  if (filling_part()) return;
  if (format_has(dst, STOWAGE_CAP_GROUPS)) {
    // In a container a string node is a node of its own: its attributes,
    // and within the format its blocks and codec, go with it.
    const NodeInfo info = src.describe(src_node);
    json desc = {
        {"kind", "strings"}, {"shape", info.shape}, {"attributes", attributes_for(info, src_node)}};
    add_layout(desc, src, dst, info);
    create_node(dst, dst_node, desc, "a string array");
  }
  dst.write_strings(dst_node, src.read_strings(src_node));
}

// The blocks and codec of a string or record node, where the destination
// is the source's format or --compression names a codec.
void Converter::add_layout(json& desc, const Store& src, const Store& dst,
                           const NodeInfo& info) const {
  if (same_format(src, dst) && info.raw.contains("chunks")) desc["chunks"] = info.raw["chunks"];
  json codec = codec_for(src, dst, info);
  if (!codec.is_null()) desc["codec"] = codec;
}

}  // namespace stowage::copying
