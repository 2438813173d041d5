// The Converter's walk of the source tree: each node by its kind, and groups.
#include "internal.hpp"

namespace stowage::copying {

uint64_t Converter::total_bytes(const Store& src, const std::string& node) const {
  NodeInfo info = src.describe(node);
  uint64_t esize = dtype_size(info.dtype);
  switch (info.kind) {
    case NodeKind::group: {
      uint64_t sum = 0;
      for (const auto& child : src.list(node)) sum += total_bytes(src, join(node, child));
      return sum;
    }
    case NodeKind::array:
      target_dtype(info.dtype);  // a refused cast (complex to real) refused before any write
      return info.element_count() * esize;
    case NodeKind::sparse:
      return info.nnz * (esize + 4);
    default:
      return 0;
  }
}

void Converter::copy(const Store& src, const std::string& src_node, Store& dst,
                     const std::string& dst_node, Progress& progress) {
  progress.check_cancel();
  NodeInfo info = src.describe(src_node);
  switch (info.kind) {
    case NodeKind::group:
      return copy_group(src, src_node, info, dst, dst_node, progress);
    case NodeKind::array:
      return copy_dense(src, src_node, info, dst, dst_node, progress);
    case NodeKind::sparse:
      return copy_sparse(src, src_node, info, dst, dst_node, progress);
    case NodeKind::strings:
      return copy_strings(src, src_node, dst, dst_node);
    case NodeKind::records:
      return copy_records(src, src_node, info, dst, dst_node, progress);
  }
}

DType Converter::target_dtype(DType from) const {
  auto it = opts_.casts.find(from);
  if (it != opts_.casts.end()) return it->second;
  if (!opts_.cast_all) return from;
  // Complex to real drops the imaginary parts: only on a cast naming the complex type.
  if (dtype_is_complex(from) && !dtype_is_complex(*opts_.cast_all))
    throw Error(ErrorCode::invalid_argument,
                std::string("--cast ") + dtype_name(*opts_.cast_all) +
                    " would drop the imaginary parts of " + dtype_name(from) +
                    " values; name the cast (--cast " + dtype_name(from) + "=" +
                    dtype_name(*opts_.cast_all) + ") to keep only the real parts");
  return *opts_.cast_all;
}

bool Converter::format_has(const Store& store, uint64_t cap) const {
  auto info = registry_.find("format", store.format());
  return info && (info->capabilities & cap);
}

void Converter::copy_group(const Store& src, const std::string& src_node, const NodeInfo& info,
                           Store& dst, const std::string& dst_node, Progress& progress) {
  ++nodes_;
  if (!format_has(dst, STOWAGE_CAP_GROUPS))
    throw Error(ErrorCode::invalid_argument,
                dst.path() + ": format " + dst.format() + " holds one dataset, and " +
                    spec_of(src, src_node) +
                    " is a group; name one of its nodes (SOURCE::inner/node)",
                dst.path());
  const json attributes = with_multiscales(src, src_node, info.attributes, dst);
  if (filling_part())
    ;  // the structure exists already (--create-only)
  else if (!dst_node.empty())
    dst.create(dst_node, {{"kind", "group"}, {"attributes", attributes}});
  else if (!attributes.empty())
    dst.set_attributes("", attributes);
  for (const std::string& child : src.list(src_node))
    copy(src, join(src_node, child), dst, join(dst_node, child), progress);
}

}  // namespace stowage::copying
