// torch_fl._C device functions behind torch.flagos: lazy init and fork
// poisoning, current device, synchronization, generators, properties and
// memory figures. Everything else torch.flagos offers goes through torch's
// own generic APIs (torch.accelerator, torch.Stream/Event).
#include <ATen/Context.h>
#include <ATen/core/CachingHostAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <pybind11/stl.h>
#include <torch/csrc/Generator.h>
#include <torch/csrc/Storage.h>
#include <torch/csrc/utils/device_lazy_init.h>

#include "bindings.h"
#include "device/device_allocator.h"
#include "device/host_allocator.h"
#include "device/ipc.h"
#include "device/runtime.h"
#include "memory/caching_allocator.h"

namespace py = pybind11;

namespace flagos::python {
namespace {

constexpr auto kFlagos = c10::DeviceType::PrivateUse1;

void lazy_init() {
  device::active_plugin();  // a clear error before activation
  torch::utils::register_fork_handler_for_device_init(kFlagos);
  at::globalContext().lazyInitDevice(kFlagos);
}

py::dict properties(int device) {
  const flagos_device_properties_t& p = device::properties(device);
  py::dict d;
  d["name"] = std::string(p.name);
  d["arch"] = std::string(p.arch);
  d["uuid"] = py::bytes(reinterpret_cast<const char*>(p.uuid), sizeof(p.uuid));
  d["pci_bus_id"] = py::make_tuple(p.pci_domain, p.pci_bus, p.pci_device);
  d["major"] = p.capability_major;
  d["minor"] = p.capability_minor;
  d["multi_processor_count"] = p.multiprocessor_count;
  d["total_memory"] = p.total_memory;
  d["alloc_alignment"] = p.alloc_alignment;
  d["stream_priority_range"] = py::make_tuple(p.stream_priority_lowest, p.stream_priority_highest);
  d["interop_device_index"] = p.interop_device_index;
  py::list caps;
  const std::pair<uint64_t, const char*> names[] = {
      {FLAGOS_CAP_HOST_ADDRESSABLE, "host_addressable"}, {FLAGOS_CAP_CUDA_ABI, "cuda_abi"},
      {FLAGOS_CAP_PINNED_HOST, "pinned_host"}, {FLAGOS_CAP_EVENT_TIMING, "event_timing"},
      {FLAGOS_CAP_PEER_ACCESS, "peer_access"}, {FLAGOS_CAP_STREAM_PRIORITY, "stream_priority"}};
  for (const auto& [bit, name] : names)
    if (p.capabilities & bit) caps.append(name);
  d["capabilities"] = caps;
  return d;
}

py::list snapshot(int device) {
  py::list segments;
  for (const auto& s : device::caching_allocator(device).snapshot()) {
    py::dict d;
    d["address"] = s.address;
    d["total_size"] = s.total_size;
    d["allocated_size"] = s.allocated_size;
    d["segment_type"] = s.is_large ? "large" : "small";
    py::list blocks;
    for (const auto& [size, allocated] : s.blocks)
      blocks.append(py::dict(py::arg("size") = size,
                             py::arg("state") = allocated ? "active_allocated" : "inactive"));
    d["blocks"] = blocks;
    segments.append(d);
  }
  return segments;
}

}  // namespace

void bind_device(py::module_& m) {
  m.def("_lazy_init", &lazy_init);
  m.def("_is_in_bad_fork", [] { return torch::utils::is_device_in_bad_fork(kFlagos); });
  m.def("_device_count", [] { return device::device_count(); });
  m.def("_get_device", [] { return device::current_device(); });
  m.def("_set_device", [](int d) { device::set_current_device(d); });
  m.def("_exchange_device", [](int d) {
    if (d < 0) return -1;
    int old = device::current_device();
    if (old != d) device::set_current_device(d);
    return old;
  });
  m.def("_synchronize", [](int d) {
    py::gil_scoped_release no_gil;
    c10::impl::getDeviceGuardImpl(kFlagos)->synchronizeDevice(static_cast<c10::DeviceIndex>(d));
  });
  m.def("_get_default_generator", [](int d) {
    const at::Generator& gen = at::globalContext().defaultGenerator(
        c10::Device(kFlagos, static_cast<c10::DeviceIndex>(d)));
    return py::reinterpret_steal<py::object>(THPGenerator_initDefaultGenerator(gen));
  });
  m.def("_device_properties", &properties);
  // torch_fl.multiprocessing: a storage's bytes for another process, and back.
  m.def("_share_storage", [](py::handle storage) {
    device::SharedStorage s = device::share_storage(THPStorage_Unpack(storage.ptr()));
    return py::make_tuple(s.device, py::bytes(s.handle), s.alloc_size, s.fd, s.offset, s.nbytes);
  });
  m.def("_open_shared_storage", [](int d, py::bytes handle, uint64_t alloc_size, int fd,
                                   uint64_t offset, uint64_t nbytes) {
    return device::open_shared_storage(d, std::string(handle), alloc_size, fd, offset, nbytes);
  });
  m.def("_mem_get_info", [](int d) { return device::mem_get_info(static_cast<c10::DeviceIndex>(d)); });
  m.def("_memory_snapshot", &snapshot);
  m.def("_set_memory_fraction", [](int device, double fraction) {
    device::caching_allocator(device).set_memory_fraction(fraction);
  });
  m.def("_memory_fraction", [](int device) { return device::caching_allocator(device).memory_fraction(); });
  m.def("_host_empty_cache", [] {
    static_cast<at::HostAllocator*>(device::host_allocator())->empty_cache();
  });
  // The pinned-host cache's figures, in torch.cuda.host_memory_stats' keys.
  m.def("_host_memory_stats", [] {
    const at::HostStats s = static_cast<at::HostAllocator*>(device::host_allocator())->get_stats();
    py::dict d;
    const std::pair<const char*, const c10::CachingAllocator::Stat*> stats[] = {
        {"allocations", &s.allocations}, {"allocated_bytes", &s.allocated_bytes}};
    for (const auto& [name, stat] : stats) {
      const std::string key(name);
      d[py::str(key + ".current")] = stat->current;
      d[py::str(key + ".peak")] = stat->peak;
      d[py::str(key + ".allocated")] = stat->allocated;
      d[py::str(key + ".freed")] = stat->freed;
    }
    d["num_host_alloc"] = s.num_host_alloc;
    d["num_host_free"] = s.num_host_free;
    return d;
  });
}

}  // namespace flagos::python
