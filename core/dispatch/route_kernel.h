// One boxed kernel object per routed operator, holding its resolved route:
// the per-call path does no lookup (docs/architecture.md, "Routing": resolved once, lean per call).
#pragma once

#include <ATen/core/boxing/OperatorKernel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <atomic>
#include <optional>
#include <string>

#include "routes/boxing_plan.h"
#include "routes/native.h"
#include "routing/table.h"

namespace flagos::dispatch {

// What FLAGOS_LOG=dispatch writes at an operator's first call.
std::string dispatch_log_line(const routing::Route& route);

class RouteProvider;

// A call goes to the route kind's provider (route_provider.h), which reads
// what the kernel resolved at install.
class RouteKernel final : public c10::OperatorKernel {
 public:
  // `op` is the operator route.op names; `next` serves calls the route's
  // kind hands on (a native kernel's FLAGOS_ERROR_UNSUPPORTED).
  RouteKernel(const c10::OperatorHandle& op, routing::Route route, std::optional<routes::NativeKernel> native,
              routing::RouteKind next);
  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack);

  // For providers.
  const routing::Route& route() const { return route_; }
  const std::optional<routes::NativeKernel>& native() const { return native_; }
  const routes::BoxingPlan& plan() const { return plan_; }
  bool python_on_cuda() const { return python_on_cuda_; }
  const std::optional<c10::OperatorHandle>& callee() const { return callee_; }
  void run_next(const c10::OperatorHandle& op, torch::jit::Stack* stack) const;

 private:
  routing::Route route_;
  std::optional<routes::NativeKernel> native_;
  routing::RouteKind next_;
  routes::BoxingPlan plan_;
  bool python_on_cuda_;
  const RouteProvider* provider_;
  std::optional<c10::OperatorHandle> callee_;
  const RouteProvider* next_provider_;
  std::atomic<bool> logged_{false};
};

}  // namespace flagos::dispatch
