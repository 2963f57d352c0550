#include "streams.h"

#include <ATen/Context.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device/runtime.h"
#include "error.h"

namespace flagos::device {
namespace {

constexpr int kStreamsPerDevice = 1 + 2 * kPoolSize;

struct DeviceStreams {
  std::once_flag once[kStreamsPerDevice];
  flagos_stream_t handles[kStreamsPerDevice] = {};
  std::atomic<uint32_t> next[2] = {0, 0};
  // CUDA-ABI plugins: each stream's cudaStream_t as a c10 CUDA stream id,
  // asked of the plugin once (the core's streams live as long as the process).
  std::once_flag cuda_once[kStreamsPerDevice];
  c10::StreamId cuda_ids[kStreamsPerDevice] = {};
  c10::DeviceIndex cuda_index = -1;
};

std::vector<std::unique_ptr<DeviceStreams>>& table() {
  // Sized once, at first use after activation; the device count is stable.
  static std::vector<std::unique_ptr<DeviceStreams>> devices = [] {
    std::vector<std::unique_ptr<DeviceStreams>> v;
    for (int32_t i = 0; i < device_count(); ++i) v.push_back(std::make_unique<DeviceStreams>());
    return v;
  }();
  return devices;
}

DeviceStreams& streams_of(c10::DeviceIndex device) {
  check_index(device);
  return *table().at(device);
}

flagos_stream_t handle(c10::DeviceIndex device, c10::StreamId id) {
  if (id < 0 || id >= kStreamsPerDevice)
    throw Error("stream id " + std::to_string(id) + " on flagos:" + std::to_string(device) +
                " was not created by torch_fl");
  DeviceStreams& s = streams_of(device);
  std::call_once(s.once[id], [&] {
    const auto& plugin = active_plugin();
    if (id == 0) {
      plugin.check(plugin.api().get_default_stream(device, &s.handles[0]), "get_default_stream");
      return;
    }
    const bool high = id > kPoolSize;
    int32_t priority = 0;
    if (high && has_capability(device, FLAGOS_CAP_STREAM_PRIORITY))
      priority = properties(device).stream_priority_highest;
    plugin.check(plugin.api().stream_create(device, priority, &s.handles[id]), "stream_create");
  });
  return s.handles[id];
}

// This thread's stream state, in one thread_local: each is a call of
// __tls_get_addr from a shared library, and the cuda route asks for both.
struct ThreadStreams {
  std::vector<c10::StreamId> current;  // per device (ids are small)
  // current_cuda_stream's last answer, keyed by the flagos stream it translates.
  c10::DeviceIndex cuda_for_device = -1;
  c10::StreamId cuda_for_id = -1;
  c10::Stream cuda{c10::Stream::DEFAULT, c10::Device(c10::kCUDA, 0)};
};
thread_local ThreadStreams tls_streams;

c10::StreamId& current_id(ThreadStreams& mine, c10::DeviceIndex device) {
  if (mine.current.size() <= static_cast<size_t>(device)) [[unlikely]] mine.current.resize(device + 1, 0);
  return mine.current[device];
}
c10::StreamId& current_id(c10::DeviceIndex device) { return current_id(tls_streams, device); }

c10::DeviceIndex resolve(c10::DeviceIndex device) {
  return device < 0 ? static_cast<c10::DeviceIndex>(current_device()) : device;
}

c10::Stream make(c10::DeviceIndex device, c10::StreamId id) {
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, device), id);
}

// Set once torch's CUDA is initialised for interop (init_torch_cuda): before,
// no thread's CUDA stream follows a flagos one yet.
std::atomic<bool> cuda_interop_started{false};

const c10::impl::DeviceGuardImplInterface& cuda_guard() {
  static const c10::impl::DeviceGuardImplInterface* impl = c10::impl::getDeviceGuardImpl(c10::kCUDA);
  return *impl;
}

// Whether a thread's current CUDA stream `cuda` follows the flagos stream
// whose CUDA stream is `flagos`: it is that stream, or CUDA's default, which
// nobody chose (streams.h). Any other is one the thread chose itself.
bool follows_flagos(const c10::Stream& cuda, const c10::Stream& flagos) {
  return cuda == flagos || cuda.id() == 0;
}

// The flagos current stream of `device` changed from `from` to `to` on this
// thread: the CUDA one moves with it while the two are in step.
void follow_in_cuda(c10::DeviceIndex device, c10::StreamId from, c10::StreamId to) {
  if (!cuda_interop_started.load(std::memory_order_acquire) || !has_capability(device, FLAGOS_CAP_CUDA_ABI))
    return;
  const c10::Stream was = as_cuda_stream(make(device, from));
  const c10::Stream now = cuda_guard().getStream(was.device());
  if (!follows_flagos(now, was)) return;
  cuda_guard().exchangeStream(as_cuda_stream(make(device, to)));
}

}  // namespace

flagos_stream_t native(const c10::Stream& stream) {
  return handle(stream.device_index(), stream.id());
}

c10::StreamId stream_id_of(c10::DeviceIndex device, flagos_stream_t handle) {
  if (handle == nullptr || device < 0 || device >= device_count()) return -1;
  // Read after the work on the stream completed: its slot was written
  // before the stream was handed out, so no lock is needed.
  const DeviceStreams& s = streams_of(device);
  for (int id = 0; id < kStreamsPerDevice; ++id)
    if (s.handles[id] == handle) return id;
  return -1;
}

c10::Stream default_stream(c10::DeviceIndex device) {
  device = resolve(device);
  check_index(device);
  return make(device, 0);
}

c10::Stream current_stream(c10::DeviceIndex device) {
  device = resolve(device);
  check_index(device);
  return make(device, current_id(device));
}

c10::Stream exchange_stream(const c10::Stream& stream) {
  const c10::DeviceIndex device = stream.device_index();
  check_index(device);
  handle(device, stream.id());  // validates the id
  c10::StreamId& slot = current_id(device);
  c10::Stream previous = make(device, slot);
  if (slot == stream.id()) return previous;
  slot = stream.id();
  follow_in_cuda(device, previous.id(), stream.id());
  return previous;
}

c10::Stream pool_stream(c10::DeviceIndex device, bool high_priority) {
  device = resolve(device);
  DeviceStreams& s = streams_of(device);
  const uint32_t n = s.next[high_priority ? 1 : 0].fetch_add(1) % kPoolSize;
  return make(device, 1 + (high_priority ? kPoolSize : 0) + static_cast<c10::StreamId>(n));
}

void init_torch_cuda() {
  at::globalContext().lazyInitDevice(c10::kCUDA);
  cuda_interop_started.store(true, std::memory_order_release);
}

c10::Stream as_cuda_stream(const c10::Stream& stream) {
  const c10::DeviceIndex device = stream.device_index();
  const c10::StreamId id = stream.id();
  flagos_stream_t flagos = handle(device, id);  // validates the id, creates the stream
  DeviceStreams& s = streams_of(device);
  std::call_once(s.cuda_once[id], [&] {
    init_torch_cuda();
    const auto& plugin = active_plugin();
    if (!plugin.api().stream_native_handle)
      throw Error("plugin '" + plugin.name() + "' has no stream_native_handle: CUDA interop needs its cudaStream_t");
    void* cuda_stream = nullptr;
    plugin.check(plugin.api().stream_native_handle(flagos, &cuda_stream), "stream_native_handle");
    s.cuda_ids[id] = reinterpret_cast<c10::StreamId>(cuda_stream);
    s.cuda_index = static_cast<c10::DeviceIndex>(properties(device).interop_device_index);
  });
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::kCUDA, s.cuda_index), s.cuda_ids[id]);
}

c10::Stream current_cuda_stream(c10::DeviceIndex device) {
  // Asked on every call of the cuda route: each thread keeps its last answer.
  ThreadStreams& mine = tls_streams;
  device = resolve(device);
  check_index(device);
  const c10::StreamId id = current_id(mine, device);
  if (mine.cuda_for_device == device && mine.cuda_for_id == id) [[likely]] return mine.cuda;
  mine.cuda = as_cuda_stream(make(device, id));
  mine.cuda_for_device = device;
  mine.cuda_for_id = id;
  return mine.cuda;
}

std::optional<c10::Stream> enter_cuda_stream(c10::DeviceIndex device) {
  const c10::Stream want = current_cuda_stream(device);
  const c10::Stream now = cuda_guard().getStream(want.device());
  if (now == want) return std::nullopt;
  const c10::Stream previous = cuda_guard().exchangeStream(want);
  if (follows_flagos(previous, want)) return std::nullopt;  // CUDA's default: follows flagos from now on
  return previous;
}

}  // namespace flagos::device
