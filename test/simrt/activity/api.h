// The activity API's entry points, one per export (vendors/activity_exports.h
// generates the exports for a prefix). `Profile` is what differs between the
// libraries built from this code: CUPTI for cuda and ppu, MUPTI for musa.
#pragma once

#include <cstddef>
#include <cstdint>

#include "buffers.h"
#include "clock.h"

namespace simrt::activity {

struct Profile {
  const char* key;     // the runtime instance observed: "cuda", "ppu", "musa"
  const char* prefix;  // "cupti": symbol names in rule lines
  const char* upper;   // "CUPTI": result names ("CUPTI_SUCCESS")
};

int get_version(const Profile&, uint32_t* version);
int get_result_string(const Profile&, int result, const char** str);
int register_callbacks(const Profile&, RequestFn request, CompleteFn complete);
int enable(const Profile&, int kind, bool on);
int flush_all(const Profile&, uint32_t flag);
int get_next_record(const Profile&, uint8_t* buffer, size_t valid, void** record);
int get_num_dropped_records(const Profile&, void* context, uint32_t stream_id, size_t* dropped);
int push_external_correlation_id(const Profile&, int kind, uint64_t id);
int pop_external_correlation_id(const Profile&, int kind, uint64_t* last);
int get_stream_id_ex(const Profile&, void* context, void* stream, uint8_t per_thread, uint32_t* id);
int get_timestamp(const Profile&, uint64_t* ns);
int register_timestamp_callback(const Profile&, ClockFn fn);

}  // namespace simrt::activity
