// The one hook a tracer library (activity/, the simulated CUPTI) has into the
// engine: it sees each copy and memset as it is enqueued and picks the
// function the stream runs for it, so it can time the op and record it when
// the op completes. Nothing else in the engine knows a tracer exists.
#pragma once

#include <cstdint>
#include <functional>

#include "memory.h"
#include "runtime.h"
#include "stream.h"
#include "vendor.h"

namespace simrt {

// What the engine knows of one op at enqueue time.
struct OpDesc {
  enum Kind { Copy, Set } kind;
  const Stream* stream;  // where it runs (its id and device)
  uint64_t bytes;
  bool async;  // issued by an *Async call, not by the blocking Memcpy
  // Where each end lies (a memset has only a device dst), and the ordinal of
  // each device end (-1 for host memory).
  Span::Kind src = Span::Device, dst = Span::Device;
  int src_device = -1, dst_device = -1;
  int value = 0;  // Set: the byte written
};

class OpObserver {
 public:
  // On the enqueuing thread, before the op is queued: the function the
  // stream runs in fn's place (fn itself to leave the op untraced).
  virtual std::function<void()> enqueued(const OpDesc& op, std::function<void()> fn) = 0;

 protected:
  ~OpObserver() = default;  // never deleted through the engine
};

// Installs `o` for the runtime instance `key` ("cuda", "ppu", "musa"), which it
// creates if no library used it yet; nullptr removes it. `o` must outlive
// every op it wrapped (tracer libraries are never unloaded: -z nodelete).
SIMRT_API void set_op_observer(const char* key, OpObserver* o);

// CUPTI's streamId of `handle` in instance `key`: NULL and 0x1 are the legacy
// stream of the calling thread's current device. 0 with *id set; -1: not a
// live stream of that instance; -2: the instance has no usable device.
SIMRT_API int stream_id(const char* key, void* handle, uint32_t* id);

// For the engine's enqueue paths: fn, or what the instance's observer made of it.
std::function<void()> observed(Runtime& rt, const OpDesc& op, std::function<void()> fn);

}  // namespace simrt
