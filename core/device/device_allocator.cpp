#include "device/device_allocator.h"

#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device/runtime.h"
#include "device/stats_glue.h"
#include "device/streams.h"
#include "env/registry.h"
#include "memory/caching_allocator.h"
#include "memory/out_of_memory.h"
#include "profiler/device_activity.h"

namespace flagos::device {
namespace {

using CachingStats = c10::CachingDeviceAllocator::DeviceStats;

struct Allocators {
  std::once_flag once;
  std::vector<std::unique_ptr<memory::CachingAllocator>> per_device;
};

Allocators& allocators() {
  static Allocators a;
  std::call_once(a.once, [] {
    memory::AllocatorConfig config;
    config.caching = env::get_bool("FLAGOS_USE_CACHING_ALLOCATOR");
    auto plugin = active_plugin_shared();
    for (int32_t d = 0; d < device_count(); ++d)
      a.per_device.push_back(std::make_unique<memory::CachingAllocator>(plugin, d, config));
  });
  return a;
}

// On CUDA-ABI plugins, kernels boxed to CUDA allocate their outputs from
// torch's CUDA caching allocator on the same GPU: flagos memory figures
// include it, and flagos cache control reaches it too.
c10::DeviceAllocator* interop_allocator(c10::DeviceIndex device, c10::DeviceIndex* cuda_index) {
  if (!has_capability(device, FLAGOS_CAP_CUDA_ABI) || !c10::impl::hasDeviceGuardImpl(c10::kCUDA)) return nullptr;
  init_torch_cuda();
  *cuda_index = static_cast<c10::DeviceIndex>(properties(device).interop_device_index);
  c10::DeviceAllocator* cuda = c10::getDeviceAllocator(c10::kCUDA);
  return cuda && cuda->initialized() ? cuda : nullptr;
}

void add_interop_stats(c10::DeviceIndex device, CachingStats& out) {
  c10::DeviceIndex cuda_index = -1;
  c10::DeviceAllocator* cuda = interop_allocator(device, &cuda_index);
  if (!cuda) return;
  add_to(cuda->getDeviceStats(cuda_index), out);
}

void delete_block(void* ptr);

class FlagosDeviceAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t bytes) override {
    return allocate_on(static_cast<c10::DeviceIndex>(current_device()), bytes);
  }
  c10::DeleterFnPtr raw_deleter() const override { return &delete_block; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    const auto& plugin = active_plugin();
    plugin.check(plugin.api().memcpy_sync(dest, src, count, FLAGOS_MEMCPY_DEVICE_TO_DEVICE),
                 "memcpy_sync");
  }
  bool initialized() override { return plugin::active() != nullptr; }
  void emptyCache(c10::MempoolId_t) override {
    if (!initialized()) return;
    for (auto& a : allocators().per_device) a->empty_cache();
    c10::DeviceIndex cuda_index = -1;
    if (device_count() > 0)
      if (auto* cuda = interop_allocator(0, &cuda_index)) cuda->emptyCache();
  }
  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override {
    flagos::device::record_stream(ptr, stream);
  }
  CachingStats getDeviceStats(c10::DeviceIndex device) override {
    CachingStats out = to_c10(caching_allocator(device).stats());
    add_interop_stats(device, out);
    return out;
  }
  void resetAccumulatedStats(c10::DeviceIndex device) override {
    caching_allocator(device).reset_accumulated_stats();
    c10::DeviceIndex cuda_index = -1;
    if (auto* cuda = interop_allocator(device, &cuda_index)) cuda->resetAccumulatedStats(cuda_index);
  }
  void resetPeakStats(c10::DeviceIndex device) override {
    caching_allocator(device).reset_peak_stats();
    c10::DeviceIndex cuda_index = -1;
    if (auto* cuda = interop_allocator(device, &cuda_index)) cuda->resetPeakStats(cuda_index);
  }
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    return mem_get_info(device);
  }
  // Declared pure virtual by a later torch (generic caching allocator work);
  // defined without `override` so both shapes compile.
  void* raw_alloc(size_t bytes) {
    c10::DeviceIndex d = static_cast<c10::DeviceIndex>(current_device());
    return caching_allocator(d).allocate(bytes, current_native(d));
  }
  void raw_delete(void* ptr) { delete_block(ptr); }
};

FlagosDeviceAllocator g_allocator;

void delete_block(void* ptr) {
  if (!ptr) return;
  for (auto& a : allocators().per_device) {
    if (a->owns(ptr)) {
      if (profiler::recording()) [[unlikely]] {
        const size_t before = a->allocated_bytes();
        a->free(ptr);
        const size_t after = a->allocated_bytes();
        const auto device = static_cast<c10::DeviceIndex>(&a - allocators().per_device.data());
        profiler::report_memory(ptr, -static_cast<int64_t>(before > after ? before - after : 0),
                                after, a->reserved_bytes(),
                                c10::Device(c10::DeviceType::PrivateUse1, device));
        return;
      }
      a->free(ptr);
      return;
    }
  }
  TORCH_INTERNAL_ASSERT(false, "[flagos] freeing a pointer the flagos allocator does not own");
}

}  // namespace

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_allocator);

memory::CachingAllocator& caching_allocator(c10::DeviceIndex device) {
  check_index(device);
  return *allocators().per_device.at(device);
}

c10::Allocator* allocator() { return &g_allocator; }

c10::DataPtr allocate_on(c10::DeviceIndex device, size_t bytes) {
  const c10::Device where(c10::DeviceType::PrivateUse1, device);
  if (bytes == 0) return c10::DataPtr(nullptr, nullptr, &delete_block, where);
  void* ptr = nullptr;
  // Profiled: the block's size as the allocator counts it (rounded), so that
  // an allocation and its free report the same figure.
  const bool profiled = profiler::recording();
  const size_t before = profiled ? caching_allocator(device).allocated_bytes() : 0;
  try {
    ptr = caching_allocator(device).allocate(bytes, current_native(device));
  } catch (const memory::OutOfMemory& oom) {
    // torch.OutOfMemoryError in Python, with our figures in the message.
    TORCH_CHECK_WITH(OutOfMemoryError, false, oom.what());
  }
  if (profiled) [[unlikely]] {
    const memory::CachingAllocator& a = caching_allocator(device);
    const size_t after = a.allocated_bytes();
    profiler::report_memory(ptr, static_cast<int64_t>(after > before ? after - before : bytes),
                            after, a.reserved_bytes(), where);
  }
  return c10::DataPtr(ptr, ptr, &delete_block, where);
}

void record_stream(const c10::DataPtr& data_ptr, const c10::Stream& stream) {
  if (!data_ptr.get() || data_ptr.get_deleter() != &delete_block) return;
  caching_allocator(data_ptr.device().index()).record_stream(data_ptr.get_context(), native(stream));
}

std::pair<size_t, size_t> mem_get_info(c10::DeviceIndex device) {
  check_index(device);
  const auto& plugin = active_plugin();
  TORCH_CHECK(plugin.api().mem_get_info, "[flagos] plugin '", plugin.name(),
              "' does not report free/total memory (mem_get_info)");
  uint64_t free_bytes = 0, total_bytes = 0;
  plugin.check(plugin.api().mem_get_info(device, &free_bytes, &total_bytes), "mem_get_info");
  return {free_bytes, total_bytes};
}

}  // namespace flagos::device
