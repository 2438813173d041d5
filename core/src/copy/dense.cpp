// Dense arrays: chunk by chunk where the chunks match, else in tiles with casts.
#include "internal.hpp"
#include "../fill_value.hpp"

#include <stowage/plugin_util.hpp>  // c_order_chunks

#include <algorithm>

namespace stowage::copying {

void Converter::copy_dense(const Store& src, const std::string& src_node, const NodeInfo& info,
                           Store& dst, const std::string& dst_node, Progress& progress) {
  ++nodes_;
  Array in = src.array(src_node);
  DType to = target_dtype(info.dtype);
  std::vector<DimLabels> dims = source_dims(src, src_node, info);
  json attrs = attributes_for(info, src_node);
  json desc = {{"kind", "array"},
               {"dtype", dtype_name(to)},
               {"shape", info.shape},
               {"chunks",
                opts_.chunks.empty() ? default_chunks(src, dst, src_node, info, to) : opts_.chunks},
               {"attributes", attrs},
               {"dims", dims_json(dims)}};
  if (opts_.chunks.size() && opts_.chunks.size() != info.shape.size())
    throw Error(ErrorCode::invalid_argument, "--chunks has " + std::to_string(opts_.chunks.size()) +
                                                 " entries, the array has " +
                                                 std::to_string(info.shape.size()) + " dimensions");
  if (!opts_.shards.empty())
    desc["shards"] = shards_for(desc["chunks"].get<std::vector<uint64_t>>());
  json codec = codec_for(src, dst, info);
  if (!codec.is_null()) desc["codec"] = codec;
  if (info.fill_value != 0 || info.fill_value_imag != 0)
    desc["fill_value"] = fill_value_json(info.fill_value, info.fill_value_imag, to);
  if (!filling_part()) {
    create_node(dst, dst_node, desc,
                std::string(dtype_name(to)) + " array of rank " + std::to_string(info.shape.size()),
                storage_for(src, dst, info));
    write_labels(dst, dst_node, dims, info.shape);
  }
  if (opts_.create_only) return;
  Array out = dst.array(dst_node);
  if (out.shape() != info.shape || out.dtype() != to)
    throw Error(ErrorCode::invalid_argument,
                dst.path() + "::" + dst_node + " exists with another shape or dtype");
  // Parts take chunks in turn: two runs would each rewrite a shard that
  // holds chunks of both, and one would lose the other's. A format
  // describes a sharded array with "shards", as create takes it (zarr v3).
  if (filling_part() && out.info().raw.contains("shards") && !out.info().raw["shards"].is_null())
    throw Error(ErrorCode::unsupported,
                (dst_node.empty() ? dst.path() : dst.path() + "::" + dst_node) +
                    " is sharded, and --part runs would rewrite each other's shards; "
                    "convert it in one run",
                dst.path());
  if (in.dtype() == out.dtype() && copy_chunks(in, out, progress)) return;
  copy_tiles(in, out, progress, spec_of(src, src_node), format_has(src, STOWAGE_CAP_PARTIAL));
}

// The shard shape for an array of these chunks: one entry per dimension,
// each a multiple of the chunk (Zarr v3's sharding_indexed).
std::vector<uint64_t> Converter::shards_for(const std::vector<uint64_t>& chunks) const {
  if (opts_.shards.size() != chunks.size())
    throw Error(ErrorCode::invalid_argument, "--shards has " + std::to_string(opts_.shards.size()) +
                                                 " entries, the array has " +
                                                 std::to_string(chunks.size()) + " dimensions");
  for (size_t d = 0; d < chunks.size(); ++d)
    if (opts_.shards[d] % chunks[d] != 0)
      throw Error(ErrorCode::invalid_argument,
                  "--shards " + json(opts_.shards).dump() + " is not a multiple of the chunks " +
                      json(chunks).dump() + " in dimension " + std::to_string(d) +
                      "; a shard holds whole chunks (give --chunks to choose them)");
  return opts_.shards;
}

// The source's chunks, except where one is too large to write as one (a
// whole Daf vector, a one-block N5 dataset going to another format): then
// slabs of about 4 MiB, so that progress, Ctrl-C and readers of the
// destination are not held by one chunk (bench/convert/RESULTS.md). A copy
// into the same format keeps its chunks as they are.
std::vector<uint64_t> Converter::default_chunks(const Store& src, const Store& dst,
                                                const std::string& node, const NodeInfo& info,
                                                DType to) {
  const uint64_t too_large = 16ull << 20, slab = 4ull << 20;
  if (same_format(src, dst) || product(info.chunks) * dtype_size(to) <= too_large)
    return info.chunks;
  std::vector<uint64_t> chunks = sdk::c_order_chunks(info.shape, dtype_size(to), slab);
  notes.push_back((node.empty() ? std::string("the array") : node) + ": chunks " +
                  json(info.chunks).dump() + " are over 16 MiB; wrote chunks " +
                  json(chunks).dump() + " (give --chunks to choose)");
  return chunks;
}

// The source node as the user would name it: "in.n5::raw/s0", "x.npy".
std::string Converter::spec_of(const Store& src, const std::string& node) {
  return node.empty() ? src.path() : src.path() + "::" + node;
}

// Same chunk shape on both sides: chunk by chunk, with no region buffer
// in between (the core converts byte and element order in the chunk).
// The same disjoint parts as copy_tiles: chunk i belongs to part i % N.
bool Converter::copy_chunks(const Array& in, const Array& out, Progress& progress) {
  return in.copy_chunks_to(out, opts_.part_index, std::max<uint64_t>(opts_.part_count, 1),
                           [&](uint64_t bytes) {
                             progress.check_cancel();
                             progress.add(bytes, 1);
                           });
}

// Copies in tiles aligned to the destination's chunks, each holding
// several chunks so the core decodes and encodes a tile's chunks in
// parallel, and about 8 MiB so progress and Ctrl-C are heard often even with
// a slow codec (bench/convert/RESULTS.md). A source that cannot read part of a chunk (a compressed
// one) gets tiles of at least one of its chunks, or each tile would decode the same chunk again.
void Converter::copy_tiles(const Array& in, const Array& out, Progress& progress,
                           const std::string& label, bool source_reads_part) {
  const auto& shape = in.shape();
  const size_t nd = shape.size();
  size_t in_size = dtype_size(in.dtype()), out_size = dtype_size(out.dtype());
  std::vector<uint64_t> tile = out.info().chunks;
  for (size_t d = 0; d < nd; ++d) tile[d] = std::min(tile[d], shape[d]);
  const bool partial = filling_part();
  const uint64_t budget =
      std::max<uint64_t>(8ull << 20, source_reads_part ? 0 : product(in.info().chunks) * in_size);
  if (!partial) {
    // Grow the tile from the last dimension to the first while it fits.
    for (size_t d = nd; d-- > 0;) {
      uint64_t others = product(tile) / std::max<uint64_t>(tile[d], 1);
      uint64_t fit = std::max<uint64_t>(1, budget / std::max<uint64_t>(others * in_size, 1));
      uint64_t chunk = std::max<uint64_t>(out.info().chunks[d], 1);
      uint64_t want = std::min(shape[d], std::max(tile[d], fit / chunk * chunk));
      tile[d] = std::max<uint64_t>(want, std::min(tile[d], shape[d]));
      if (tile[d] < shape[d]) break;
    }
  }
  std::vector<uint64_t> grid(nd);
  for (size_t d = 0; d < nd; ++d) grid[d] = tile[d] ? (shape[d] + tile[d] - 1) / tile[d] : 0;
  uint64_t tiles = nd == 0 ? 1 : product(grid);
  std::vector<char> buffer, converted;
  for (uint64_t t = 0; t < tiles; ++t) {
    progress.check_cancel();
    if (partial && t % opts_.part_count != opts_.part_index) continue;
    std::vector<uint64_t> offset(nd), extent(nd);
    uint64_t rest = t;
    for (size_t d = nd; d-- > 0;) {
      uint64_t i = rest % grid[d];
      rest /= grid[d];
      offset[d] = i * tile[d];
      extent[d] = std::min(tile[d], shape[d] - offset[d]);
    }
    buffer.resize(product(extent) * in_size);
    in.read(offset, extent, buffer.data());
    // Written in slabs of whole destination chunk rows, about 8 MiB each:
    // a tile that had to cover a large source chunk still reports often.
    const uint64_t row = nd == 0 ? 1 : product(extent) / std::max<uint64_t>(extent[0], 1);
    const uint64_t rows = nd == 0 ? 1 : extent[0];
    const uint64_t chunk_rows = nd == 0 ? 1 : std::max<uint64_t>(out.info().chunks[0], 1);
    const uint64_t step = std::max<uint64_t>(
        chunk_rows, (8ull << 20) / std::max<uint64_t>(row * in_size, 1) / chunk_rows * chunk_rows);
    for (uint64_t r = 0; r < rows; r += step) {
      progress.check_cancel();
      std::vector<uint64_t> slab_offset = offset, slab_extent = extent;
      if (nd > 0) slab_offset[0] += r, slab_extent[0] = std::min(step, rows - r);
      const uint64_t n = product(slab_extent);
      const char* data = buffer.data() + r * row * in_size;
      if (in.dtype() != out.dtype()) {
        converted.resize(n * out_size);
        cast_elements(in.dtype(), out.dtype(), data, converted.data(), n, opts_.cast_overflow,
                      [&](size_t i) { return index_text(label, slab_offset, slab_extent, i); });
        data = converted.data();
      }
      out.write(slab_offset, slab_extent, data);
      progress.add(n * in_size, 1);
    }
  }
}

}  // namespace stowage::copying
