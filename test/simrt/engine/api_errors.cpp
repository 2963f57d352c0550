// Last error and error texts. These never fail, are never blocked (a forked
// child or a callback may still ask), and are not fault-injectable.
#include "api.h"
#include "call.h"

namespace simrt {

int get_last_error(const Vendor& v) {
  ThreadState& ts = thread_state(runtime_for(v));
  int e = ts.last_error;
  ts.last_error = 0;
  return e;
}

int peek_at_last_error(const Vendor& v) { return thread_state(runtime_for(v)).last_error; }

const char* get_error_name(const Vendor& v, int code) {
  Err e = err_of(v, code);
  return e == Err::Count ? "unrecognized error code" : v.errors[static_cast<int>(e)].name;
}

const char* get_error_string(const Vendor& v, int code) {
  ThreadState& ts = thread_state(runtime_for(v));
  // The rule a failing call broke, for the next call on this thread.
  if (ts.rule_code == code && code != 0) return ts.rule_text.c_str();
  return generic_error_text(err_of(v, code));
}

}  // namespace simrt
