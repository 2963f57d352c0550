// Every exported call runs inside a Call: the checks that come before any
// work (forked child, host-callback re-entry, driver not initialised, fault
// injection), and the way out (vendor code, last error, rule message).
#pragma once

#include <string>

#include "runtime.h"
#include "vendor.h"

namespace simrt {

enum class Api { Runtime, Driver, DriverInit };

class Call {
 public:
  // `fault` is the error an injected failure returns when SIMRT_FAIL names no code.
  Call(const Vendor& v, const char* symbol, Api api = Api::Runtime, Err fault = Err::InvalidValue);

  bool blocked() const { return blocked_; }  // the call must return result() at once
  int result() const { return result_; }

  int ok() { return code(Err::Success); }
  int fail(Err e) { return fail_code(code(e)); }
  // A violated rule: the message is kept for GetErrorString and printed once.
  int rule(Err e, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
  int code(Err e) const { return v.errors[static_cast<int>(e)].code; }

  // Device checks in the vendor's terms: NoDevice when there are none.
  bool bad_device(int d, int* out);
  int current_device() const { return ts.device; }
  // Marks device d's primary context active (first use by the runtime).
  void touch(int d) { rt.device(d).ctx_active = true; }

  const Vendor& v;
  const char* const symbol;
  Runtime& rt;
  ThreadState& ts;

 private:
  int fail_code(int c);
  Api api_;
  bool blocked_ = false;
  int result_ = 0;
};

const char* generic_error_text(Err e);
// Prints "[simrt] <line>" to stderr once per key (Call::rule's key: symbol and format).
void print_rule_once(const std::string& key, const std::string& line);
// The Err whose vendor code is `code`, or Err::Count.
Err err_of(const Vendor& v, int code);

}  // namespace simrt
