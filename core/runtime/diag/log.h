// Diagnostics: every message torch_fl prints goes through here, as exactly
// one stderr line starting with "[flagos]".
#pragma once

#include <string>
#include <string_view>

namespace flagos::diag {

void info(std::string_view message);
void warn(std::string_view message);
void error(std::string_view message);

// Prints `message` as a warning the first time `key` is seen in this process;
// later calls with the same key print nothing. Returns whether it printed.
bool warn_once(std::string_view key, std::string_view message);

// Test hook: route diagnostics into a string instead of stderr (nullptr
// restores stderr). Not thread-safe against concurrent logging.
void capture_for_testing(std::string* sink);

}  // namespace flagos::diag
