// The resolved route table: one route per operator, with the reason, after
// applying precedence (docs/architecture.md): FLAGOS_FORCE_BACKEND › FLAGOS_OP_<op> ›
// the conf › the conf's default (cpu_fallback when it names none).
// Torch-free: what torch knows (does the operator exist, which kinds can run
// it) comes in through Catalog.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "routing/conf.h"
#include "routing/route_kind.h"

namespace flagos::routing {

// What the installed torch, this build and the active plugin can do.
class Catalog {
 public:
  virtual ~Catalog() = default;
  // Empty when `op` can be routed; else why not ("no such operator in torch
  // 2.13.0", "CompositeImplicitAutograd: it decomposes into routed ops").
  virtual std::string unroutable_reason(const std::string& op) const = 0;
  // Whether `kind` has an implementation of `op` (a CPU kernel, a plugin
  // kernel, a registered FlagGems function...).
  virtual bool implements(RouteKind kind, const std::string& op) const = 0;
  // Empty when this build and plugin can run `kind` at all; else why not
  // ("this build did not compile CUDA boxing (FLAGOS_BUILD_BOXING=OFF)").
  virtual std::string unavailable_reason(RouteKind kind) const = 0;
  // The installed torch's version ("2.13.0+cpu").
  virtual std::string torch_version() const = 0;
  // Operators `family` implements that a conf need not list, so that
  // FLAGOS_FORCE_BACKEND repins every op the family has ("every op onto one
  // backend family"), not only the conf's.
  virtual std::vector<std::string> family_ops(Family family) const { return {}; }
};

struct Route {
  std::string op;
  RouteKind kind = RouteKind::CpuFallback;
  std::string why;          // "conf /x/host.toml:12", "FLAGOS_OP_add__Tensor", ...
  std::string error;        // for Unrouted: the message calling it raises
  bool listed = false;      // named by the conf or an override (else: default)
};

struct Overrides {
  std::map<std::string, std::string> per_op;  // op name -> raw value (FLAGOS_OP_*)
  std::optional<Family> force;                // FLAGOS_FORCE_BACKEND
};

// FLAGOS_OP_* and FLAGOS_FORCE_BACKEND from the environment, through the
// env registry (values are validated in resolve()).
Overrides overrides_from_env();

struct Resolution {
  std::vector<Route> routes;         // every listed op, sorted by name
  Route default_route;               // for ops not listed
  std::vector<std::string> notes;    // one [flagos] line each (reported by the caller)
  // Facts that are not problems (a shipped conf generated for another torch
  // lists ops this torch lacks): reported under FLAGOS_LOG=dispatch and by
  // `python -m torch_fl conf check`, not at every import.
  std::vector<std::string> details;
};

// Throws flagos::Error naming file:line for conf entries naming unknown or
// unroutable operators. Bad overrides are notes, not errors (spec: "an
// unknown value reported on one line").
Resolution resolve(const Conf& conf, const Overrides& overrides, const Catalog& catalog);

// The message an op on the `none` route raises: names the op, why it is
// unrouted and how to route it.
std::string unrouted_error(const Route& r);

// "add.Tensor" -> "FLAGOS_OP_add__Tensor"
std::string override_variable(const std::string& op);

}  // namespace flagos::routing
