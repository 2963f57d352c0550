#include "distributed/host_bridge.h"

#include <ATen/ATen.h>
#include <c10/core/Stream.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include <algorithm>

namespace flagos::distributed {
namespace {

bool on_flagos(const at::Tensor& t) { return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1; }

// A CPU tensor over `t`'s bytes, keeping `t`'s storage alive as long as it lives.
at::Tensor host_view(const at::Tensor& t) {
  return at::from_blob(
      t.data_ptr(), t.sizes(), t.strides(), [keep = t](void*) {},
      at::TensorOptions().dtype(t.scalar_type()).device(at::kCPU));
}

}  // namespace

at::Tensor HostBridge::host_of(const at::Tensor& t, bool copy_in) {
  devices_touched_.push_back(t);
  if (mode_ == Bridge::ZeroCopy) return host_view(t);
  if (copy_in) return t.to(at::kCPU, /*non_blocking=*/false, /*copy=*/true);
  return at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kCPU));
}

at::Tensor HostBridge::in(const at::Tensor& t) {
  return on_flagos(t) ? host_of(t, true) : t;
}

at::Tensor HostBridge::out(const at::Tensor& t) {
  if (!on_flagos(t)) {
    written_.emplace_back(t, at::Tensor());  // still averaged when asked
    return t;
  }
  at::Tensor host = host_of(t, false);
  written_.emplace_back(host, t);
  return host;
}

at::Tensor HostBridge::inout(const at::Tensor& t) {
  if (!on_flagos(t)) {
    written_.emplace_back(t, at::Tensor());
    return t;
  }
  at::Tensor host = host_of(t, true);
  written_.emplace_back(host, t);
  return host;
}

#define FLAGOS_BRIDGE_LIST(fn)                                               \
  std::vector<at::Tensor> HostBridge::fn(const std::vector<at::Tensor>& ts) { \
    std::vector<at::Tensor> r;                                                \
    r.reserve(ts.size());                                                     \
    for (const auto& t : ts) r.push_back(fn(t));                              \
    return r;                                                                 \
  }
FLAGOS_BRIDGE_LIST(in)
FLAGOS_BRIDGE_LIST(out)
FLAGOS_BRIDGE_LIST(inout)
#undef FLAGOS_BRIDGE_LIST

std::vector<std::vector<at::Tensor>> HostBridge::in(const std::vector<std::vector<at::Tensor>>& ts) {
  std::vector<std::vector<at::Tensor>> r;
  for (const auto& l : ts) r.push_back(in(l));
  return r;
}

std::vector<std::vector<at::Tensor>> HostBridge::out(const std::vector<std::vector<at::Tensor>>& ts) {
  std::vector<std::vector<at::Tensor>> r;
  for (const auto& l : ts) r.push_back(out(l));
  return r;
}

void HostBridge::order_after_current_streams() const {
  if (mode_ != Bridge::ZeroCopy || devices_touched_.empty()) return;
  c10::impl::VirtualGuardImpl impl(c10::DeviceType::PrivateUse1);
  std::vector<c10::DeviceIndex> done;
  for (const auto& t : devices_touched_) {
    const c10::DeviceIndex d = t.device().index();
    if (std::find(done.begin(), done.end(), d) != done.end()) continue;
    done.push_back(d);
    impl.synchronizeStream(impl.getStream(t.device()));
  }
}

void HostBridge::finish() {
  std::call_once(finished_, [this] {
    if (on_complete_) on_complete_();
    for (auto& [host, target] : written_) {
      if (divisor_ > 1) host.div_(divisor_);
      if (target.defined() && mode_ == Bridge::Staged) target.copy_(host);
    }
    written_.clear();
    devices_touched_.clear();
  });
}

}  // namespace flagos::distributed
