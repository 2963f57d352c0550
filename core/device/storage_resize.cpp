#include "device/storage_resize.h"

#include <c10/util/Exception.h>

#include <algorithm>

#include "device/device_allocator.h"
#include "device/runtime.h"
#include "device/streams.h"

namespace flagos::device {

void resize_storage_bytes(const c10::Storage& storage, size_t new_bytes) {
  TORCH_CHECK(storage.resizable(), "Trying to resize storage that is not resizable");
  c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
  const c10::DeviceIndex device = impl->device().index();
  c10::DataPtr fresh = new_bytes ? allocate_on(device, new_bytes)
                                 : c10::DataPtr(nullptr, impl->device());
  const size_t keep = std::min(new_bytes, impl->nbytes());
  if (keep > 0 && impl->data()) {
    const auto& plugin = active_plugin();
    plugin.check(plugin.api().memcpy_async(fresh.get(), impl->data(), keep,
                                           FLAGOS_MEMCPY_DEVICE_TO_DEVICE, current_native(device)),
                 "memcpy_async");
  }
  // The old block is freed in stream order by the caching allocator.
  impl->set_data_ptr_noswap(std::move(fresh));
  impl->set_nbytes(new_bytes);
}

}  // namespace flagos::device
