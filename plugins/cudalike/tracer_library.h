// The vendor's CUPTI-shaped activity tracer (CUPTI, MUPTI) as a table of
// function pointers, declared here with cupti_activity.h's signatures (CUDA
// 13; handles as void*, enums as int) so that no SDK header is needed to
// build. Opened at the first profiler_create, never at the handshake: a
// plugin whose tracer is missing still loads and profiles nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "flagos/abi.h"

namespace flagos_cudalike {

// CUpti_BuffersCallbackRequestFunc / CUpti_BuffersCallbackCompleteFunc.
using TracerBufferRequested = void (*)(uint8_t** buffer, size_t* size, size_t* max_records);
using TracerBufferCompleted = void (*)(void* context, uint32_t stream_id, uint8_t* buffer, size_t size,
                                       size_t valid_size);
// CUpti_TimestampCallbackFunc.
using TracerClock = uint64_t (*)();

// X(member, symbol suffix, required, return type, parameters): the symbol is
// the vendor's tracer prefix + suffix ("cupti" + "ActivityEnable").
#define FLAGOS_CUDALIKE_TRACER_CALLS(X)                                                                  \
  X(activity_enable, "ActivityEnable", 1, int, (int))                                                     \
  X(activity_disable, "ActivityDisable", 1, int, (int))                                                   \
  X(register_callbacks, "ActivityRegisterCallbacks", 1, int, (TracerBufferRequested, TracerBufferCompleted)) \
  X(flush_all, "ActivityFlushAll", 1, int, (uint32_t))                                                    \
  X(next_record, "ActivityGetNextRecord", 1, int, (uint8_t*, size_t, void**))                             \
  X(push_external_id, "ActivityPushExternalCorrelationId", 1, int, (int, uint64_t))                       \
  X(pop_external_id, "ActivityPopExternalCorrelationId", 1, int, (int, uint64_t*))                        \
  X(stream_id, "GetStreamIdEx", 1, int, (void*, void*, uint8_t, uint32_t*))                               \
  X(timestamp, "GetTimestamp", 1, int, (uint64_t*))                                                       \
  X(dropped_records, "ActivityGetNumDroppedRecords", 0, int, (void*, uint32_t, size_t*))                 \
  X(register_clock, "ActivityRegisterTimestampCallback", 0, int, (TracerClock))                           \
  X(result_string, "GetResultString", 0, int, (int, const char**))                                        \
  X(get_version, "GetVersion", 0, int, (uint32_t*))

// CUptiResult values used here (cupti_result.h).
inline constexpr int kTracerSuccess = 0;
inline constexpr int kTracerNoMoreRecords = 12;  // CUPTI_ERROR_MAX_LIMIT_REACHED from GetNextRecord

struct TracerLibrary {
#define FLAGOS_CUDALIKE_TRACER_MEMBER(member, suffix, required, ret, params) ret(*member) params = nullptr;
  FLAGOS_CUDALIKE_TRACER_CALLS(FLAGOS_CUDALIKE_TRACER_MEMBER)
#undef FLAGOS_CUDALIKE_TRACER_MEMBER
  std::string path;      // the library opened, for messages
  std::string found_by;  // FLAGOS_TRACER_LIBRARY, folder, system path
  uint32_t version = 0;  // CUPTI_API_VERSION, 0 when the library does not say
};

// Whether this vendor has a tracer at all (Vendor::tracer).
bool has_tracer_library();

// The resolved library, opened at the first call; nullptr with a last-error
// message (RUNTIME_UNAVAILABLE, naming `fn` and why) when it cannot be used:
// not found, a call missing, or already loaded by another client of the
// activity API (torch's own profiler on a CUDA build of torch): one process
// cannot have two, and that client's trace already holds this plugin's work.
const TracerLibrary* load_tracer_library(const char* fn, flagos_status_t* status);
// The library if an earlier load succeeded, else nullptr. Never opens it.
const TracerLibrary* loaded_tracer_library();

// "<fn>: <prefix><call> failed: error <n> (<text>)" as the last error.
flagos_status_t tracer_fail(const char* fn, const char* call, int result);

}  // namespace flagos_cudalike
