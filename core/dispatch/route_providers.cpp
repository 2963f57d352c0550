#include <ATen/core/enum_tag.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <algorithm>
#include <array>
#include <memory>

#include "aten/cpu_fallback.h"
#include "device/runtime.h"
#include "dispatch/route_kernel.h"
#include "dispatch/route_provider.h"
#include "error.h"
#include "routes/boxing.h"
#include "routes/flaggems_cpp.h"
#include "routes/host_allocation.h"
#include "routes/native.h"
#include "routes/python_route.h"
#include "routes/typed_boxing_ops.h"

namespace flagos::dispatch {
namespace {

using c10::DispatchKey;
using routing::RouteKind;

std::string plugin_name() { return "plugin '" + device::active_plugin().name() + "'"; }
bool has_device() { return device::device_count() > 0; }

bool composite_explicit(const c10::OperatorHandle& h) {
  return h.hasKernelForDispatchKey(DispatchKey::CompositeExplicitAutograd) ||
         h.hasKernelForDispatchKey(DispatchKey::CompositeExplicitAutogradNonFunctional);
}

// native: the plugin's kernels extension (out= kernels, the core allocates).
class Native final : public RouteProvider {
 public:
  RouteKind kind() const override { return RouteKind::Native; }
  std::string unavailable_reason(const CatalogOptions&) const override {
    if (!has_device()) return plugin_name() + " has no device";
    if (!device::active_plugin().find_extension(FLAGOS_EXTENSION_KERNELS)) return plugin_name() + " has no native kernels";
    return "";
  }
  bool implements(const c10::OperatorHandle&, const std::string& name, const CatalogOptions&) const override {
    return routes::find_native(name).has_value();
  }
  void run(const RouteKernel& k, const c10::OperatorHandle& op, torch::jit::Stack* stack) const override {
    // A kernel may decline a call (FLAGOS_ERROR_UNSUPPORTED): the next route serves it.
    if (k.native() && routes::run_native(*k.native(), op, stack)) return;
    k.run_next(op, stack);
  }
};

// cpu / cuda: the installed torch's kernels of the stock device, zero-copy.
class Boxing final : public RouteProvider {
 public:
  explicit Boxing(routes::BoxingTarget target) : target_(target) {}
  RouteKind kind() const override {
    return target_ == routes::BoxingTarget::Cpu ? RouteKind::CpuBoxing : RouteKind::CudaBoxing;
  }
  std::string unavailable_reason(const CatalogOptions& options) const override {
    if (!has_device()) return plugin_name() + " has no device";
    if (target_ == routes::BoxingTarget::Cpu) {
      if (!device::has_capability(0, FLAGOS_CAP_HOST_ADDRESSABLE))
        return plugin_name() + " memory is not host-addressable (no FLAGOS_CAP_HOST_ADDRESSABLE)";
      return "";
    }
    if (!device::has_capability(0, FLAGOS_CAP_CUDA_ABI))
      return plugin_name() + " memory is not CUDA-ABI (no FLAGOS_CAP_CUDA_ABI)";
    if (!c10::impl::hasDeviceGuardImpl(c10::kCUDA)) return "the installed torch has no CUDA (a CPU build)";
    if (!options.boxing_compiled) return "this build did not compile CUDA boxing (FLAGOS_BUILD_BOXING=OFF)";
    return "";
  }
  bool implements(const c10::OperatorHandle& h, const std::string&, const CatalogOptions&) const override {
    const DispatchKey key = routes::dispatch_key(target_);
    return h.hasKernelForDispatchKey(key) || composite_explicit(h);
  }
  void run(const RouteKernel& k, const c10::OperatorHandle& op, torch::jit::Stack* stack) const override {
    if (target_ == routes::BoxingTarget::Cpu) {
      routes::cpu_boxing(op, k.plan(), stack);
    } else {
      routes::cuda_boxing(op, k.plan(), stack);
    }
  }
  std::optional<torch::CppFunction> typed_kernel(const routing::Route& route,
                                                 const std::string& log_line) const override {
    return routes::typed_boxing_kernel(route.op, target_, log_line);
  }
  void prepare() const override {
    // CPU kernels' own allocations must land in flagos memory.
    if (target_ == routes::BoxingTarget::Cpu) routes::install_cpu_allocator_redirect();
  }

 private:
  routes::BoxingTarget target_;
};

// flaggems, tileops: a registered Python implementation per operator
// (torch_fl._flaggems, torch_fl.tileops), called with the GIL held once.
// Each kind's switch, reason and operator list come from the Python layer.
class PythonImpls final : public RouteProvider {
 public:
  using Flag = bool CatalogOptions::*;
  using Text = std::string CatalogOptions::*;
  using Ops = std::vector<std::string> CatalogOptions::*;
  PythonImpls(RouteKind kind, Flag enabled, Text off_reason, Ops ops)
      : kind_(kind), enabled_(enabled), off_reason_(off_reason), ops_(ops) {}
  RouteKind kind() const override { return kind_; }
  std::string unavailable_reason(const CatalogOptions& options) const override {
    return options.*enabled_ ? "" : options.*off_reason_;
  }
  bool implements(const c10::OperatorHandle&, const std::string& name, const CatalogOptions& options) const override {
    // Without its Python layer, the kind's published list says what it has
    // (FLAGOS_FORCE_BACKEND then raises for those ops instead of passing over them).
    if (!(options.*enabled_)) {
      const auto& ops = options.*ops_;
      return std::find(ops.begin(), ops.end(), name) != ops.end();
    }
    return routes::has_python_impl(kind_, name);
  }
  void run(const RouteKernel& k, const c10::OperatorHandle& op, torch::jit::Stack* stack) const override {
    // One hold of the GIL for the whole call: boxing, Python, unboxing and
    // freeing what the call made (python_route.h).
    routes::holding_python([&] {
      if (k.python_on_cuda()) {
        // FlagGems' Triton kernels and TileOps' TileLang ones take CUDA
        // tensors and launch on torch's current CUDA stream: box the
        // operands, as for the cuda route.
        routes::run_boxed(
            routes::BoxingTarget::Cuda, k.plan(), stack,
            [&](torch::jit::Stack* s) { routes::call_python(kind_, k.route().op, op, s); },
            /*recycle_aliases=*/false);
      } else {
        routes::call_python(kind_, k.route().op, op, stack);
      }
    });
  }

 private:
  RouteKind kind_;
  Flag enabled_;
  Text off_reason_;
  Ops ops_;
};

// flaggems_cpp: FlagGems' C++ operators (flag_gems::<name>,
// routes/flaggems_cpp.h) on the plugin's stock boxing target, zero-copy and
// with no Python per call. torch_fl._flaggems_cpp loads FlagGems' runtime
// and says why not when it cannot.
class FlagGemsCpp final : public RouteProvider {
 public:
  RouteKind kind() const override { return RouteKind::FlagGemsCpp; }
  std::string unavailable_reason(const CatalogOptions& options) const override {
    if (!options.flaggems_cpp_enabled) return options.flaggems_cpp_off_reason;
    if (!has_device()) return plugin_name() + " has no device";
    if (!routes::stock_target(0))
      return plugin_name() + " has no stock kernels to run FlagGems' on (neither CUDA-ABI memory under a CUDA "
             "torch nor host-addressable memory)";
    return "";
  }
  bool implements(const c10::OperatorHandle& h, const std::string& name, const CatalogOptions&) const override {
    return callee(h, name).has_value();
  }
  std::optional<c10::OperatorHandle> callee(const c10::OperatorHandle& op, const std::string& name) const override {
    const auto target = has_device() ? routes::stock_target(0) : std::nullopt;
    return target ? routes::flaggems_cpp_operator(op, name, routes::dispatch_key(*target)) : std::nullopt;
  }
  void run(const RouteKernel& k, const c10::OperatorHandle&, torch::jit::Stack* stack) const override {
    routes::run_boxed(target_, k.plan(), stack, [&](torch::jit::Stack* s) {
      k.callee()->redispatchBoxed(c10::DispatchKeySet(routes::dispatch_key(target_)), s);
    });
  }
  void prepare() const override {
    // Only reached when unavailable_reason() found a stock target.
    target_ = *routes::stock_target(0);
    if (target_ == routes::BoxingTarget::Cpu) routes::install_cpu_allocator_redirect();
  }

 private:
  mutable routes::BoxingTarget target_ = routes::BoxingTarget::Cuda;  // set by prepare()
};

// cpu_fallback: operands copied to the host, the CPU kernel, results back.
class CpuFallback final : public RouteProvider {
 public:
  RouteKind kind() const override { return RouteKind::CpuFallback; }
  std::string unavailable_reason(const CatalogOptions&) const override { return ""; }
  bool implements(const c10::OperatorHandle& h, const std::string&, const CatalogOptions&) const override {
    return h.hasKernelForDispatchKey(DispatchKey::CPU) || composite_explicit(h);
  }
  void run(const RouteKernel&, const c10::OperatorHandle& op, torch::jit::Stack* stack) const override {
    aten::cpu_fallback(op, stack);
  }
};

// none: deliberately not routed; a call raises the route's error.
class Unrouted final : public RouteProvider {
 public:
  RouteKind kind() const override { return RouteKind::Unrouted; }
  std::string unavailable_reason(const CatalogOptions&) const override { return ""; }
  bool implements(const c10::OperatorHandle&, const std::string&, const CatalogOptions&) const override {
    return true;
  }
  void run(const RouteKernel& k, const c10::OperatorHandle&, torch::jit::Stack*) const override {
    throw Error(k.route().error);
  }
};

// Indexed by RouteKind; leaked (kernels may run during exit).
const std::array<const RouteProvider*, routing::kRouteKindCount>& table() {
  static const auto* t = new std::array<const RouteProvider*, routing::kRouteKindCount>{
      new Native,
      new Boxing(routes::BoxingTarget::Cpu),
      new Boxing(routes::BoxingTarget::Cuda),
      new PythonImpls(RouteKind::FlagGems, &CatalogOptions::flaggems_enabled,
                      &CatalogOptions::flaggems_off_reason, &CatalogOptions::flaggems_ops),
      new FlagGemsCpp,
      new PythonImpls(RouteKind::TileOps, &CatalogOptions::tileops_enabled,
                      &CatalogOptions::tileops_off_reason, &CatalogOptions::tileops_ops),
      new CpuFallback,
      new Unrouted,
  };
  return *t;
}

}  // namespace

const RouteProvider& provider(RouteKind kind) {
  const RouteProvider* p = table().at(static_cast<size_t>(kind));
  if (p->kind() != kind) throw Error("route provider table out of order");  // a kind added without its provider
  return *p;
}

const std::vector<RouteKind>& fallback_chain() {
  static const std::vector<RouteKind> chain{RouteKind::CudaBoxing, RouteKind::CpuBoxing, RouteKind::Native,
                                           RouteKind::CpuFallback};
  return chain;
}

}  // namespace flagos::dispatch
