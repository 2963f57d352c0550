// How an aclnn call of libopapi.so fails: through the engine (the ascend
// instance's kAclnn table), so a broken rule prints its one
// "[simrt] <symbol>: <rule>" line and becomes the thread's aclGetRecentErrMsg()
// text, the same message libascendcl.so's calls set.
#pragma once

#include "ascend_vendor.h"

namespace simrt_aclnn {

using simrt_ascend::kAclnn;
using simrt_ascend::kAclnnInner;
using simrt_ascend::kAclnnParamInvalid;
using simrt_ascend::kAclnnParamNullptr;
using simrt_ascend::kAclnnRuntimeError;
using simrt_ascend::kAclnnSuccess;

// The checks an operator call makes first: the engine's (a forked child,
// a call from inside a host function, SIMRT_FAIL) and AscendCL's init rule.
// true with *status, the code to return at once.
bool refused(const char* symbol, int* status);

// A broken rule: reported, and `status` returned (161001 or 161002).
int fail(const char* symbol, int status, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

// An engine result under kAclnn: a failure's text becomes the recent message.
int done(int code);

}  // namespace simrt_aclnn
