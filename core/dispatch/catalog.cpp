#include "dispatch/catalog.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/enum_tag.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "dispatch/route_provider.h"
#include "routes/aten_op.h"
#include "routes/python_route.h"

namespace flagos::dispatch {
namespace {

using routing::RouteKind;
using c10::DispatchKey;

using routes::find_aten_op;

std::set<std::string>& builtin() {
  static std::set<std::string> names;
  return names;
}

bool composite_explicit(const c10::OperatorHandle& h) {
  return h.hasKernelForDispatchKey(DispatchKey::CompositeExplicitAutograd) ||
         h.hasKernelForDispatchKey(DispatchKey::CompositeExplicitAutogradNonFunctional);
}

// Returns alias an argument without writing it: `Tensor(a)`.
bool is_view(const c10::FunctionSchema& schema) {
  for (const auto& r : schema.returns())
    if (r.alias_info() && !r.alias_info()->isWrite()) return true;
  return false;
}

std::string op_string(const c10::OperatorName& name) {
  std::string s = name.name.substr(6);
  if (!name.overload_name.empty()) s += "." + name.overload_name;
  return s;
}

}  // namespace

void snapshot_builtin_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const auto& name : c10::Dispatcher::singleton().getAllOpNames()) {
      if (name.name.rfind("aten::", 0) != 0) continue;
      auto h = c10::Dispatcher::singleton().findSchema(name);
      if (h && h->hasKernelForDispatchKey(DispatchKey::PrivateUse1)) builtin().insert(op_string(name));
    }
  });
}

const std::set<std::string>& builtin_ops() {
  snapshot_builtin_kernels();
  return builtin();
}

TorchCatalog::TorchCatalog(CatalogOptions options) : options_(std::move(options)) {
  snapshot_builtin_kernels();
}

std::string TorchCatalog::unroutable_reason(const std::string& op) const {
  auto h = find_aten_op(op);
  if (!h) return "no such operator in torch " + options_.torch_version;
  if (builtin().count(op)) return "implemented by the torch_fl core itself (core/aten); not routable";
  if (h->hasKernelForDispatchKey(DispatchKey::CompositeImplicitAutograd))
    return "CompositeImplicitAutograd: it decomposes into other operators; route those instead";
  if (op == "copy_")
    return "implemented by the torch_fl core itself (copy_ reaches _copy_from: pinned, "
           "non_blocking and cross-device copies); not routable";
  for (const auto& arg : h->schema().arguments()) {
    c10::TypePtr type = arg.type();
    if (auto opt = type->cast<c10::OptionalType>()) type = opt->getElementType();
    if (type->kind() == c10::TypeKind::DeviceObjType)
      return "takes a Device argument (a factory or conversion): its own device logic runs; not routable";
  }
  if (h->hasTag(at::Tag::inplace_view) && composite_explicit(*h) && !h->hasKernelForDispatchKey(DispatchKey::CPU))
    return "changes only the tensor's sizes and strides (inplace_view) with a composite kernel: it runs "
           "as is on flagos; not routable";
  if (composite_explicit(*h) && !h->hasKernelForDispatchKey(DispatchKey::CPU) && is_view(h->schema()))
    return "a view with a composite kernel: it runs as as_strided on the flagos storage; not routable";
  if (!h->hasKernelForDispatchKey(DispatchKey::CPU) && !h->hasKernelForDispatchKey(DispatchKey::CUDA) &&
      !composite_explicit(*h))
    return "has no CPU, CUDA or composite kernel in this torch";
  return "";
}

bool TorchCatalog::implements(RouteKind kind, const std::string& op) const {
  auto h = find_aten_op(op);
  return h && provider(kind).implements(*h, op, options_);
}

std::vector<std::string> TorchCatalog::family_ops(routing::Family family) const {
  if (family != routing::Family::FlagGems) return {};
  std::vector<std::string> ops = options_.flaggems_ops;
  for (const auto& op : routes::python_impl_ops(routing::RouteKind::FlagGems)) ops.push_back(op);
  return ops;
}

std::vector<std::string> TorchCatalog::routable_ops() const {
  std::vector<std::string> ops;
  for (const auto& name : c10::Dispatcher::singleton().getAllOpNames()) {
    if (name.name.rfind("aten::", 0) != 0) continue;
    std::string op = op_string(name);
    if (unroutable_reason(op).empty()) ops.push_back(std::move(op));
  }
  std::sort(ops.begin(), ops.end());
  return ops;
}

std::string TorchCatalog::unavailable_reason(RouteKind kind) const {
  return provider(kind).unavailable_reason(options_);
}

}  // namespace flagos::dispatch
