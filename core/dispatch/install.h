// Installing the route table into torch's dispatcher: load the conf, apply
// the environment's overrides, check every route against what this torch,
// build and plugin can do, then register one RouteKernel per listed op on
// PrivateUse1. Done once per process, at import, after plugin activation.
#pragma once

#include <string>
#include <vector>

#include "dispatch/catalog.h"
#include "routing/table.h"

namespace flagos::dispatch {

struct InstallOptions {
  std::string conf_path;
  CatalogOptions catalog;
};

struct Installed {
  std::string conf_path;
  std::vector<routing::Route> routes;  // final routes of listed ops, sorted by op
  routing::Route default_route;        // unlisted ops
  // Unlisted ops the default route serves, each with its own RouteKernel.
  // Empty when the default is cpu_fallback: the global fallback (core/aten)
  // serves every unlisted op then. Unlisted ops the default route cannot
  // run (no CPU kernel for a `cpu` default...) stay on the global fallback.
  std::vector<std::string> default_served;
};

// Throws flagos::Error (file:line) for a conf that cannot be used; the
// dispatcher is untouched then. A second call with the same conf returns the
// installed table (a retried import); with another conf it throws.
const Installed& install(const InstallOptions& options);

// The installed table, or nullptr before install().
const Installed* installed();

// Resolves a conf exactly as install() would, without registering anything
// (`python -m torch_fl conf check`). Problems that install() would report
// as [flagos] lines are returned in `notes`.
Installed dry_run(const InstallOptions& options, std::vector<std::string>& notes);

}  // namespace flagos::dispatch
