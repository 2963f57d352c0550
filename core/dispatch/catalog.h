// routing::Catalog over the installed torch, this build and the active
// plugin: which operators exist and may be routed, and which route kinds
// can serve them here.
#pragma once

#include <set>
#include <string>

#include "routing/table.h"

namespace flagos::dispatch {

class TorchCatalog final : public routing::Catalog {
 public:
  TorchCatalog(std::string torch_version, bool flaggems_enabled, std::string flaggems_off_reason);
  std::string unroutable_reason(const std::string& op) const override;
  bool implements(routing::RouteKind kind, const std::string& op) const override;
  std::string unavailable_reason(routing::RouteKind kind) const override;
  std::string torch_version() const override { return torch_version_; }

 private:
  std::string torch_version_;
  bool flaggems_enabled_;
  std::string flaggems_off_reason_;
};

// Records which operators the core itself implements on PrivateUse1 (views,
// empty, copies): must run before any route is installed.
void snapshot_builtin_kernels();
const std::set<std::string>& builtin_ops();

}  // namespace flagos::dispatch
