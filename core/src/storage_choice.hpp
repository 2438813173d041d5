// A location's storage scheme, and the refusal to write where its storage cannot.
#pragma once

#include <stowage/stowage.hpp>

#include <string>
#include <string_view>

namespace stowage {

// The storage scheme of a location: "http" for "http://h/x.n5", "file" for
// a path (no "<scheme>://").
std::string storage_scheme(std::string_view location);

// Refuses (UNSUPPORTED, naming the location) to write where the storage
// backend of the location cannot: over http, say, a format would otherwise
// only fail at its first write. A scheme without a backend is left to the
// format to report.
void require_writable_storage(const std::string& location, Registry& registry);

}  // namespace stowage
