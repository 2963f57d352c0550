#include "routes/host_allocation.h"

#include <c10/core/CPUAllocator.h>

#include <cstring>
#include <mutex>

#include "device/device_allocator.h"
#include "device/runtime.h"
#include "memory/caching_allocator.h"

namespace flagos::routes {
namespace {

thread_local c10::DeviceIndex tls_device = -1;

c10::DeleterFnPtr flagos_deleter() {
  static const c10::DeleterFnPtr d = device::allocator()->raw_deleter();
  return d;
}

c10::DataPtr allocate_as_cpu(c10::DeviceIndex device, size_t bytes) {
  c10::DataPtr dp = device::allocate_on(device, bytes);
  dp.unsafe_set_device(c10::Device(c10::kCPU));
  return dp;
}

struct FlagosAsCpu final : c10::Allocator {
  c10::DataPtr allocate(size_t bytes) override {
    const c10::DeviceIndex d = tls_device >= 0 ? tls_device
                                               : static_cast<c10::DeviceIndex>(device::current_device());
    return allocate_as_cpu(d, bytes);
  }
  c10::DeleterFnPtr raw_deleter() const override { return flagos_deleter(); }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);  // host-addressable by construction
  }
};

FlagosAsCpu g_flagos_as_cpu;
c10::Allocator* g_base = nullptr;

void redirect_free(void* ptr);

struct RedirectingCpuAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t bytes) override {
    if (tls_device >= 0) return allocate_as_cpu(tls_device, bytes);
    return g_base->allocate(bytes);
  }
  c10::DeleterFnPtr raw_deleter() const override {
    return g_base->raw_deleter() ? &redirect_free : nullptr;
  }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    g_base->copy_data(dest, src, count);
  }
};

RedirectingCpuAllocator g_redirect;

// raw_allocate()/raw_deleter() pairs: memory from either source.
void redirect_free(void* ptr) {
  if (!ptr) return;
  if (plugin::active()) {
    for (int32_t d = 0; d < device::device_count(); ++d) {
      if (device::caching_allocator(static_cast<c10::DeviceIndex>(d)).owns(ptr)) {
        flagos_deleter()(ptr);
        return;
      }
    }
  }
  g_base->raw_deleter()(ptr);
}

}  // namespace

HostAllocationScope::HostAllocationScope(c10::DeviceIndex device) : previous_(tls_device) {
  tls_device = device;
}
HostAllocationScope::~HostAllocationScope() { tls_device = previous_; }

void install_cpu_allocator_redirect() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_base = c10::GetCPUAllocator();
    // Priority above the default registration so the wrapper is kept.
    c10::SetCPUAllocator(&g_redirect, /*priority=*/1);
  });
}

c10::Allocator* flagos_as_cpu_allocator() { return &g_flagos_as_cpu; }

bool is_flagos_allocation(const c10::DataPtr& data_ptr) {
  return data_ptr.get_deleter() == flagos_deleter();
}

}  // namespace flagos::routes
