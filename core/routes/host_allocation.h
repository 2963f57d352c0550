// CPU boxing needs CPU kernels to allocate their outputs in flagos memory
// (host-addressable plugins only), so that results need no copy. torch's
// CPU allocator is wrapped once: inside a HostAllocationScope on this
// thread, CPU allocations come from the flagos caching allocator of the
// scope's device (DataPtrs say CPU until the route re-labels them);
// everywhere else the wrapper forwards to the original CPU allocator.
#pragma once

#include <c10/core/Allocator.h>

namespace flagos::routes {

class HostAllocationScope {
 public:
  explicit HostAllocationScope(c10::DeviceIndex device);
  ~HostAllocationScope();
  HostAllocationScope(const HostAllocationScope&) = delete;
  HostAllocationScope& operator=(const HostAllocationScope&) = delete;

 private:
  c10::DeviceIndex previous_;
};

// Installs the wrapper (idempotent). Called when a CPU boxing route is installed.
void install_cpu_allocator_redirect();

// Allocates flagos memory on `device` labelled as CPU memory: the allocator of
// the CPU aliases that CPU kernels may resize.
c10::Allocator* flagos_as_cpu_allocator();

// Whether `data_ptr` came from the flagos allocator (whatever its label).
bool is_flagos_allocation(const c10::DataPtr& data_ptr);

}  // namespace flagos::routes
