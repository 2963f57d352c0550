// The activity records this plugin reads from CUPTI-shaped tracers, as byte
// offsets into cupti_activity.h's packed structs (CUDA 13.0 to 13.5:
// Kernel13, Memcpy6/7, Memset4/5, ExternalCorrelation). Every version of those structs
// since CUDA 11 keeps these leading members where they are; members past
// them change between versions, so none is read. Records are 8-byte aligned.
#pragma once

#include <cstdint>
#include <cstring>

namespace flagos_cudalike::activity {

// CUpti_ActivityKind values enabled and read.
inline constexpr int kMemcpy = 1;
inline constexpr int kMemset = 2;
inline constexpr int kDriver = 4;   // API records: enabled only because external
inline constexpr int kRuntime = 5;  // correlation records precede them (none without)
inline constexpr int kConcurrentKernel = 10;
inline constexpr int kExternalCorrelation = 39;

// CUpti_ExternalCorrelationKind this plugin pushes its ids under
// (CUSTOM2: kineto uses CUSTOM0 and CUSTOM1).
inline constexpr int kExternalKind = 5;

// CUpti_ActivityMemcpyKind values with a flagos copy kind.
inline constexpr int kCopyHtoD = 1, kCopyDtoH = 2, kCopyDtoD = 8, kCopyHtoH = 9, kCopyPtoP = 10;

template <class T>
T read(const void* record, size_t offset) {
  T v;
  std::memcpy(&v, static_cast<const char*>(record) + offset, sizeof v);
  return v;
}

inline int32_t kind(const void* r) { return read<int32_t>(r, 0); }

// What every stream activity has, at its kind's offsets.
struct Span {
  int kind = 0;  // kMemcpy, kMemset or kConcurrentKernel
  uint64_t start = 0, end = 0, bytes = 0;
  uint32_t device = 0, stream = 0, correlation = 0;
  int copy_kind = 0;           // CUpti_ActivityMemcpyKind, MEMCPY only
  const char* name = nullptr;  // the kernel's, CONCURRENT_KERNEL only (CUPTI-owned)
};

// Fills `s` from a MEMCPY, MEMSET or CONCURRENT_KERNEL record; false for others.
inline bool span(const void* r, Span* s) {
  s->kind = kind(r);
  switch (s->kind) {
    case kMemcpy:  // kind, copyKind u8 @4, bytes @8, start @16, end @24, device @32, stream @40, correlation @44
      s->copy_kind = read<uint8_t>(r, 4);
      [[fallthrough]];
    case kMemset:  // the same from bytes on
      s->bytes = read<uint64_t>(r, 8);
      s->start = read<uint64_t>(r, 16);
      s->end = read<uint64_t>(r, 24);
      s->device = read<uint32_t>(r, 32);
      s->stream = read<uint32_t>(r, 40);
      s->correlation = read<uint32_t>(r, 44);
      return true;
    case kConcurrentKernel:  // start @16, end @24, device @40, stream @48, correlation @92, name @104
      s->start = read<uint64_t>(r, 16);
      s->end = read<uint64_t>(r, 24);
      s->device = read<uint32_t>(r, 40);
      s->stream = read<uint32_t>(r, 48);
      s->correlation = read<uint32_t>(r, 92);
      s->name = read<const char*>(r, 104);
      return true;
    default:
      return false;
  }
}

// EXTERNAL_CORRELATION: externalKind @4, externalId @8, correlationId @16.
inline bool external(const void* r, int* ext_kind, uint64_t* external_id, uint32_t* correlation) {
  if (kind(r) != kExternalCorrelation) return false;
  *ext_kind = read<int32_t>(r, 4);
  *external_id = read<uint64_t>(r, 8);
  *correlation = read<uint32_t>(r, 16);
  return true;
}

}  // namespace flagos_cudalike::activity
