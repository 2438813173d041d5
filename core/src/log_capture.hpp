// LogCapture: plugin warnings kept for stowage::copy's notes instead of standard error (host.cpp).
#pragma once

#include <stowage/stowage.hpp>

#include <string>
#include <vector>

namespace stowage::detail {

// Plugin warnings raised on this thread while a LogCapture lives go into its
// list instead of standard error: stowage::copy reports them in its notes
// (--json included). Per thread, so two copies in one process keep theirs.
class LogCapture {
 public:
  explicit LogCapture(std::vector<std::string>& into);
  ~LogCapture();
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  // Takes a message if a capture is active on this thread.
  static bool take(const std::string& message);

 private:
  std::vector<std::string>& into_;
  LogCapture* outer_;
};

}  // namespace stowage::detail
