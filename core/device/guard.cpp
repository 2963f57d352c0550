// c10's device/stream/event interface for PrivateUse1 (torch.accelerator,
// torch.Stream/Event, DeviceGuard, autograd's device threads all use it).
// deviceCount() must never throw: no plugin or a failing one is 0 devices.
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include "device/device_allocator.h"
#include "device/events.h"
#include "device/runtime.h"
#include "device/streams.h"

namespace flagos::device {
namespace {

using c10::Device;
using c10::DeviceIndex;
using c10::Stream;

struct FlagosGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType static_type = c10::DeviceType::PrivateUse1;

  c10::DeviceType type() const override { return static_type; }

  Device exchangeDevice(Device d) const override {
    Device old = getDevice();
    if (old.index() != d.index()) setDevice(d);
    return old;
  }
  Device getDevice() const override {
    return Device(static_type, static_cast<DeviceIndex>(current_device()));
  }
  void setDevice(Device d) const override { set_current_device(d.index()); }
  void uncheckedSetDevice(Device d) const noexcept override {
    try {
      set_current_device(d.index());
    } catch (...) {
    }
  }
  DeviceIndex deviceCount() const noexcept override {
    return static_cast<DeviceIndex>(device_count());
  }
  c10::DeviceCapability getDeviceCapability(Device d) const override {
    c10::DeviceCapability cap;  // every dtype: storage is plain bytes
    (void)d;
    return cap;
  }

  Stream getStream(Device d) const override { return current_stream(d.index()); }
  Stream getDefaultStream(Device d) const override { return default_stream(d.index()); }
  Stream getNewStream(Device d, int priority) const override {
    return pool_stream(d.index(), priority < 0);
  }
  Stream getStreamFromGlobalPool(Device d, bool high_priority) const override {
    return pool_stream(d.index(), high_priority);
  }
  Stream exchangeStream(Stream s) const override { return exchange_stream(s); }
  void* getStreamNativeHandle(const Stream s) const override {
    const auto& plugin = active_plugin();
    TORCH_CHECK(plugin.api().stream_native_handle,
                "[flagos] plugin '", plugin.name(), "' exposes no native stream handle");
    void* native_handle = nullptr;
    plugin.check(plugin.api().stream_native_handle(native(s), &native_handle),
                 "stream_native_handle");
    return native_handle;
  }
  bool queryStream(const Stream& s) const override {
    const auto& plugin = active_plugin();
    flagos_status_t status = plugin.api().stream_query(native(s));
    plugin.check(status, "stream_query");
    return status == FLAGOS_SUCCESS;
  }
  void synchronizeStream(const Stream& s) const override {
    const auto& plugin = active_plugin();
    plugin.check(plugin.api().stream_synchronize(native(s)), "stream_synchronize");
  }
  void synchronizeDevice(const DeviceIndex index) const override {
    const auto& plugin = active_plugin();
    DeviceIndex d = index < 0 ? static_cast<DeviceIndex>(current_device()) : index;
    plugin.check(plugin.api().device_synchronize(d), "device_synchronize");
  }

  void record(void** event, const Stream& stream, const DeviceIndex device_index,
              const c10::EventFlag flag) const override {
    // DeviceIndex is a char type: print it as a number.
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(),
                "[flagos] Event device index ", static_cast<int>(device_index),
                " does not match recording stream's device index ",
                static_cast<int>(stream.device_index()), ".");
    auto*& e = reinterpret_cast<Event*&>(*event);
    if (!e) e = create_event(stream.device_index(), flag == c10::EventFlag::BACKEND_DEFAULT);
    record_event(e, native(stream));
  }
  void block(void* event, const Stream& stream) const override {
    auto* e = static_cast<Event*>(event);
    if (!e || !e->recorded) return;
    const auto& plugin = active_plugin();
    plugin.check(plugin.api().stream_wait_event(native(stream), e->handle), "stream_wait_event");
  }
  bool queryEvent(void* event) const override { return query_event(static_cast<Event*>(event)); }
  void synchronizeEvent(void* event) const override {
    synchronize_event(static_cast<Event*>(event));
  }
  void destroyEvent(void* event, const DeviceIndex) const noexcept override {
    destroy_event(static_cast<Event*>(event));
  }
  double elapsedTime(void* start, void* end, const DeviceIndex) const override {
    auto* a = static_cast<Event*>(start);
    auto* b = static_cast<Event*>(end);
    TORCH_CHECK_VALUE(a && b && a->timing && b->timing,
                      "Both events must be created with argument 'enable_timing=True'.");
    TORCH_CHECK_VALUE(a->recorded && b->recorded,
                      "Both events must be recorded before calculating elapsed time.");
    return elapsed_ms(a, b);
  }
  void recordDataPtrOnStream(const c10::DataPtr& data_ptr, const Stream& stream) const override {
    record_stream(data_ptr, stream);
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, FlagosGuardImpl);

}  // namespace
}  // namespace flagos::device
