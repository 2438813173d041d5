// Sparse matrices: as they are, or dense where the destination has none.
#include "internal.hpp"

#include <algorithm>

namespace stowage::copying {

void Converter::copy_sparse(const Store& src, const std::string& src_node, const NodeInfo& info,
                            Store& dst, const std::string& dst_node, Progress& progress) {
  ++nodes_;
  Sparse in = src.sparse(src_node);
  std::vector<DimLabels> dims = source_dims(src, src_node, info);
  json attrs = attributes_for(info, src_node);
  if (!format_has(dst, STOWAGE_CAP_SPARSE)) {
    notes.push_back((src_node.empty() ? "the matrix" : src_node) + ": " + dst.format() +
                    " has no sparse storage; wrote it dense");
    return densify(in, info, dims, attrs, dst, dst_node, progress, spec_of(src, src_node));
  }
  if (target_dtype(info.dtype) != info.dtype)
    throw Error(ErrorCode::unsupported, "--cast is not supported for sparse matrices");
  json desc = {{"kind", "sparse"},    {"dtype", dtype_name(info.dtype)},
               {"shape", info.shape}, {"layout", info.csr ? "csr" : "csc"},
               {"attributes", attrs}, {"dims", dims_json(dims)}};
  create_node(dst, dst_node, desc, std::string("a ") + dtype_name(info.dtype) + " sparse matrix",
              storage_for(src, dst, info));
  write_labels(dst, dst_node, dims, info.shape);
  Sparse out = dst.sparse(dst_node);
  const uint64_t majors = in.majors();
  const uint64_t per_major = majors ? std::max<uint64_t>(1, info.nnz / majors) : 1;
  const uint64_t batch = std::max<uint64_t>(1, (8ull << 20) / per_major);
  const size_t esize = dtype_size(info.dtype);
  SparseSlice s;
  for (uint64_t m = 0; m < majors; m += batch) {
    progress.check_cancel();
    uint64_t end = std::min(majors, m + batch);
    in.read_into(m, end, s);
    out.append(s, end - m);
    progress.add(s.indices.size() * (esize + 4), end - m);
  }
}

void Converter::densify(const Sparse& in, const NodeInfo& info, const std::vector<DimLabels>& dims,
                        const json& attrs, Store& dst, const std::string& dst_node,
                        Progress& progress, const std::string& label) {
  DType to = target_dtype(info.dtype);
  uint64_t rows = info.shape[0], cols = info.shape[1];
  std::vector<uint64_t> chunks =
      opts_.chunks.empty()
          ? std::vector<uint64_t>{std::min<uint64_t>(rows, 1024), std::min<uint64_t>(cols, 1024)}
          : opts_.chunks;
  json desc = {{"kind", "array"},  {"dtype", dtype_name(to)}, {"shape", info.shape},
               {"chunks", chunks}, {"attributes", attrs},     {"dims", dims_json(dims)}};
  if (!opts_.compression.is_null()) desc["codec"] = opts_.compression;
  create_node(dst, dst_node, desc, std::string("a dense ") + dtype_name(to) + " matrix");
  write_labels(dst, dst_node, dims, info.shape);
  Array out = dst.array(dst_node);
  size_t in_size = dtype_size(info.dtype), out_size = dtype_size(to);
  // Bands of about 8 MiB, for the same reason as copy_tiles.
  uint64_t band = std::max<uint64_t>(
      1, std::min<uint64_t>(rows, (8ull << 20) / std::max<uint64_t>(cols * in_size, 1)));
  band =
      std::max<uint64_t>(out.info().chunks[0], band / out.info().chunks[0] * out.info().chunks[0]);
  std::vector<char> buffer, converted;
  for (uint64_t r = 0; r < rows; r += band) {
    progress.check_cancel();
    uint64_t n = std::min(band, rows - r);
    buffer.resize(n * cols * in_size);
    in.read_dense(r, 0, n, cols, buffer.data());
    const void* data = buffer.data();
    if (to != info.dtype) {
      converted.resize(n * cols * out_size);
      cast_elements(info.dtype, to, buffer.data(), converted.data(), n * cols, opts_.cast_overflow,
                    [&](size_t i) { return index_text(label, {r, 0}, {n, cols}, i); });
      data = converted.data();
    }
    out.write({r, 0}, {n, cols}, data);
    progress.add(n * cols * in_size, 1);
  }
}

}  // namespace stowage::copying
