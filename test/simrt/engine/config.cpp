#include "config.h"

#include <cstdlib>

namespace simrt {
namespace {

long long env_int(const char* name, long long fallback, long long lo, long long hi) {
  const char* s = std::getenv(name);
  if (s == nullptr || *s == '\0') return fallback;
  char* end = nullptr;
  long long v = std::strtoll(s, &end, 10);
  if (*end != '\0' || v < lo || v > hi) return fallback;  // garbage: keep the default
  return v;
}

std::string env_str(const char* name) {
  const char* s = std::getenv(name);
  return s != nullptr ? s : "";
}

}  // namespace

const Config& config() {
  // Leaked on purpose: worker threads may read it during process exit.
  static const Config* c = [] {
    auto* cfg = new Config;
    cfg->devices = static_cast<int>(env_int("SIMRT_DEVICES", 2, 0, 64));
    cfg->memory_bytes = static_cast<size_t>(env_int("SIMRT_MEMORY_MB", 2048, 1, 1 << 20)) << 20;
    cfg->delay_us = static_cast<unsigned>(env_int("SIMRT_DELAY_US", 0, 0, 10'000'000));
    cfg->guard = env_str("SIMRT_GUARD") == "1";
    cfg->name = env_str("SIMRT_NAME");
    cfg->fail = env_str("SIMRT_FAIL");
    return cfg;
  }();
  return *c;
}

}  // namespace simrt
