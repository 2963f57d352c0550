// CUPTI's numbers, declared here (no NVIDIA header is included): values from
// cupti_result.h, cupti_activity.h and cupti_version.h of CUDA 13.0. MUPTI
// (musa) is the same API renamed; its numbers are assumed equal (unverified).
#pragma once

#include <cstdint>

namespace simrt::activity {

// CUptiResult: the codes this library returns, with their enumerator names
// after the prefix (cuptiGetResultString answers "CUPTI_" + name).
#define SIMRT_ACTIVITY_RESULTS(X)                                                         \
  X(kSuccess, 0, "SUCCESS")                                                               \
  X(kInvalidParameter, 1, "ERROR_INVALID_PARAMETER")   /* NULL out-parameter, bad kind  */ \
  X(kInvalidOperation, 7, "ERROR_INVALID_OPERATION")   /* FlushAll before RegisterCallbacks */ \
  X(kMaxLimitReached, 12, "ERROR_MAX_LIMIT_REACHED")   /* GetNextRecord: no more records */ \
  X(kNotInitialized, 15, "ERROR_NOT_INITIALIZED")      /* GetStreamIdEx: no usable device */ \
  X(kQueueEmpty, 18, "ERROR_QUEUE_EMPTY")              /* Pop of an empty external-id stack */ \
  X(kInvalidStream, 20, "ERROR_INVALID_STREAM")        /* GetStreamIdEx of an unknown stream */ \
  X(kInvalidKind, 21, "ERROR_INVALID_KIND")            /* no such activity kind; a bad record */ \
  X(kUnknown, 999, "ERROR_UNKNOWN")

#define SIMRT_ACTIVITY_RESULT_ENUM(id, value, name) id = value,
enum Result : int { SIMRT_ACTIVITY_RESULTS(SIMRT_ACTIVITY_RESULT_ENUM) };
#undef SIMRT_ACTIVITY_RESULT_ENUM

// CUPTI_API_VERSION (cupti_version.h, CUDA 13.0).
constexpr uint32_t kApiVersion = 130001;

// CUpti_ActivityKind: the kinds this library acts on. Enable accepts every
// kind in [1, kKindCount); the others are accepted and record nothing.
constexpr int kKindMemcpy = 1;
constexpr int kKindMemset = 2;
constexpr int kKindKernel = 3;
constexpr int kKindDriver = 4;   // API records: external correlation needs one of these two
constexpr int kKindRuntime = 5;
constexpr int kKindConcurrentKernel = 10;
constexpr int kKindExternalCorrelation = 39;
constexpr int kKindCount = 55;  // CUPTI_ACTIVITY_KIND_COUNT

// CUpti_ActivityMemcpyKind.
constexpr uint8_t kCopyHtoD = 1, kCopyDtoH = 2, kCopyDtoD = 8, kCopyHtoH = 9, kCopyPtoP = 10;
// CUpti_ActivityMemoryKind.
constexpr uint8_t kMemoryPageable = 1, kMemoryPinned = 2, kMemoryDevice = 3;
// CUpti_ActivityFlag: MEMCPY_ASYNC and MEMSET_ASYNC (both 1 << 0).
constexpr uint8_t kFlagAsync = 1;

// CUpti_ExternalCorrelationKind: UNKNOWN (1) .. CUSTOM2 (5) are valid.
constexpr int kExternalKindFirst = 1;
constexpr int kExternalKindCount = 6;  // CUPTI_EXTERNAL_CORRELATION_KIND_SIZE

}  // namespace simrt::activity
