// What `n5_test_writer ... same WRITER ROUNDS` writes, shared with the test
// that checks it: each writer's chunk values and attributes differ from the
// other's everywhere, so any mix of the two shows.
#pragma once

#include <stowage/stowage.hpp>

#include <cstdint>
#include <string>

namespace n5test {

inline uint16_t same_value(uint64_t writer, uint64_t i) {
  return writer == 0 ? uint16_t(i * 7 + 3) : uint16_t(0xffff - i * 13);
}

// About 12 KB of JSON, so that writing it is not one small write.
inline stowage::json same_attributes(uint64_t writer, int round) {
  stowage::json payload = stowage::json::array();
  for (int i = 0; i < 1500; ++i) payload.push_back(writer * 1000000 + uint64_t(round));
  return stowage::json{{"writer", writer},
                       {"round", round},
                       {"w" + std::to_string(writer), true},
                       {"payload", payload}};
}

}  // namespace n5test
