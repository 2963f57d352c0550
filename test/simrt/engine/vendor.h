// The contract between the engine and a vendor library: everything a vendor
// may differ in is a value in this table, so that a vendor file holds data and
// an export list, never logic of its own.
#pragma once

#include <cstddef>

#define SIMRT_API __attribute__((visibility("default")))

namespace simrt {

// Engine-side error identities; each vendor maps them to its own codes/names.
enum class Err : int {
  Success,
  InvalidValue,
  MemoryAllocation,
  InitializationError,  // driver tables: "not initialised"
  InvalidMemcpyDirection,
  NoDevice,
  InvalidDevice,
  InvalidResourceHandle,
  NotReady,
  PeerAccessAlreadyEnabled,
  NotPermitted,
  NotSupported,
  Count
};
constexpr int kErrCount = static_cast<int>(Err::Count);

struct ErrorEntry {
  int code;          // the vendor's numeric value
  const char* name;  // the vendor's enumerator name; nullptr: not in this API
};

// Device attribute ids the sim answers (the vendor's enumerator values).
struct AttributeIds {
  int cc_major, cc_minor, multiprocessor_count, pci_bus_id, pci_device_id, pci_domain_id;
};

struct Vendor {
  const char* key;      // runtime instance: the runtime and driver of one SDK share it
  const char* prefix;   // symbol prefix ("cuda"), used in rule messages
  const char* display;  // "CUDA": default device name "Simulated CUDA Device"
  const char* kind_type;  // "cudaMemcpyKind", named in rule messages
  ErrorEntry errors[kErrCount];
  // Memcpy kinds; kind_default < 0: the vendor has no "infer from pointers".
  int kind_h2h, kind_h2d, kind_d2h, kind_d2d, kind_default;
  unsigned stream_flags_mask;      // valid stream-creation flags
  unsigned stream_non_blocking;    // the flag that opts out of legacy-stream sync
  unsigned event_flags_mask;       // valid event-creation flags
  unsigned event_disable_timing;
  unsigned event_interprocess;    // valid only together with event_disable_timing
  unsigned host_alloc_flags_mask;  // valid pinned-allocation flags
  AttributeIds attr;
  int priority_least, priority_greatest;
  int cc_major, cc_minor, multiprocessor_count;  // values reported for every device
};

}  // namespace simrt
