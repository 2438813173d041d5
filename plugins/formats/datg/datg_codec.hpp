// datg_codec.hpp -- the codec of a datg matrix, obtained through the host:
// one sdk::HostCodec serves every thread (the host pools the codec's
// per-thread contexts), so datg keeps no pool of its own.
#pragma once

#include <stowage/plugin.hpp>

#include <cstdint>

namespace datg {

// The host codec configs for the two flavours of containers.
inline const char* codec_config_for_flag(uint8_t flag) {
  return flag == 1 ? R"({"type":"lz4","framing":"frame"})" : R"({"type":"lz4"})";
}

}  // namespace datg
