// The chunk grid the host sees over a column-major rows x cols array
// (vectors: cols = 1). Chunks ("tiles") are column-major too, so a tile is
// ncols runs of nrows contiguous elements of the .data file -- one run when
// it spans whole columns.
//
// Why these sizes: the host transposes each tile into its C-order output
// with a strided copy; a tile of about 512 KiB stays in L2 cache while that
// happens, where strips of whole columns (megabytes, each element a page
// apart) make the copy several times slower (docs/performance.md).
#pragma once

#include <stowage/plugin.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

namespace daf {

struct Tiling {
  static constexpr uint64_t kTileBytes = 512 << 10;
  static constexpr uint64_t kTileCols = 64;
  static constexpr uint64_t kVectorTile = uint64_t(1) << 20;

  bool matrix = false;
  uint64_t rows = 0, cols = 1, tile_rows = 1, tile_cols = 1;

  static Tiling for_array(bool matrix, uint64_t rows, uint64_t cols, size_t element_size) {
    Tiling t;
    t.matrix = matrix, t.rows = rows, t.cols = matrix ? cols : 1;
    if (!matrix) {
      t.tile_rows = std::clamp<uint64_t>(rows, 1, kVectorTile);
      return t;
    }
    uint64_t es = std::max<uint64_t>(element_size, 1);
    uint64_t column_bytes = std::max<uint64_t>(rows * es, 1);
    if (column_bytes * std::min(std::max<uint64_t>(cols, 1), kTileCols) <= kTileBytes) {
      t.tile_rows = std::max<uint64_t>(rows, 1);  // whole columns: each tile is one run
      t.tile_cols = std::clamp<uint64_t>(kTileBytes / column_bytes, 1, std::max<uint64_t>(cols, 1));
    } else {
      t.tile_cols = std::clamp<uint64_t>(cols, 1, kTileCols);
      t.tile_rows =
          std::clamp<uint64_t>(kTileBytes / (t.tile_cols * es), 1, std::max<uint64_t>(rows, 1));
    }
    return t;
  }

  uint64_t grid_rows() const { return (rows + tile_rows - 1) / tile_rows; }
  uint64_t grid_cols() const { return (cols + tile_cols - 1) / tile_cols; }
  uint64_t count() const { return grid_rows() * grid_cols(); }

  struct Tile {
    uint64_t row0, col0, nrows, ncols, flat;
    uint64_t elements() const { return nrows * ncols; }
  };

  // The tile at a chunk index (1 entry for vectors, 2 for matrices).
  Tile tile(const uint64_t* index, const std::string& node) const {
    uint64_t i = index[0], j = matrix ? index[1] : 0;
    if (i >= grid_rows() || j >= grid_cols())
      stowage::sdk::invalid(node + ": chunk index out of range");
    Tile t;
    t.row0 = i * tile_rows, t.col0 = j * tile_cols;
    t.nrows = std::min(tile_rows, rows - t.row0);
    t.ncols = std::min(tile_cols, cols - t.col0);
    t.flat = i * grid_cols() + j;
    return t;
  }

  void shape_of(const Tile& t, uint64_t* chunk_shape) const {
    chunk_shape[0] = t.nrows;
    if (matrix) chunk_shape[1] = t.ncols;
  }

  // Calls run(file_element, tile_element, n) for each contiguous run.
  template <class F>
  void for_each_run(const Tile& t, F&& run) const {
    if (t.nrows == rows) return run(t.col0 * rows, uint64_t(0), t.elements());
    for (uint64_t c = 0; c < t.ncols; ++c) run((t.col0 + c) * rows + t.row0, c * t.nrows, t.nrows);
  }
};

}  // namespace daf
