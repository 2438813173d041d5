// stowage/resize.hpp -- the format command "resize" ({"shape": [...]}) of a
// chunked array, as zarr-python's Array.resize: the metadata takes the new
// shape, and the chunks lying wholly outside it go. A plugin parses the
// arguments with resize_shape and removes what for_each_chunk_outside names.
// Needs nlohmann_json (header-only, stays inside the plugin).
#ifndef STOWAGE_RESIZE_HPP
#define STOWAGE_RESIZE_HPP

#include <stowage/plugin.hpp>
#include <stowage/plugin_json.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stowage::sdk {

// The "shape" of a resize command's arguments: `ndim` non-negative
// integers (a resize keeps the rank, as zarr-python's does);
// INVALID_ARGUMENT naming `where` (the array's path) otherwise.
inline std::vector<uint64_t> resize_shape(std::string_view args_json, size_t ndim,
                                          const std::string& where) {
  const auto args = parse_json_object(args_json, where + ": the resize arguments");
  const auto it = args.find("shape");
  bool good = it != args.end() && it->is_array() && it->size() == ndim;
  std::vector<uint64_t> shape;
  if (good)
    for (const auto& v : *it) {
      good = good && v.is_number_unsigned();
      if (good) shape.push_back(v.template get<uint64_t>());
    }
  if (!good)
    invalid(where + ": resize takes {\"shape\": [" + std::to_string(ndim) +
            " non-negative integers]} (the array has " + std::to_string(ndim) +
            " dimensions), got " + std::string(args_json));
  return shape;
}

// For a format whose only command is "resize": UNSUPPORTED naming `where`
// (the store's path) and `format` for any other command name.
inline void require_resize_command(std::string_view name, const std::string& where,
                                   const char* format) {
  if (name != "resize")
    unsupported(where + ": " + format + " has no command '" + std::string(name) +
                "' (known: resize)");
}

// Calls fn(index) with the C-order index of each chunk of the grid of
// `old_shape` (in chunks of `chunks`) that the grid of `new_shape` lacks:
// the chunks a shrink removes, each once and only those (an edge chunk the
// new shape still reaches stays whole, as in zarr-python).
template <class Fn>
void for_each_chunk_outside(const std::vector<uint64_t>& old_shape,
                            const std::vector<uint64_t>& new_shape,
                            const std::vector<uint64_t>& chunks, Fn&& fn) {
  const size_t n = chunks.size();
  auto grid = [&](const std::vector<uint64_t>& s, size_t d) {
    return (s[d] + chunks[d] - 1) / chunks[d];
  };
  // Slab d: the chunks past the new grid along d, inside it along the
  // dimensions before d (those beyond are in an earlier slab).
  for (size_t d = 0; d < n; ++d) {
    std::vector<uint64_t> lo(n, 0), hi(n);
    for (size_t k = 0; k < n; ++k)
      hi[k] = k < d ? std::min(grid(old_shape, k), grid(new_shape, k)) : grid(old_shape, k);
    lo[d] = grid(new_shape, d);
    bool empty = false;
    for (size_t k = 0; k < n; ++k) empty = empty || lo[k] >= hi[k];
    if (empty) continue;
    std::vector<uint64_t> index = lo;
    for (;;) {
      fn(static_cast<const std::vector<uint64_t>&>(index));
      size_t k = n;
      while (k > 0 && ++index[k - 1] == hi[k - 1]) {
        index[k - 1] = lo[k - 1];
        --k;
      }
      if (k == 0) break;
    }
  }
}

}  // namespace stowage::sdk

#endif
