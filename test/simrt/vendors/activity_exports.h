// The activity API's export list (cupti_activity.h, CUDA 13, with handles as
// void* and enums as int), generated for a prefix: P is cupti or mupti, A the
// library's simrt::activity::Profile. The behaviour is in activity/.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../activity/api.h"
#include "exports.h"

#define SIMRT_ACTIVITY_EXPORTS(P, A)                                                                       \
  SIMRT_EXPORT int P##GetVersion(uint32_t* v) { return simrt::activity::get_version(A, v); }              \
  SIMRT_EXPORT int P##GetResultString(int result, const char** str) {                                     \
    return simrt::activity::get_result_string(A, result, str);                                            \
  }                                                                                                       \
  SIMRT_EXPORT int P##ActivityRegisterCallbacks(simrt::activity::RequestFn requested,                     \
                                                simrt::activity::CompleteFn completed) {                  \
    return simrt::activity::register_callbacks(A, requested, completed);                                  \
  }                                                                                                       \
  SIMRT_EXPORT int P##ActivityEnable(int kind) { return simrt::activity::enable(A, kind, true); }         \
  SIMRT_EXPORT int P##ActivityDisable(int kind) { return simrt::activity::enable(A, kind, false); }       \
  SIMRT_EXPORT int P##ActivityFlushAll(uint32_t flag) { return simrt::activity::flush_all(A, flag); }     \
  SIMRT_EXPORT int P##ActivityGetNextRecord(uint8_t* buffer, size_t valid, void** record) {               \
    return simrt::activity::get_next_record(A, buffer, valid, record);                                    \
  }                                                                                                       \
  SIMRT_EXPORT int P##ActivityGetNumDroppedRecords(void* ctx, uint32_t stream_id, size_t* dropped) {      \
    return simrt::activity::get_num_dropped_records(A, ctx, stream_id, dropped);                          \
  }                                                                                                       \
  SIMRT_EXPORT int P##ActivityPushExternalCorrelationId(int kind, uint64_t id) {                          \
    return simrt::activity::push_external_correlation_id(A, kind, id);                                    \
  }                                                                                                       \
  SIMRT_EXPORT int P##ActivityPopExternalCorrelationId(int kind, uint64_t* last) {                        \
    return simrt::activity::pop_external_correlation_id(A, kind, last);                                   \
  }                                                                                                       \
  SIMRT_EXPORT int P##GetStreamIdEx(void* ctx, void* stream, uint8_t per_thread, uint32_t* id) {          \
    return simrt::activity::get_stream_id_ex(A, ctx, stream, per_thread, id);                             \
  }                                                                                                       \
  SIMRT_EXPORT int P##GetTimestamp(uint64_t* ns) { return simrt::activity::get_timestamp(A, ns); }        \
  SIMRT_EXPORT int P##ActivityRegisterTimestampCallback(simrt::activity::ClockFn fn) {                    \
    return simrt::activity::register_timestamp_callback(A, fn);                                           \
  }
