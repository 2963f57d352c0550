#include "routing/table.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "diag/log.h"
#include "env/registry.h"
#include "error.h"

extern char** environ;

namespace flagos::routing {
namespace {

constexpr std::string_view kPrefix = "FLAGOS_OP_";

// "." is written "__", but a base name may end in "_" (add_) or "__"
// (__ior__), and no overload name starts with "_": the dot is the last "__"
// followed by another character, after a non-empty base name.
std::string op_from_variable(std::string_view suffix) {
  const std::string op(suffix);
  for (size_t p = op.size(); p-- > 1;)
    if (p + 2 < op.size() && op[p] == '_' && op[p + 1] == '_' && op[p + 2] != '_')
      return op.substr(0, p) + "." + op.substr(p + 2);
  return op;
}

// Applies FLAGOS_FORCE_BACKEND to one route: the family's first kind that
// implements the op and can run here. When kinds implement it but none can
// run here (a kernel set this build did not compile), the op raises rather
// than falling back; a kind that merely does not apply (the host plugin's
// memory is not CUDA-ABI) is skipped while a later one of the family can serve.
void force(Route& r, Family family, const Conf& conf, const Catalog& catalog,
           std::vector<std::string>& unimplemented) {
  // tileops repins only the ops the conf annotates; the others are out of its scope.
  if (family == Family::TileOps &&
      std::find(conf.tileops.begin(), conf.tileops.end(), r.op) == conf.tileops.end())
    return;
  const std::string forced = "FLAGOS_FORCE_BACKEND=" + std::string(name(family)) + " over " +
                             std::string(name(r.kind)) + " (" + r.why + ")";
  std::optional<RouteKind> blocked;  // the first kind implementing the op, unavailable here
  std::string missing;
  for (RouteKind kind : kinds_of(family)) {
    if (!catalog.implements(kind, r.op)) continue;
    std::string why = catalog.unavailable_reason(kind);
    if (why.empty()) {
      r.why = forced;
      r.kind = kind;
      r.error.clear();
      return;
    }
    if (!blocked) {
      blocked = kind;
      missing = std::move(why);
    }
  }
  if (!blocked) {
    unimplemented.push_back(r.op);
    return;
  }
  r.why = forced;
  r.kind = RouteKind::Unrouted;
  r.error = "aten::" + r.op + " is forced onto " + std::string(name(*blocked)) +
            " by FLAGOS_FORCE_BACKEND=" + std::string(name(family)) + ", but " + missing;
}

}  // namespace

std::string unrouted_error(const Route& r) {
  return "aten::" + r.op + " is not routed on flagos (" + r.why + "); route it with " +
         override_variable(r.op) + "=cpu_fallback or in a custom conf (FLAGOS_BACKEND_CONFIG)";
}

std::string override_variable(const std::string& op) {
  std::string var(kPrefix);
  for (char c : op) {
    if (c == '.') {
      var += "__";
    } else {
      var += c;
    }
  }
  return var;
}

Overrides overrides_from_env() {
  Overrides out;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    if (entry.substr(0, kPrefix.size()) != kPrefix) continue;
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string name(entry.substr(0, eq));
    // A bare "FLAGOS_OP_" names no operator and is no family member (the
    // import's unknown-name check reports it): skipped, never an error.
    if (name.size() == kPrefix.size()) continue;
    auto value = env::raw(name);  // declared through the FLAGOS_OP_ family
    if (!value) continue;         // empty means unset
    out.per_op[op_from_variable(std::string_view(name).substr(kPrefix.size()))] = *value;
  }
  const std::string forced = env::get_string("FLAGOS_FORCE_BACKEND");
  if (!forced.empty()) out.force = parse_family(forced);  // invalid: the registry reported it
  return out;
}

Resolution resolve(const Conf& conf, const Overrides& overrides, const Catalog& catalog) {
  Resolution res;
  res.default_route.kind = conf.default_kind.value_or(RouteKind::CpuFallback);
  res.default_route.why = conf.default_kind ? "conf default " + conf.default_where : "default";
  // Nothing listed and nothing chosen: every operator copies to the host and
  // back, several times slower than a route. Said once, since it looks like a mistake.
  if (conf.entries.empty() && !conf.default_kind)
    res.notes.push_back("routing conf " + diag::one_line(conf.path) + " lists no routes and no default: every operator "
                        "takes cpu_fallback, a copy to the host and back (write [conf] default = "
                        "\"cpu_fallback\" to mean it)");

  std::map<std::string, Route> table;
  const std::string installed = catalog.torch_version();
  auto release = [](const std::string& v) { return v.substr(0, v.find('+')); };
  // An entry from a conf generated for another torch (its file's tag, else
  // the conf's) may name an op this torch lacks or cannot route.
  auto other_torch = [&](const ConfEntry& e) {
    const std::string& tag = e.torch.empty() ? conf.torch : e.torch;
    return !tag.empty() && release(tag) != release(installed);
  };
  // ... or route it to a stock key whose kernels this torch lacks for it
  // (what CPU and CUDA cover changes between releases: torch 2.11 has no CPU
  // _scaled_mm_v2). Such an op is skipped as if unlisted.
  auto uncovered = [&](const ConfEntry& e) {
    const bool stock = e.kind == RouteKind::CpuBoxing || e.kind == RouteKind::CudaBoxing;
    return stock && catalog.unavailable_reason(e.kind).empty() && !catalog.implements(e.kind, e.op);
  };
  std::vector<std::string> skipped;
  std::string skipped_from;
  for (const ConfEntry& e : conf.entries) {
    const std::string why = catalog.unroutable_reason(e.op);
    if (other_torch(e) && (!why.empty() || uncovered(e))) {
      if (skipped.empty()) skipped_from = e.torch.empty() ? conf.torch : e.torch;
      skipped.push_back(e.op);
      continue;
    }
    if (!why.empty()) throw Error("routing conf " + e.where() + ": '" + e.op + "': " + why);
    table[e.op] = Route{e.op, e.kind, "conf " + e.where(), "", true};
  }
  if (!skipped.empty())
    res.details.push_back("routing conf " + conf.path + " was generated for torch " + skipped_from + "; " +
                        std::to_string(skipped.size()) + " of its operators cannot be routed in torch " +
                        installed + " and are skipped (" + skipped.front() + (skipped.size() > 1 ? ", ..." : "") + ")");
  for (const auto& [op, value] : overrides.per_op) {
    const std::string var = override_variable(op);
    if (std::string why = catalog.unroutable_reason(op); !why.empty()) {
      // An environment name may hold any byte but '=': quoted printable, on one line.
      res.notes.push_back(diag::printable(var, 160) + ": '" + diag::printable(op, 150) + "': " + why + "; ignored");
      continue;
    }
    auto kind = parse(value, false);
    if (!kind) {
      res.notes.push_back(var + "=" + diag::printable(value) + ": unknown route (valid: " + valid_names() +
                          "); ignored");
      continue;
    }
    auto it = table.find(op);
    std::string why = var;
    if (it != table.end()) why += " over " + std::string(name(it->second.kind)) + " (" + it->second.why + ")";
    table[op] = Route{op, *kind, why, "", true};
  }
  if (overrides.force) {
    std::vector<std::string> unimplemented;
    for (const std::string& op : catalog.family_ops(*overrides.force)) {
      if (table.count(op) || !catalog.unroutable_reason(op).empty()) continue;
      table[op] = Route{op, res.default_route.kind, res.default_route.why, "", true};
    }
    for (auto& [op, r] : table) force(r, *overrides.force, conf, catalog, unimplemented);
    if (!unimplemented.empty()) {
      std::string sample;
      for (size_t i = 0; i < unimplemented.size() && i < 5; ++i) sample += (i ? ", " : "") + unimplemented[i];
      res.notes.push_back("FLAGOS_FORCE_BACKEND=" + std::string(name(*overrides.force)) + ": " +
                          std::to_string(unimplemented.size()) + " ops have no " +
                          std::string(name(*overrides.force)) + " implementation and keep their "
                          "configured route (" + sample + (unimplemented.size() > 5 ? ", ..." : "") +
                          "); torch_fl.routes() lists them");
    }
  }
  for (auto& [op, r] : table) {
    if (r.kind == RouteKind::Unrouted && r.error.empty()) r.error = unrouted_error(r);
    res.routes.push_back(std::move(r));
  }
  return res;
}

}  // namespace flagos::routing
