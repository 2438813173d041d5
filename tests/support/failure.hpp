// test::failure_of: the error code and message of a call that must fail. Its
// own header so that codec_checks.hpp, which third parties copy, needs only
// this and <stowage/stowage.hpp>.
#pragma once

#include <stowage/stowage.hpp>

#include <string>

namespace test {

// The error code and message of a call that must fail, or "no error".
struct Failure {
  stowage::ErrorCode code = stowage::ErrorCode::ok;
  std::string message;
};
template <class F>
Failure failure_of(F&& f) {
  try {
    f();
  } catch (const stowage::Error& e) {
    return {e.code(), e.what()};
  }
  return {};
}

}  // namespace test
