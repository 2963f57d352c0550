// at::PrivateUse1HooksInterface: how ATen asks about the flagos device
// (availability, generators, pinned memory, pointers, storage resize).
#include <ATen/core/Generator.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/util/Exception.h>

#include "device/generator.h"
#include "device/host_allocator.h"
#include "device/runtime.h"
#include "device/storage_resize.h"

namespace flagos::device {
namespace {

struct FlagosHooks final : public at::PrivateUse1HooksInterface {
  void init() const override {}
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }
  bool hasPrimaryContext(c10::DeviceIndex device) const override {
    // Device contexts are the plugin's business and created lazily; a device
    // that exists can always be used.
    return device >= 0 && device < device_count();
  }
  c10::DeviceIndex deviceCount() const override {
    return static_cast<c10::DeviceIndex>(device_count());
  }
  void setCurrentDevice(c10::DeviceIndex device) const override { set_current_device(device); }
  c10::DeviceIndex getCurrentDevice() const override {
    return static_cast<c10::DeviceIndex>(current_device());
  }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override {
    auto old = getCurrentDevice();
    if (old != device) set_current_device(device);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override {
    return exchangeDevice(device);
  }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex device) const override {
    return default_generator(device);
  }
  at::Generator getNewGenerator(c10::DeviceIndex device) const override {
    return new_generator(device);
  }
  at::Allocator* getPinnedMemoryAllocator() const override {
    active_plugin();  // clear error before any plugin is active
    return host_allocator();
  }
  bool isPinnedPtr(const void* data) const override { return is_pinned(data); }
  at::Device getDeviceFromPtr(void* data) const override {
    const auto& plugin = active_plugin();
    int32_t kind = FLAGOS_POINTER_UNKNOWN;
    flagos_device_t device = -1;
    plugin.check(plugin.api().pointer_get_attributes(data, &kind, &device), "pointer_get_attributes");
    TORCH_CHECK(kind == FLAGOS_POINTER_DEVICE, "[flagos] pointer ", data,
                " is not flagos device memory");
    return at::Device(at::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device));
  }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t new_bytes) const override {
    resize_storage_bytes(storage, new_bytes);
  }
};

[[maybe_unused]] const bool registered = [] {
  at::RegisterPrivateUse1HooksInterface(new FlagosHooks());
  return true;
}();

}  // namespace
}  // namespace flagos::device
