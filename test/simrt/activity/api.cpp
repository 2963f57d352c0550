// Argument checks and results as cupti_activity.h documents them; the work is
// in the tracer, the buffers, the clock and the correlation stacks.
#include "api.h"

#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "../engine/observer.h"
#include "constants.h"
#include "correlation.h"
#include "records.h"
#include "rule.h"
#include "tracer.h"

namespace simrt::activity {
namespace {

std::string symbol(const Profile& p, const char* call) { return std::string(p.prefix) + call; }

}  // namespace

int get_version(const Profile&, uint32_t* version) {
  if (version == nullptr) return kInvalidParameter;
  *version = kApiVersion;
  return kSuccess;
}

int get_result_string(const Profile& p, int result, const char** str) {
  // "CUPTI_" + the enumerator's name, built once per result (strings live forever).
  static std::mutex mu;
  static auto* names = new std::map<int, std::string>;
  const char* name = nullptr;
#define SIMRT_ACTIVITY_RESULT_NAME(id, value, n) \
  if (result == (value)) name = n;
  SIMRT_ACTIVITY_RESULTS(SIMRT_ACTIVITY_RESULT_NAME)
#undef SIMRT_ACTIVITY_RESULT_NAME
  if (str == nullptr || name == nullptr) return kInvalidParameter;
  std::lock_guard<std::mutex> lock(mu);
  std::string& s = (*names)[result];
  if (s.empty()) s = std::string(p.upper) + "_" + name;
  *str = s.c_str();
  return kSuccess;
}

int register_callbacks(const Profile& p, RequestFn request, CompleteFn complete) {
  if (request == nullptr || complete == nullptr) return kInvalidParameter;
  Tracer::get().buffers().set_callbacks(request, complete, symbol(p, "ActivityRegisterCallbacks"));
  return kSuccess;
}

// Every kind of the enum is accepted; only MEMCPY, MEMSET and
// EXTERNAL_CORRELATION ever produce records here (tracer.h says why no kernels).
int enable(const Profile& p, int kind, bool on) {
  if (kind <= 0 || kind >= kKindCount) return kInvalidKind;
  Tracer::get().enable(p.key, kind, on);
  return kSuccess;
}

// Records are written only once their op completed, so every buffer holds
// complete records: the default and the forced flush deliver the same.
int flush_all(const Profile&, uint32_t) {
  Buffers& b = Tracer::get().buffers();
  if (!b.registered()) return kInvalidOperation;
  b.flush();
  return kSuccess;
}

int get_next_record(const Profile& p, uint8_t* buffer, size_t valid, void** record) {
  if (buffer == nullptr || record == nullptr) return kInvalidParameter;
  if (reinterpret_cast<uintptr_t>(buffer) % 8 != 0) {
    rule(symbol(p, "ActivityGetNextRecord"),
         "buffer %p is not 8-byte aligned (activity records are, cupti_activity.h PACKED_ALIGNMENT)",
         static_cast<void*>(buffer));
    return kInvalidParameter;
  }
  auto kind_at = [&](size_t off) {
    uint32_t k = 0;
    std::memcpy(&k, buffer + off, sizeof k);
    return k;
  };
  size_t off = 0;
  if (*record != nullptr) {  // the one after *record, which must be a record of this buffer
    auto* r = static_cast<uint8_t*>(*record);
    if (r < buffer || r >= buffer + valid || (r - buffer) % 8 != 0) return kInvalidParameter;
    off = static_cast<size_t>(r - buffer);
    size_t n = record_size(kind_at(off));
    if (n == 0) return kInvalidKind;
    off += n;
  }
  if (off >= valid) return kMaxLimitReached;
  size_t n = valid - off < sizeof(uint32_t) ? 0 : record_size(kind_at(off));
  if (n == 0 || off + n > valid) return kInvalidKind;  // unknown or incomplete
  *record = buffer + off;
  return kSuccess;
}

// All buffers are global, so context and stream id name no queue of their own.
int get_num_dropped_records(const Profile&, void*, uint32_t, size_t* dropped) {
  if (dropped == nullptr) return kInvalidParameter;
  *dropped = Tracer::get().buffers().take_dropped();
  return kSuccess;
}

int push_external_correlation_id(const Profile&, int kind, uint64_t id) { return push_external_id(kind, id); }

int pop_external_correlation_id(const Profile&, int kind, uint64_t* last) { return pop_external_id(kind, last); }

// The context is not checked (the simulated driver hands out no context
// handles), and per_thread changes nothing: NULL is always the legacy stream.
int get_stream_id_ex(const Profile& p, void*, void* stream, uint8_t, uint32_t* id) {
  if (id == nullptr) return kInvalidParameter;
  int rc = stream_id(p.key, stream, id);
  return rc == 0 ? kSuccess : rc == -1 ? kInvalidStream : kNotInitialized;
}

int get_timestamp(const Profile&, uint64_t* ns) {
  if (ns == nullptr) return kInvalidParameter;
  *ns = now();
  return kSuccess;
}

int register_timestamp_callback(const Profile&, ClockFn fn) {
  if (fn == nullptr) return kInvalidParameter;
  set_clock(fn);
  return kSuccess;
}

}  // namespace simrt::activity
