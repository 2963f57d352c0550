// Helpers shared by the C++ tests: locating built plugins, scoped env vars,
// capturing [flagos] diagnostics.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

#include "diag/log.h"

namespace flagos::test {

inline std::string fake_plugin(const std::string& mode) {
  return std::string(FLAGOS_TEST_PLUGIN_DIR) + "/fake_" + mode + "/libflagos_fake_" + mode + ".so";
}
inline std::string host_plugin() { return FLAGOS_HOST_PLUGIN_PATH; }

// Sets (or unsets, with nullopt) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1); else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1); else ::unsetenv(name_);
  }
 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Collects [flagos] lines emitted during its lifetime.
class CapturedLog {
 public:
  CapturedLog() { diag::capture_for_testing(&text_); }
  ~CapturedLog() { diag::capture_for_testing(nullptr); }
  const std::string& text() const { return text_; }
  int lines() const {
    int n = 0;
    for (char c : text_) n += c == '\n';
    return n;
  }
 private:
  std::string text_;
};

}  // namespace flagos::test
