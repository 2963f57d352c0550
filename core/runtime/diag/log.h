// Diagnostics: every message torch_fl prints goes through here, as exactly
// one stderr line starting with "[flagos]".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace flagos::diag {

void info(std::string_view message);
void warn(std::string_view message);
void error(std::string_view message);

// Prints `message` as a warning the first time `key` is seen in this process;
// later calls with the same key print nothing. Returns whether it printed.
bool warn_once(std::string_view key, std::string_view message);

// `text` quoted inside a diagnostic: at most `max` characters, bytes outside
// printable ASCII as '?', "..." when cut, so a message stays one line whatever
// an environment value or name holds.
std::string printable(std::string_view text, size_t max = 40);

// `text` whole, with control bytes as '?': a path or message that may hold a
// newline (a TOML "\n" escape in an include) still prints as one line.
std::string one_line(std::string_view text);

// Test hook: route diagnostics into a string instead of stderr (nullptr
// restores stderr). Not thread-safe against concurrent logging.
void capture_for_testing(std::string* sink);

// Test hook: forgets the keys warn_once has seen, so that a harness running
// many inputs in one process (test/fuzz) sees each input's own first warning.
void forget_once_for_testing();

}  // namespace flagos::diag
