// The child names of a format's directory, for formats that find their
// nodes by listing (N5, Zarr): where the server gives no listing (a folder
// URL that is 404 or 403, an HTML page), the message says why the tree
// cannot be known and what to do, not the listing's own failure.
#ifndef STOWAGE_NODE_LISTING_HPP
#define STOWAGE_NODE_LISTING_HPP

#include <stowage/storage.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace stowage::sdk {

inline std::vector<std::string> list_node_directory(const Storage& storage, const std::string& dir,
                                                    std::string_view format) {
  try {
    return storage.list(dir);
  } catch (const Error& e) {
    const std::string why = e.what();
    const bool unlisted = e.code() == STOWAGE_NOT_FOUND || e.code() == STOWAGE_UNSUPPORTED ||
                          why.find("HTTP 403") != std::string::npos;
    if (!unlisted) throw;
    fail(e.code(), dir + ": the server gives no directory listing, and " + std::string(format) +
                       " metadata here does not name the nodes; open a node by its own URL, or "
                       "serve a listing (nginx autoindex_format json)");
  }
}

}  // namespace stowage::sdk

#endif  // STOWAGE_NODE_LISTING_HPP
