// The memory behind the plugins' workspace services (flagos_host_services_t):
// blocks of each device's caching allocator, allocated on the plugin's
// stream. Only blocks handed out here may be given back here, so a plugin
// cannot free a tensor's memory by mistake.
#include <mutex>
#include <string>
#include <unordered_map>

#include "device/device_allocator.h"
#include "device/runtime.h"
#include "error.h"
#include "memory/caching_allocator.h"
#include "memory/out_of_memory.h"
#include "plugin/host_services.h"

namespace flagos::device {
namespace {

struct Live {
  std::mutex lock;
  std::unordered_map<void*, flagos_device_t> blocks;  // workspace block -> device
};

Live& live() {
  static auto* l = new Live;  // process lifetime: plugins may free at exit
  return *l;
}

// Runs `body`, turning the allocator's exceptions into a status and a reason.
template <class Body>
flagos_status_t as_status(std::string* why, Body&& body) {
  try {
    return body();
  } catch (const memory::OutOfMemory& e) {
    *why = e.detail();
    return FLAGOS_ERROR_OUT_OF_MEMORY;
  } catch (const Error& e) {
    *why = e.detail();
    return FLAGOS_ERROR_INVALID_ARGUMENT;
  } catch (const std::exception& e) {
    *why = e.what();
    return FLAGOS_ERROR_INTERNAL;
  }
}

flagos_status_t allocate(flagos_device_t device, flagos_stream_t stream, uint64_t bytes, void** ptr,
                         std::string* why) {
  if (device < 0 || device >= device_count()) {
    *why = "device " + std::to_string(device) + " is not one of the " + std::to_string(device_count()) +
           " flagos devices";
    return FLAGOS_ERROR_INVALID_DEVICE;
  }
  return as_status(why, [&] {
    void* block = nullptr;
    if (bytes > 0) block = caching_allocator(static_cast<c10::DeviceIndex>(device)).allocate(bytes, stream);
    if (block) {
      std::lock_guard<std::mutex> hold(live().lock);
      live().blocks.emplace(block, device);
    }
    *ptr = block;
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t free(void* ptr, std::string* why) {
  flagos_device_t device = -1;
  {
    std::lock_guard<std::mutex> hold(live().lock);
    auto it = live().blocks.find(ptr);
    if (it == live().blocks.end()) {
      *why = "not a live workspace block";
      return FLAGOS_ERROR_INVALID_ARGUMENT;
    }
    device = it->second;
    live().blocks.erase(it);
  }
  return as_status(why, [&] {
    caching_allocator(static_cast<c10::DeviceIndex>(device)).free(ptr);
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t record_stream(void* ptr, flagos_stream_t stream, std::string* why) {
  return as_status(why, [&] {
    for (int32_t d = 0; d < device_count(); ++d) {
      memory::CachingAllocator& a = caching_allocator(static_cast<c10::DeviceIndex>(d));
      if (a.owns(ptr)) {
        a.record_stream(ptr, stream);
        return FLAGOS_SUCCESS;
      }
    }
    *why = "the address is in no live block of the core's allocator";
    return FLAGOS_ERROR_INVALID_ARGUMENT;
  });
}

const plugin::WorkspaceMemory kMemory{&allocate, &free, &record_stream};

// Lent when the core library loads, before any plugin is.
const bool kLent = (plugin::lend_workspace_memory(&kMemory), true);

}  // namespace
}  // namespace flagos::device
