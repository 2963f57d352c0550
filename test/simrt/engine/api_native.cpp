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

}  // namespace simrt
