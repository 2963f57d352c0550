// routing::Catalog over the installed torch, this build and the active
// plugin: which operators exist and may be routed, and which route kinds
// can serve them here.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "routing/table.h"

namespace flagos::dispatch {

// What the Python layer knows about this build and process.
struct CatalogOptions {
  std::string torch_version;        // "2.13.0+cpu"
  bool flaggems_enabled = true;     // FlagGems' Python layer may be called
  std::string flaggems_off_reason;  // why not, when !flaggems_enabled
  bool boxing_compiled = false;     // the build record's KERNELS["boxing"]
  // FlagGems' operator list (confs/flaggems_ops.txt): what the flaggems
  // family implements when its Python layer is not available here.
  std::vector<std::string> flaggems_ops;
  bool flaggems_cpp_enabled = false;  // FlagGems' C++ runtime is loaded (torch_fl._flaggems_cpp)
  std::string flaggems_cpp_off_reason;  // why not, when !flaggems_cpp_enabled
  bool tileops_enabled = false;    // the tileops Python layer is registered
  std::string tileops_off_reason;  // why not, when !tileops_enabled
  // What the tileops route implements (torch_fl.tileops.table), loaded or not.
  std::vector<std::string> tileops_ops;
};

class TorchCatalog final : public routing::Catalog {
 public:
  explicit TorchCatalog(CatalogOptions options);
  std::string unroutable_reason(const std::string& op) const override;
  bool implements(routing::RouteKind kind, const std::string& op) const override;
  std::string unavailable_reason(routing::RouteKind kind) const override;
  std::string torch_version() const override { return options_.torch_version; }
  std::vector<std::string> family_ops(routing::Family family) const override;
  // Every aten operator of this torch that a conf may list (sorted).
  std::vector<std::string> routable_ops() const;

 private:
  CatalogOptions options_;
};

// Records which operators the core itself implements on PrivateUse1 (views,
// empty, copies): must run before any route is installed.
void snapshot_builtin_kernels();
const std::set<std::string>& builtin_ops();

}  // namespace flagos::dispatch
