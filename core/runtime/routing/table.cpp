#include "routing/table.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "env/registry.h"
#include "error.h"

extern char** environ;

namespace flagos::routing {
namespace {

constexpr std::string_view kPrefix = "FLAGOS_OP_";

std::string op_from_variable(std::string_view suffix) {
  std::string op;
  for (size_t i = 0; i < suffix.size(); ++i) {
    if (suffix[i] == '_' && i + 1 < suffix.size() && suffix[i + 1] == '_' &&
        i > 0) {  // a leading "__" stays (dunder ops such as __ior__)
      op += '.';
      ++i;
    } else {
      op += suffix[i];
    }
  }
  return op;
}

// Applies FLAGOS_FORCE_BACKEND to one route.
void force(Route& r, Family family, const Conf& conf, const Catalog& catalog,
           std::vector<std::string>& unimplemented) {
  if (family == Family::TileOps &&
      std::find(conf.tileops.begin(), conf.tileops.end(), r.op) == conf.tileops.end()) {
    unimplemented.push_back(r.op);
    return;
  }
  for (RouteKind kind : kinds_of(family)) {
    if (!catalog.implements(kind, r.op) && family != Family::TileOps) continue;
    const std::string missing = catalog.unavailable_reason(kind);
    const std::string was = std::string(name(r.kind)) + " (" + r.why + ")";
    r.why = "FLAGOS_FORCE_BACKEND=" + std::string(name(family)) + " over " + was;
    if (missing.empty()) {
      r.kind = kind;
      r.error.clear();
    } else {
      r.kind = RouteKind::Unrouted;
      r.error = "aten::" + r.op + " is forced onto " + std::string(name(kind)) +
                " by FLAGOS_FORCE_BACKEND=" + std::string(name(family)) + ", but " + missing;
    }
    return;
  }
  unimplemented.push_back(r.op);
}

std::string unrouted_error(const Route& r) {
  return "aten::" + r.op + " is not routed on flagos (" + r.why + "); route it with " +
         override_variable(r.op) + "=cpu_fallback or in a custom conf (FLAGOS_BACKEND_CONFIG)";
}

}  // namespace

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

  std::map<std::string, Route> table;
  const std::string installed = catalog.torch_version();
  const bool other_torch = !conf.torch.empty() &&
                           installed.substr(0, installed.find('+')) != conf.torch.substr(0, conf.torch.find('+'));
  std::vector<std::string> skipped;
  for (const ConfEntry& e : conf.entries) {
    if (std::string why = catalog.unroutable_reason(e.op); !why.empty()) {
      if (other_torch && catalog.unroutable_reason(e.op).rfind("no such operator", 0) == 0) {
        skipped.push_back(e.op);
        continue;
      }
      throw Error("routing conf " + e.where() + ": '" + e.op + "': " + why);
    }
    table[e.op] = Route{e.op, e.kind, "conf " + e.where(), "", true};
  }
  if (!skipped.empty())
    res.notes.push_back("routing conf " + conf.path + " was generated for torch " + conf.torch + "; " +
                        std::to_string(skipped.size()) + " of its operators do not exist in torch " +
                        installed + " and are skipped (" + skipped.front() + (skipped.size() > 1 ? ", ..." : "") + ")");
  for (const auto& [op, value] : overrides.per_op) {
    const std::string var = override_variable(op);
    if (std::string why = catalog.unroutable_reason(op); !why.empty()) {
      res.notes.push_back(var + ": '" + op + "': " + why + "; ignored");
      continue;
    }
    auto kind = parse(value, false);
    if (!kind) {
      res.notes.push_back(var + "=" + value + ": unknown route (valid: " + valid_names() +
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
