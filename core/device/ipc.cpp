#include "device/ipc.h"

#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/TensorImpl.h>

#include <unistd.h>

#include <cstring>
#include <mutex>

#include "device/runtime.h"
#include "device/streams.h"
#include "error.h"

namespace flagos::device {
namespace {

constexpr auto kFlagos = c10::DeviceType::PrivateUse1;

const flagos_ipc_ext_t& ipc_extension() {
  const plugin::Plugin& plugin = active_plugin();
  const auto* ext = reinterpret_cast<const flagos_ipc_ext_t*>(plugin.find_extension(FLAGOS_EXTENSION_IPC));
  if (!ext || ext->base.struct_size < FLAGOS_IPC_EXT_SIZE_1_5)
    throw Error("plugin '" + plugin.name() +
                "' cannot share device memory between processes (no FLAGOS_EXTENSION_IPC): "
                "send flagos tensors to other processes as CPU tensors (tensor.cpu())");
  return *ext;
}

// Plugin status -> [flagos] error naming the step and the plugin's reason.
void check(flagos_status_t st, const char* step) {
  if (st == FLAGOS_SUCCESS) return;
  const plugin::Plugin& plugin = active_plugin();
  throw Error(std::string("sharing a flagos storage with another process: ") + step + " (plugin '" +
              plugin.name() + "'): " + plugin.api().last_error_message());
}

// A shareable allocation owned by a storage, outside the caching allocator.
struct Shareable {
  c10::DeviceIndex device;
  void* base;
};

void free_shareable(void* ctx) {
  auto* s = static_cast<Shareable*>(ctx);
  try {
    // mem_free needs no stream still using the block; shared storages are
    // few and long-lived, so a device synchronize is the simple guarantee.
    const auto& api = active_plugin().api();
    api.device_synchronize(s->device);
    api.mem_free(s->device, s->base);
  } catch (...) {  // never throw from a deleter (e.g. at exit, plugin gone)
  }
  delete s;
}

// Another process's allocation mapped here, with what sending it on needs:
// its handle and this process's own copy of the descriptor.
struct Imported {
  c10::DeviceIndex device;
  void* base;
  flagos_ipc_handle_t handle;
};

void close_imported(void* ctx) {
  auto* m = static_cast<Imported*>(ctx);
  try {
    ipc_extension().close_memory(m->device, m->base);
  } catch (...) {
  }
  if (m->handle.fd >= 0) close(m->handle.fd);
  delete m;
}

// Moves `impl`'s bytes into a new shareable allocation of their own.
void move_to_shareable(const flagos_ipc_ext_t& ext, c10::StorageImpl* impl, c10::DeviceIndex device) {
  const size_t nbytes = impl->nbytes();
  void* fresh = nullptr;
  check(ext.mem_alloc_shareable(device, nbytes, &fresh), "mem_alloc_shareable");
  const auto& plugin = active_plugin();
  flagos_stream_t stream = current_native(device);
  flagos_status_t st = plugin.api().memcpy_async(fresh, impl->data(), nbytes,
                                                 FLAGOS_MEMCPY_DEVICE_TO_DEVICE, stream);
  if (st == FLAGOS_SUCCESS) st = plugin.api().stream_synchronize(stream);
  if (st != FLAGOS_SUCCESS) {
    const std::string why = plugin.api().last_error_message();
    plugin.api().mem_free(device, fresh);
    throw Error("sharing a flagos storage with another process: moving it to shareable memory "
                "(plugin '" + plugin.name() + "'): " + why);
  }
  // The old block goes back to the caching allocator in stream order.
  impl->set_data_ptr_noswap(c10::DataPtr(fresh, new Shareable{device, fresh}, &free_shareable,
                                         c10::Device(kFlagos, device)));
}

}  // namespace

SharedStorage share_storage(const c10::Storage& storage) {
  // Two threads sending one storage must not both move it: the second move
  // would leave the first one's receivers on memory the storage left.
  static std::mutex* moving = new std::mutex;
  std::lock_guard<std::mutex> lock(*moving);
  c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
  const c10::DeviceIndex device = impl->device().index();
  const flagos_ipc_ext_t& ext = ipc_extension();
  SharedStorage out;
  out.device = device;
  out.nbytes = impl->nbytes();
  if (out.nbytes == 0 || impl->data() == nullptr)
    throw Error("sharing a flagos storage with another process: the storage is empty");
  // The importer reads what the current stream has written so far.
  check(active_plugin().api().stream_synchronize(current_native(device)), "stream_synchronize");
  if (impl->data_ptr().get_deleter() == &close_imported) {  // received: sent on as it came
    const auto* m = static_cast<const Imported*>(impl->data_ptr().get_context());
    out.handle.assign(reinterpret_cast<const char*>(m->handle.bytes), sizeof m->handle.bytes);
    out.alloc_size = m->handle.size;
    out.fd = m->handle.fd;
    out.offset = static_cast<uint64_t>(static_cast<const char*>(impl->data()) - static_cast<char*>(m->base));
    return out;
  }
  const bool shareable = impl->data_ptr().get_deleter() == &free_shareable;
  if (!shareable && !(ext.flags & FLAGOS_IPC_ALL_ALLOCATIONS)) move_to_shareable(ext, impl, device);
  flagos_ipc_handle_t h{};
  check(ext.export_memory(device, impl->data(), &h, &out.offset), "export_memory");
  out.handle.assign(reinterpret_cast<const char*>(h.bytes), sizeof h.bytes);
  out.alloc_size = h.size;
  out.fd = h.fd;
  return out;
}

at::Tensor open_shared_storage(int device, const std::string& handle, uint64_t alloc_size, int fd,
                               uint64_t offset, uint64_t nbytes) {
  const flagos_ipc_ext_t& ext = ipc_extension();
  if (handle.size() != FLAGOS_IPC_HANDLE_BYTES || offset > alloc_size || nbytes > alloc_size - offset)
    throw Error("rebuilding a shared flagos storage: the handle does not describe these bytes");
  flagos_ipc_handle_t h{};
  std::memcpy(h.bytes, handle.data(), sizeof h.bytes);
  h.size = alloc_size;
  h.fd = fd;
  void* base = nullptr;
  check(ext.open_memory(device, &h, &base), "open_memory");
  const auto index = static_cast<c10::DeviceIndex>(device);
  h.fd = fd >= 0 ? dup(fd) : -1;  // kept for sending the storage on
  c10::DataPtr data(static_cast<char*>(base) + offset, new Imported{index, base, h}, &close_imported,
                    c10::Device(kFlagos, index));
  c10::Storage storage(c10::Storage::use_byte_size_t(), nbytes, std::move(data), nullptr,
                       /*resizable=*/false);
  at::Tensor t = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), caffe2::TypeMeta::Make<uint8_t>());
  t.unsafeGetTensorImpl()->set_sizes_contiguous({static_cast<int64_t>(nbytes)});
  return t;
}

}  // namespace flagos::device
