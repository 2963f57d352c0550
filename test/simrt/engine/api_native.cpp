#include <string>

#include "api.h"
#include "call.h"
#include "runtime.h"

namespace simrt {

bool call_blocked(const Vendor& v, const char* symbol, int* code) {
  Call c(v, symbol);
  *code = c.result();
  return c.blocked();
}

int rule_violation(const Vendor& v, const char* symbol, Err e, const char* text) {
  Call c(v, symbol);
  if (c.blocked()) return c.result();
  // The text as its own format (each '%' doubled): Call::rule prints a rule
  // once per (symbol, format), and two rules of one call must both show.
  std::string format;
  for (const char* p = text; *p != '\0'; ++p) format.append(*p == '%' ? 2 : 1, *p);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-security"
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  return c.rule(e, format.c_str());
#pragma GCC diagnostic pop
}

int pointer_device(const Vendor& v, const void* ptr, size_t n) {
  const Span s = runtime_for(v).memory().classify(ptr, n);
  return s.kind == Span::Device ? s.device : s.kind == Span::Bad ? -2 : -1;
}

bool native_init(const Vendor& v) { return runtime_for(v).native_initialised.exchange(true); }

bool native_initialised(const Vendor& v) { return runtime_for(v).native_initialised.load(); }

void set_recent_error(const Vendor& v, const char* text) {
  thread_state(runtime_for(v)).recent = text != nullptr ? text : "";
}

const char* recent_error(const Vendor& v) {
  const std::string& r = thread_state(runtime_for(v)).recent;
  return r.empty() ? nullptr : r.c_str();
}

char* device_rw(const Vendor& v, const void* p, size_t n) {
  const Span s = runtime_for(v).memory().classify(p, n);
  return s.kind == Span::Device ? s.rw : nullptr;
}

int stream_device(const Vendor& v, void* stream) {
  Runtime& rt = runtime_for(v);
  if (stream == nullptr || stream == reinterpret_cast<void*>(0x1)) {
    const int d = thread_state(rt).device;
    return d >= 0 && d < rt.device_count() ? d : -1;
  }
  std::shared_ptr<Stream> s = rt.find_stream(stream);
  return s ? s->device : -1;
}

void stream_rule_violation(const Vendor& v, const char* symbol, const char* text) {
  (void)v;  // the line names the symbol; no thread state is the caller's here
  print_rule_once(std::string(symbol) + '\x1f' + text, std::string(symbol) + ": " + text);
}

}  // namespace simrt
