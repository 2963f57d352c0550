#include "dispatch/install.h"

#include <torch/library.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "diag/channels.h"
#include "diag/log.h"
#include "dispatch/catalog.h"
#include "dispatch/route_kernel.h"
#include "dispatch/route_provider.h"
#include "error.h"
#include "routes/aten_op.h"
#include "routes/native.h"

namespace flagos::dispatch {
namespace {

using routing::Route;
using routing::RouteKind;

std::unique_ptr<Installed> g_installed;
std::mutex g_mutex;

// The route an op takes when its own (`own`) cannot serve it here: the first
// other kind of the fallback chain (route_provider.h) that can run here and
// implements it.
RouteKind next_route(const TorchCatalog& catalog, const std::string& op, RouteKind own) {
  for (RouteKind k : fallback_chain())
    if (k != own && catalog.unavailable_reason(k).empty() && catalog.implements(k, op)) return k;
  return RouteKind::Unrouted;
}

// Demotes routes this torch/build/plugin cannot serve; one note per cause.
Installed finalize(const routing::Resolution& res, const TorchCatalog& catalog,
                   const std::string& conf_path, std::vector<std::string>& notes) {
  Installed out;
  out.conf_path = conf_path;
  out.default_route = res.default_route;
  if (!catalog.unavailable_reason(out.default_route.kind).empty()) {
    notes.push_back("the conf's default route " + std::string(routing::name(out.default_route.kind)) +
                    " is unavailable (" + catalog.unavailable_reason(out.default_route.kind) +
                    "); unlisted ops use cpu_fallback");
    out.default_route.kind = RouteKind::CpuFallback;
    out.default_route.why += ", demoted";
  }
  std::map<std::string, std::vector<std::string>> demoted;  // cause -> ops
  for (Route r : res.routes) {
    if (r.kind != RouteKind::Unrouted && r.kind != RouteKind::CpuFallback) {
      std::string cause = catalog.unavailable_reason(r.kind);
      const std::string kind(routing::name(r.kind));
      if (cause.empty() && !catalog.implements(r.kind, r.op))
        cause = kind + " has no implementation of these ops here";
      if (!cause.empty()) {
        RouteKind next = next_route(catalog, r.op, r.kind);
        demoted[kind + ": " + cause + "; they run as " + std::string(routing::name(next))].push_back(r.op);
        r.why += ", demoted from " + kind + ": " + cause;
        r.kind = next;
        if (next == RouteKind::Unrouted)
          r.error = "aten::" + r.op + " cannot run on flagos here (" + r.why + ")";
      }
    }
    out.routes.push_back(std::move(r));
  }
  for (const auto& [cause, ops] : demoted) {
    std::string sample;
    for (size_t i = 0; i < ops.size() && i < 4; ++i) sample += (i ? ", " : "") + ops[i];
    notes.push_back(std::to_string(ops.size()) + " routes to " + cause + " (" + sample +
                    (ops.size() > 4 ? ", ..." : "") + ")");
  }
  return out;
}

// Unlisted ops that a default route other than cpu_fallback serves.
std::vector<std::string> default_served_ops(const Installed& table, const TorchCatalog& catalog) {
  const RouteKind kind = table.default_route.kind;
  if (kind == RouteKind::CpuFallback) return {};
  std::set<std::string> listed;
  for (const Route& r : table.routes) listed.insert(r.op);
  std::vector<std::string> ops;
  for (std::string& op : catalog.routable_ops())
    if (!listed.count(op) && (kind == RouteKind::Unrouted || catalog.implements(kind, op)))
      ops.push_back(std::move(op));
  return ops;
}

Installed resolve_all(const InstallOptions& options, std::vector<std::string>& notes,
                      std::vector<std::string>& details) {
  TorchCatalog catalog(options.catalog);
  routing::Conf conf = routing::load_conf(options.conf_path);
  routing::Resolution res = routing::resolve(conf, routing::overrides_from_env(), catalog);
  notes.insert(notes.end(), res.notes.begin(), res.notes.end());
  details = res.details;
  return finalize(res, catalog, conf.path, notes);
}

}  // namespace

const Installed& install(const InstallOptions& options) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_installed) {
    // A retried import installs the same conf again: nothing to do.
    if (g_installed->conf_path == std::filesystem::absolute(options.conf_path).lexically_normal().string())
      return *g_installed;
    throw Error("routes are already installed from " + g_installed->conf_path + "; cannot install " +
                options.conf_path + " in the same process");
  }
  std::vector<std::string> notes, details;
  Installed table = resolve_all(options, notes, details);
  for (const auto& n : notes) diag::warn(n);
  if (diag::channel_enabled("dispatch"))
    for (const auto& d : details) diag::info("dispatch: " + d);
  // FLAGOS_LOG=op_cache: reading the plugin's kernels registers the exit
  // report (or says at once that no kernel keeps a cache).
  if (diag::channel_enabled("op_cache")) routes::plugin_kernel_schemas();

  TorchCatalog catalog(options.catalog);
  static torch::Library* lib =
      new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
  const bool log_dispatch = diag::channel_enabled("dispatch");
  auto register_route = [&](const Route& r) {
    const RouteProvider& kind = provider(r.kind);
    kind.prepare();
    if (auto typed = kind.typed_kernel(r, log_dispatch ? dispatch_log_line(r) : "")) {
      lib->impl(r.op.c_str(), std::move(*typed));
      return;
    }
    std::optional<routes::NativeKernel> native;
    if (r.kind == RouteKind::Native) native = routes::find_native(r.op);
    // resolve() admitted only operators this torch declares.
    const c10::OperatorHandle op = routes::find_aten_op(r.op).value();
    lib->impl(r.op.c_str(), torch::CppFunction::makeFromBoxedFunctor(
                                std::make_unique<RouteKernel>(op, r, native, next_route(catalog, r.op, r.kind))));
  };
  for (const Route& r : table.routes) register_route(r);
  table.default_served = default_served_ops(table, catalog);
  for (const std::string& op : table.default_served) {
    Route r{op, table.default_route.kind, table.default_route.why, "", false};
    if (r.kind == RouteKind::Unrouted) r.error = routing::unrouted_error(r);
    register_route(r);
  }
  g_installed = std::make_unique<Installed>(std::move(table));
  return *g_installed;
}

const Installed* installed() { return g_installed.get(); }

Installed dry_run(const InstallOptions& options, std::vector<std::string>& notes) {
  std::vector<std::string> details;
  Installed table = resolve_all(options, notes, details);
  notes.insert(notes.end(), details.begin(), details.end());
  return table;
}

}  // namespace flagos::dispatch
