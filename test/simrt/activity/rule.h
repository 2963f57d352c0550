// A rule of the activity API a client broke: one "[simrt] <symbol>: <rule>"
// line on stderr, once per (symbol, rule), like the engine's rule violations.
#pragma once

#include <string>

namespace simrt::activity {

void rule(const std::string& symbol, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace simrt::activity
