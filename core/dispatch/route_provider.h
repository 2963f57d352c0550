// Route providers: each route kind's behaviour in one place — why it cannot
// run here, which operators it implements, how its kernel runs a call, and
// what it registers — in one table (route_providers.cpp). The catalog, the
// installer and RouteKernel ask the table instead of switching on the kind,
// so adding a kind is one provider plus its tests (docs/architecture.md,
// "Routing").
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/library.h>

#include <optional>
#include <string>
#include <vector>

#include "dispatch/catalog.h"
#include "routing/route_kind.h"
#include "routing/table.h"

namespace flagos::dispatch {

class RouteKernel;

class RouteProvider {
 public:
  virtual ~RouteProvider() = default;
  virtual routing::RouteKind kind() const = 0;

  // Why no operator can take this kind here (torch, build, plugin); "" when
  // it can run.
  virtual std::string unavailable_reason(const CatalogOptions& options) const = 0;

  // Whether the kind has an implementation of `op` (an operator this torch
  // declares, `name` as confs spell it).
  virtual bool implements(const c10::OperatorHandle& op, const std::string& name,
                          const CatalogOptions& options) const = 0;

  // Runs one call of `kernel`'s operator; a kind that declines the call
  // hands it on with kernel.run_next(). Called per operator call: no lookups.
  virtual void run(const RouteKernel& kernel, const c10::OperatorHandle& op, torch::jit::Stack* stack) const = 0;

  // The operator a call of `op` (`name` as confs spell it) runs instead,
  // where the kind's kernels are another library's operators; resolved once
  // per route (RouteKernel::callee).
  virtual std::optional<c10::OperatorHandle> callee(const c10::OperatorHandle& op, const std::string& name) const {
    return std::nullopt;
  }

  // An unboxed kernel for `route`, where the kind has one for its operator
  // (boxing's hottest operators); else the installer registers a RouteKernel.
  virtual std::optional<torch::CppFunction> typed_kernel(const routing::Route& route,
                                                         const std::string& log_line) const {
    return std::nullopt;
  }

  // Process-wide setup before the first kernel of this kind is registered.
  virtual void prepare() const {}
};

// The provider of `kind`.
const RouteProvider& provider(routing::RouteKind kind);

// Where an operator's call goes when its own kind cannot serve it here, in
// order: the plugin's stock boxing targets (torch's CUDA kernels on CUDA-ABI
// memory, its CPU kernels on host-addressable memory, both zero-copy: the
// installed torch's own kernels, exact and fast), then the plugin's native
// kernel for it (on the device, unlike what follows), then cpu_fallback's
// host copies. The first available one, other than the route's own kind,
// that implements the operator wins (install.cpp).
const std::vector<routing::RouteKind>& fallback_chain();

}  // namespace flagos::dispatch
