// The PrivateUse1 allocator: a c10::DeviceAllocator (so torch.accelerator's
// memory API works) over one memory::CachingAllocator per device.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/Stream.h>

#include <cstddef>
#include <utility>

namespace flagos::memory {
class CachingAllocator;
}

namespace flagos::device {

// The allocator of `device`, created on first use (FLAGOS_USE_CACHING_ALLOCATOR
// read then). Throws when no plugin is active or the index is out of range.
memory::CachingAllocator& caching_allocator(c10::DeviceIndex device);

// The registered c10 allocator (also c10::GetAllocator(PrivateUse1)).
c10::Allocator* allocator();

// Allocates on `device` in the order of its current stream.
c10::DataPtr allocate_on(c10::DeviceIndex device, size_t bytes);

// Defers reuse of data_ptr's block until `stream`'s current work completed.
void record_stream(const c10::DataPtr& data_ptr, const c10::Stream& stream);

// Free and total memory of `device` as the plugin reports it.
std::pair<size_t, size_t> mem_get_info(c10::DeviceIndex device);

}  // namespace flagos::device
