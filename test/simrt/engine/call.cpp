#include "call.h"

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>

#include "faults.h"
#include "stream.h"

namespace simrt {

Call::Call(const Vendor& vendor, const char* sym, Api api, Err fault)
    : v(vendor), symbol(sym), rt(runtime_for(vendor)), ts(thread_state(rt)), api_(api) {
  ts.rule_code = -1;  // a rule message answers only the call right after it
  int injected = -1;
  if (rt.poisoned) {
    blocked_ = true, result_ = fail_code(code(Err::InitializationError));
  } else if (in_host_callback()) {
    blocked_ = true, result_ = rule(Err::NotPermitted, "no runtime call is allowed inside a host function");
  } else if (api == Api::Driver && !rt.initialised) {
    blocked_ = true, result_ = code(Err::InitializationError);  // the driver's NOT_INITIALIZED
  } else if (fault_injected(sym, &injected)) {
    if (injected < 0) injected = code(fault);
    blocked_ = true, result_ = fail_code(injected);
    std::fprintf(stderr, "[simrt] %s: failure injected by SIMRT_FAIL (code %d)\n", sym, injected);
  } else if (api == Api::Runtime) {
    rt.initialised = true;  // the runtime initialises the driver (cuInit does it itself)
  }
}

int Call::fail_code(int c) {
  if (c != 0 && api_ == Api::Runtime) ts.last_error = c;
  return c;
}

int Call::rule(Err e, const char* fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ts.rule_text = std::string(symbol) + ": " + msg;
  ts.rule_code = code(e);
  print_rule_once(std::string(symbol) + '\x1f' + fmt, ts.rule_text);
  return fail_code(code(e));
}

// Once per (symbol, rule): a stress test must not flood the log.
void print_rule_once(const std::string& key, const std::string& line) {
  static std::mutex mu;
  static auto* seen = new std::set<std::string>;
  std::lock_guard<std::mutex> lock(mu);
  if (seen->insert(key).second) std::fprintf(stderr, "[simrt] %s\n", line.c_str());
}

bool Call::bad_device(int d, int* out) {
  if (rt.device_count() == 0) {
    *out = fail(Err::NoDevice);
    return true;
  }
  if (d < 0 || d >= rt.device_count()) {
    *out = rule(Err::InvalidDevice, "device %d is not an ordinal in [0, %d)", d, rt.device_count());
    return true;
  }
  return false;
}

const char* generic_error_text(Err e) {
  switch (e) {
    case Err::Success: return "no error";
    case Err::InvalidValue: return "invalid argument";
    case Err::MemoryAllocation: return "out of memory";
    case Err::InitializationError: return "initialization error";
    case Err::InvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case Err::NoDevice: return "no device is detected";
    case Err::InvalidDevice: return "invalid device ordinal";
    case Err::InvalidResourceHandle: return "invalid resource handle";
    case Err::NotReady: return "device not ready";
    case Err::PeerAccessAlreadyEnabled: return "peer access is already enabled";
    case Err::NotPermitted: return "operation not permitted";
    case Err::NotSupported: return "operation not supported";
    case Err::Count: break;
  }
  return "unrecognized error code";
}

Err err_of(const Vendor& v, int code) {
  // From the end: where a vendor maps two identities to one code (HIP has no
  // NotPermitted), the later, more specific entry names it.
  for (int i = kErrCount - 1; i >= 0; --i)
    if (v.errors[i].name != nullptr && v.errors[i].code == code) return static_cast<Err>(i);
  return Err::Count;
}

}  // namespace simrt
