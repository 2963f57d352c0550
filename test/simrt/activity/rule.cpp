#include "rule.h"

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <set>

namespace simrt::activity {

void rule(const std::string& symbol, const char* fmt, ...) {
  static std::mutex mu;
  static auto* seen = new std::set<std::string>;  // leaked: stream workers may report at exit
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!seen->insert(symbol + '\x1f' + fmt).second) return;
  }
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "[simrt] %s: %s\n", symbol.c_str(), msg);
}

}  // namespace simrt::activity
