// The one exception type the runtime throws. what() is a complete diagnostic
// line: "[flagos] " followed by what failed and where; detail() is the same
// text without the prefix, for wrapping into a longer sentence.
#pragma once

#include <stdexcept>
#include <string>

namespace flagos {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& detail)
      : std::runtime_error("[flagos] " + detail), detail_(detail) {}
  const std::string& detail() const { return detail_; }

 private:
  std::string detail_;
};

}  // namespace flagos
