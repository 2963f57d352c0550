#include "device/host_allocator.h"

#include <ATen/Context.h>
#include <ATen/core/CachingHostAllocator.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "device/runtime.h"
#include "device/stats_glue.h"
#include "device/streams.h"
#include "memory/host_cache.h"

namespace flagos::device {
namespace {

memory::HostCache* cache_or_null() {
  // Created at first use after activation; lives for the process.
  static std::once_flag once;
  static std::unique_ptr<memory::HostCache> cache;
  if (!plugin::active()) return nullptr;
  std::call_once(once, [] { cache = std::make_unique<memory::HostCache>(active_plugin_shared()); });
  return cache.get();
}

memory::HostCache& cache() {
  memory::HostCache* c = cache_or_null();
  if (!c) active_plugin();  // throws the "no plugin is active" error
  return *c;
}

void free_pinned(void* ptr) { cache().free(ptr); }

// A plugin without page-locked host memory (bpu) serves pin requests with
// ordinary host memory: torch makes one for every non_blocking
// device-to-host copy, where pinning is only a speed-up. Such tensors are
// not pinned (is_pinned() is false) and copies into them are synchronous.
bool pageable_only() {
  return plugin::active() && device::device_count() > 0 && !has_capability(0, FLAGOS_CAP_PINNED_HOST);
}

struct FlagosHostAllocator final : public at::HostAllocator {
  at::DataPtr allocate(size_t bytes) override {
    if (pageable_only()) return c10::GetCPUAllocator()->allocate(bytes);
    void* ptr = cache().allocate(bytes);
    return {ptr, ptr, &free_pinned, at::Device(at::kCPU)};
  }
  at::DeleterFnPtr raw_deleter() const override {
    return pageable_only() ? c10::GetCPUAllocator()->raw_deleter() : &free_pinned;
  }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);  // pinned memory is ordinary host memory
  }
  bool record_event(void* ptr, void*, c10::Stream stream) override {
    return record_host_use(ptr, stream);
  }
  void empty_cache() override {
    if (auto* c = cache_or_null()) c->empty_cache();
  }
  at::HostStats get_stats() override {
    at::HostStats out;
    auto* c = cache_or_null();
    if (!c) return out;
    const memory::HostCache::Stats s = c->stats();
    copy_stat(s.allocations, out.allocations);
    copy_stat(s.allocated_bytes, out.allocated_bytes);
    out.num_host_alloc = s.num_host_alloc;
    out.num_host_free = s.num_host_free;
    return out;
  }
  void reset_accumulated_stats() override {
    if (auto* c = cache_or_null()) c->reset_accumulated_stats();
  }
  void reset_peak_stats() override {
    if (auto* c = cache_or_null()) c->reset_peak_stats();
  }
};

FlagosHostAllocator g_host_allocator;

}  // namespace

REGISTER_HOST_ALLOCATOR(at::kPrivateUse1, &g_host_allocator)

at::Allocator* host_allocator() { return &g_host_allocator; }

namespace {

bool ours(const void* ptr) {
  auto* c = cache_or_null();
  return c && ptr && c->is_pinned(ptr);
}

// Under a CUDA torch on a machine with a GPU, `pin_memory=True` factories
// take CUDA's pinned allocator whatever the plugin (ATen's
// GetCPUAllocatorMaybePinned asks CUDA before PrivateUse1). That memory is
// page-locked host memory, so it counts as pinned for flagos too. Asking
// CUDA about a pointer needs a CUDA context, which exists once CUDA's
// allocator has handed out anything: without one, nothing is CUDA-pinned
// and no context is created just to say so.
bool cuda_has_context() {
  static std::atomic<bool> seen{false};
  if (seen.load(std::memory_order_relaxed)) return true;
  static const bool has_cuda = at::globalContext().hasCUDA();
  if (!has_cuda) return false;
  const auto& hooks = at::detail::getCUDAHooks();
  for (c10::DeviceIndex i = 0; i < hooks.deviceCount(); ++i)
    if (hooks.hasPrimaryContext(i)) {
      seen.store(true, std::memory_order_relaxed);
      return true;
    }
  return false;
}

bool torch_cuda_pinned(const void* ptr) {
  return ptr && cuda_has_context() && at::detail::getCUDAHooks().isPinnedPtr(ptr);
}

// CUDA's host allocator, where this plugin's streams are CUDA streams (a
// CUDA-ABI plugin): then a use of its memory by a flagos copy can be
// recorded there. Null otherwise.
at::HostAllocator* torch_cuda_host_allocator() {
  static at::HostAllocator* const cuda = []() -> at::HostAllocator* {
    if (device_count() == 0 || !has_capability(0, FLAGOS_CAP_CUDA_ABI) || !at::globalContext().hasCUDA())
      return nullptr;
    return at::getHostAllocator(at::kCUDA);
  }();
  return cuda;
}

}  // namespace

bool is_pinned(const void* ptr) { return ours(ptr) || torch_cuda_pinned(ptr); }

bool record_host_use(const void* ptr, const c10::Stream& stream) {
  if (ours(ptr)) {
    cache().record_event(const_cast<void*>(ptr), native(stream), stream.device_index());
    return true;
  }
  if (!torch_cuda_host_allocator() || !torch_cuda_pinned(ptr)) return false;
  // CUDA's allocator finds the block by its base address: false for a
  // pointer inside a block (the caller then waits for the copy).
  return torch_cuda_host_allocator()->record_event(
      const_cast<void*>(ptr), nullptr, as_cuda_stream(stream));
}

}  // namespace flagos::device
