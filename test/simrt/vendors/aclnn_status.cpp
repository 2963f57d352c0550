#include "aclnn_status.h"

#include <cstdarg>
#include <cstdio>

#include "../engine/api.h"

namespace simrt_aclnn {

int done(int code) {
  if (code != kAclnnSuccess) simrt::set_recent_error(kAclnn, simrt::get_error_string(kAclnn, code));
  return code;
}

bool refused(const char* symbol, int* status) {
  int code = 0;
  if (simrt::call_blocked(kAclnn, symbol, &code)) {
    *status = done(code);
    return true;
  }
  if (simrt::native_initialised(kAclnn)) return false;
  // acl.h (CANN: "aclInit must be called first"), as libascendcl.so's calls;
  // an operator answers ACLNN_ERR_RUNTIME_ERROR where AscendCL answers
  // ACL_ERROR_UNINITIALIZE.
  *status = done(simrt::rule_violation(kAclnn, symbol, simrt::Err::InitializationError,
                                       "aclInit must be called before any other AscendCL call"));
  return true;
}

int fail(const char* symbol, int status, const char* fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  const int code = done(simrt::rule_violation(kAclnn, symbol, simrt::Err::InvalidValue, text));
  // Refused by the engine first (inside a host function): its code, not the rule's.
  return code == kAclnnParamInvalid ? status : code;
}

}  // namespace simrt_aclnn
