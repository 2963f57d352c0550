// The records this library writes, laid out as cupti_activity.h (CUDA 13.0)
// lays out CUpti_ActivityMemcpy6, CUpti_ActivityMemset4 and
// CUpti_ActivityExternalCorrelation: packed, 8-byte aligned structs whose
// members are all naturally aligned, so plain structs reproduce them. The
// static_asserts pin every offset a client reads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "constants.h"

namespace simrt::activity {

struct alignas(8) MemcpyRecord {
  uint32_t kind = kKindMemcpy;
  uint8_t copy_kind = 0, src_kind = 0, dst_kind = 0, flags = 0;
  uint64_t bytes = 0, start = 0, end = 0;
  uint32_t device_id = 0, context_id = 0, stream_id = 0, correlation_id = 0;
  uint8_t zeros[48] = {};  // runtimeCorrelationId .. copyCount: not simulated
};

struct alignas(8) MemsetRecord {
  uint32_t kind = kKindMemset;
  uint32_t value = 0;
  uint64_t bytes = 0, start = 0, end = 0;
  uint32_t device_id = 0, context_id = 0, stream_id = 0, correlation_id = 0;
  uint16_t flags = 0, memory_kind = 0;
  uint8_t zeros[36] = {};  // pad, reserved0 .. pad2: not simulated
};

struct alignas(8) ExternalCorrelationRecord {
  uint32_t kind = kKindExternalCorrelation;
  uint32_t external_kind = 0;
  uint64_t external_id = 0;
  uint32_t correlation_id = 0;
  uint32_t reserved = 0;
};

static_assert(sizeof(MemcpyRecord) == 96 && offsetof(MemcpyRecord, copy_kind) == 4 &&
                  offsetof(MemcpyRecord, flags) == 7 && offsetof(MemcpyRecord, bytes) == 8 &&
                  offsetof(MemcpyRecord, start) == 16 && offsetof(MemcpyRecord, end) == 24 &&
                  offsetof(MemcpyRecord, device_id) == 32 && offsetof(MemcpyRecord, stream_id) == 40 &&
                  offsetof(MemcpyRecord, correlation_id) == 44,
              "CUpti_ActivityMemcpy6");
static_assert(sizeof(MemsetRecord) == 88 && offsetof(MemsetRecord, value) == 4 &&
                  offsetof(MemsetRecord, bytes) == 8 && offsetof(MemsetRecord, start) == 16 &&
                  offsetof(MemsetRecord, end) == 24 && offsetof(MemsetRecord, device_id) == 32 &&
                  offsetof(MemsetRecord, stream_id) == 40 && offsetof(MemsetRecord, correlation_id) == 44 &&
                  offsetof(MemsetRecord, flags) == 48 && offsetof(MemsetRecord, memory_kind) == 50,
              "CUpti_ActivityMemset4");
static_assert(sizeof(ExternalCorrelationRecord) == 24 && offsetof(ExternalCorrelationRecord, external_id) == 8 &&
                  offsetof(ExternalCorrelationRecord, correlation_id) == 16,
              "CUpti_ActivityExternalCorrelation");

// Bytes of a record of `kind` as written here; 0 for a kind this library
// never writes (GetNextRecord reads such a record as invalid).
inline size_t record_size(uint32_t kind) {
  switch (kind) {
    case kKindMemcpy: return sizeof(MemcpyRecord);
    case kKindMemset: return sizeof(MemsetRecord);
    case kKindExternalCorrelation: return sizeof(ExternalCorrelationRecord);
    default: return 0;
  }
}

}  // namespace simrt::activity
