// The one simulated Ascend runtime instance, as two tables over it: AscendCL's
// codes (libascendcl.so, ascend.cpp) and the aclnn operators' (libopapi.so,
// aclnn_*.cpp). Both name the key "ascend", so the two libraries share the
// engine's devices, memory, streams, per-thread errors and init state.
#pragma once

#include "../engine/vendor.h"

namespace simrt_ascend {

// The engine's identities as ACL codes (acl_base.h, error_codes/rt_error_codes.h).
inline const simrt::Vendor kAcl = {
    "ascend", "aclrt", "Ascend", "aclrtMemcpyKind",
    {{0, "ACL_SUCCESS"},
     {107000, "ACL_ERROR_RT_PARAM_INVALID"},
     {207001, "ACL_ERROR_RT_MEMORY_ALLOCATION"},
     {100001, "ACL_ERROR_UNINITIALIZE"},
     {100000, "ACL_ERROR_INVALID_PARAM"},  // a kind outside aclrtMemcpyKind
     {207004, "ACL_ERROR_RT_NO_DEVICE"},
     {107001, "ACL_ERROR_RT_INVALID_DEVICEID"},
     {107017, "ACL_ERROR_RT_INVALID_HANDLE"},
     {507006, "ACL_ERROR_RT_EVENT_NOT_COMPLETE"},
     {107000, nullptr},  // enabling peer access twice: no code of its own
     {207006, "ACL_ERROR_RT_NO_PERMISSION"},
     {207000, "ACL_ERROR_RT_FEATURE_NOT_SUPPORT"}},
    /*kinds h2h,h2d,d2h,d2d; no default*/ 0, 1, 2, 3, -1,
    // ACL has no legacy-stream synchronisation: every stream is the engine's
    // non-blocking kind (an engine-side bit, never an ACL flag).
    /*stream flags*/ 0x80000000u, 0x80000000u,
    // Event flags are ACL's own, checked here; the engine times every event.
    /*event flags, disable timing, interprocess*/ 0, 0, 0,
    /*aclrtMallocHost takes no flags*/ 0,
    // aclrtGetDeviceInfo: ACL_DEV_ATTR_AICORE_CORE_NUM (101) only.
    /*attr*/ {-1, -1, 101, -1, -1, -1},
    // aclrtDeviceGetStreamPriorityRange (8.x): 0 highest .. 7 lowest.
    /*priority least, greatest*/ 7, 0,
    /*reported cc, AI cores*/ 0, 0, 24,
};

// aclnnStatus values: CANN's names; the exact numbers are unverified on hardware.
constexpr int kAclnnSuccess = 0;
constexpr int kAclnnParamNullptr = 161001;   // ACLNN_ERR_PARAM_NULLPTR
constexpr int kAclnnParamInvalid = 161002;   // ACLNN_ERR_PARAM_INVALID
constexpr int kAclnnRuntimeError = 361001;   // ACLNN_ERR_RUNTIME_ERROR
constexpr int kAclnnInner = 561000;          // ACLNN_ERR_INNER

// The same instance with aclnn's codes: what an operator call returns when
// the engine refuses it (fork, host-function re-entry, SIMRT_FAIL, a stream
// that is not live) or a rule of the operator library is broken.
inline const simrt::Vendor kAclnn = {
    "ascend", "aclnn", "Ascend", "aclrtMemcpyKind",
    {{kAclnnSuccess, "ACLNN_SUCCESS"},
     {kAclnnParamInvalid, "ACLNN_ERR_PARAM_INVALID"},
     {kAclnnInner, "ACLNN_ERR_INNER"},
     {kAclnnRuntimeError, "ACLNN_ERR_RUNTIME_ERROR"},
     {kAclnnParamInvalid, nullptr},
     {kAclnnRuntimeError, nullptr},
     {kAclnnRuntimeError, nullptr},
     {kAclnnRuntimeError, nullptr},
     {kAclnnRuntimeError, nullptr},
     {kAclnnParamInvalid, nullptr},
     {kAclnnRuntimeError, nullptr},
     {kAclnnRuntimeError, nullptr}},
    0, 1, 2, 3, -1, 0x80000000u, 0x80000000u, 0, 0, 0, 0, {-1, -1, 101, -1, -1, -1}, 7, 0, 0, 0, 24,
};

}  // namespace simrt_ascend
