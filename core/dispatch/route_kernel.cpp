#include "dispatch/route_kernel.h"

#include "device/runtime.h"
#include "diag/channels.h"
#include "diag/log.h"
#include "dispatch/route_provider.h"

namespace flagos::dispatch {

using routing::RouteKind;

std::string dispatch_log_line(const routing::Route& route) {
  return "dispatch: aten::" + route.op + " -> " + std::string(routing::name(route.kind)) + " (" + route.why + ")";
}

RouteKernel::RouteKernel(const c10::OperatorHandle& op, routing::Route route,
                         std::optional<routes::NativeKernel> native, RouteKind next)
    : route_(std::move(route)),
      native_(std::move(native)),
      next_(next),
      plan_(op),
      python_on_cuda_((route_.kind == RouteKind::FlagGems || route_.kind == RouteKind::TileOps) &&
                        device::device_count() > 0 &&
                        device::has_capability(0, FLAGOS_CAP_CUDA_ABI)),
      provider_(&provider(route_.kind)),
      callee_(provider_->callee(op, route_.op)),
      next_provider_(&provider(next)) {}

void RouteKernel::operator()(const c10::OperatorHandle& op, c10::DispatchKeySet,
                             torch::jit::Stack* stack) {
  static const bool log_dispatch = diag::channel_enabled("dispatch");
  if (log_dispatch && !logged_.exchange(true)) diag::info(dispatch_log_line(route_));
  provider_->run(*this, op, stack);
}

void RouteKernel::run_next(const c10::OperatorHandle& op, torch::jit::Stack* stack) const {
  next_provider_->run(*this, op, stack);
}

}  // namespace flagos::dispatch
