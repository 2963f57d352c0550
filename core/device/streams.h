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

#include <optional>

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

// The c10 stream id of the plugin stream `handle` on `device`, or -1 when
// torch_fl did not create it (or has not yet). For naming streams in profiles.
c10::StreamId stream_id_of(c10::DeviceIndex device, flagos_stream_t handle);

// Convenience for kernels: the current plugin stream of `device`.
// On CUDA-ABI plugins: the c10 CUDA stream that is the same cudaStream_t as
// flagos stream `stream` (an external CUDA stream, whose c10 id is the
// handle: c10/cuda/CUDAStream). The handle is asked of the plugin once per
// stream (the core's streams live as long as the process); the first call
// also initialises torch's own CUDA (init_torch_cuda). Throws for plugins
// without stream_native_handle.
c10::Stream as_cuda_stream(const c10::Stream& stream);
// as_cuda_stream(current_stream(device)), cached per thread.
c10::Stream current_cuda_stream(c10::DeviceIndex device);

// On CUDA-ABI plugins torch's current CUDA stream follows the flagos one, per
// thread: a CUDA kernel called for flagos launches on torch's current CUDA
// stream, and keeping the two in step spares each call swapping them twice.
// A thread's CUDA stream still at CUDA's default, which nobody chose, is
// taken over at its first call; one the thread chose (torch.cuda.stream) is
// only swapped for the call and then restored. While in step, a change of
// the flagos current stream (exchange_stream) moves the CUDA one with it.
//
// For a call of a CUDA kernel on `device`: makes torch's current CUDA stream
// there the flagos current stream's. Returns the CUDA stream to restore
// after the call, none when the thread's CUDA stream now follows flagos.
std::optional<c10::Stream> enter_cuda_stream(c10::DeviceIndex device);

// Initialises torch's CUDA runtime state (its caching allocator, per-device
// streams) once, as torch.cuda's lazy init would: kernels boxed to CUDA and
// CUDA memory figures need it, and nothing else may have done it (importing
// torch_fl does not touch CUDA, so that os.fork() stays safe until first use).
void init_torch_cuda();

inline flagos_stream_t current_native(c10::DeviceIndex device) {
  return native(current_stream(device));
}

}  // namespace flagos::device
