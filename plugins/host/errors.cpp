#include "errors.h"

#include <cstdarg>
#include <cstdio>
#include <string>

namespace flagos_host {
namespace {

thread_local std::string t_message;
// Used when even storing the message fails (out of memory); immutable.
thread_local const char* t_fallback = nullptr;

}  // namespace

flagos_status_t fail(flagos_status_t status, const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  try {
    t_message.assign(buf);
    t_fallback = nullptr;
  } catch (...) {
    t_fallback = "flagos host plugin: out of memory while recording an error";
  }
  return status;
}

const char* last_error() {
  return t_fallback != nullptr ? t_fallback : t_message.c_str();
}

}  // namespace flagos_host
