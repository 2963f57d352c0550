#include "dispatch/route_kernel.h"

#include "aten/cpu_fallback.h"
#include "device/runtime.h"
#include "diag/channels.h"
#include "diag/log.h"
#include "error.h"
#include "routes/boxing.h"
#include "routes/python_route.h"

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
      flaggems_on_cuda_(route_.kind == RouteKind::FlagGems && device::device_count() > 0 &&
                        device::has_capability(0, FLAGOS_CAP_CUDA_ABI)) {}

void RouteKernel::operator()(const c10::OperatorHandle& op, c10::DispatchKeySet,
                             torch::jit::Stack* stack) {
  static const bool log_dispatch = diag::channel_enabled("dispatch");
  if (log_dispatch && !logged_.exchange(true)) diag::info(dispatch_log_line(route_));
  run(route_.kind, op, stack);
}

void RouteKernel::run(RouteKind kind, const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  switch (kind) {
    case RouteKind::Native:
      if (native_ && routes::run_native(*native_, op, stack)) return;
      run(next_, op, stack);
      return;
    case RouteKind::FlagGems:
      // One hold of the GIL for the whole call: boxing, Python, unboxing and
      // freeing what the call made (python_route.h).
      routes::holding_python([&] {
        if (flaggems_on_cuda_) {
          // FlagGems' Triton kernels take CUDA tensors and launch on torch's
          // current CUDA stream: box the operands, as for the cuda route.
          routes::run_boxed(
              routes::BoxingTarget::Cuda, plan_, stack,
              [&](torch::jit::Stack* s) { routes::call_python(route_.op, op, s); }, /*recycle_aliases=*/false);
        } else {
          routes::call_python(route_.op, op, stack);
        }
      });
      return;
    case RouteKind::Unrouted:
      throw Error(route_.error);
    case RouteKind::CpuBoxing:
      routes::cpu_boxing(op, plan_, stack);
      return;
    case RouteKind::CudaBoxing:
      routes::cuda_boxing(op, plan_, stack);
      return;
    case RouteKind::CpuFallback:
      aten::cpu_fallback(op, stack);
      return;
    case RouteKind::FlagGemsCpp:
    case RouteKind::TileOps:
      // Demoted at install while no wrappers are compiled; listed so that a
      // new kind without a case here fails -Wswitch instead of a default.
      break;
  }
  throw Error("route " + std::string(routing::name(kind)) + " cannot serve " +
              c10::toString(op.schema().operator_name()) + " here");
}

}  // namespace flagos::dispatch
