// flagos streams as c10::Streams.
//
// Stream ids (per device): 0 is the plugin's default stream; 1..kPoolSize are
// the normal-priority pool, kPoolSize+1..2*kPoolSize the high-priority pool.
// Pool streams are created lazily on first use and live for the process (as
// CUDA's pool does): torch.Stream() hands them out round-robin, so creating
// many Stream objects never leaks plugin streams.
// The current stream is per thread and per device, default stream initially.
#pragma once

#include <c10/core/Stream.h>

#include "flagos/flagos.h"

namespace flagos::device {

constexpr int kPoolSize = 8;

// The plugin stream behind `stream` (a PrivateUse1 c10::Stream). Throws
// flagos::Error for an id this registry never handed out.
flagos_stream_t native(const c10::Stream& stream);

c10::Stream default_stream(c10::DeviceIndex device);
c10::Stream current_stream(c10::DeviceIndex device);  // -1: current device
// Makes `stream` current on its device for this thread; returns the previous.
c10::Stream exchange_stream(const c10::Stream& stream);
// The next pool stream (round-robin); high_priority picks the high pool.
c10::Stream pool_stream(c10::DeviceIndex device, bool high_priority);

// Convenience for kernels: the current plugin stream of `device`.
inline flagos_stream_t current_native(c10::DeviceIndex device) {
  return native(current_stream(device));
}

}  // namespace flagos::device
