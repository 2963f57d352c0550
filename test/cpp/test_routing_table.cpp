// Route resolution (core/runtime/routing/table.*) over a fake Catalog:
// precedence FLAGOS_FORCE_BACKEND › FLAGOS_OP_<op> › the conf › the default,
// the notes it reports, and the "[conf] torch" rule.
#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "catch.hpp"
#include "error.h"
#include "routing/table.h"
#include "test_support.h"

using namespace flagos::routing;
using Catch::Matchers::StartsWith;
using flagos::test::ScopedEnv;

namespace {

// A torch of a few operators: which exist, which may be routed, which kinds
// implement them, and which kinds cannot run at all here.
struct FakeCatalog final : Catalog {
  std::string version = "2.13.0+cpu";
  std::set<std::string> ops = {"add.Tensor", "add_.Tensor", "mm", "neg", "sub.Tensor", "linear", "cuda_only"};
  std::map<std::string, std::string> unroutable = {
      {"linear", "CompositeImplicitAutograd: it decomposes into other operators; route those instead"}};
  std::map<RouteKind, std::set<std::string>> impl = {
      {RouteKind::CpuBoxing, {"add.Tensor", "add_.Tensor", "mm", "neg", "sub.Tensor"}},
      {RouteKind::CpuFallback, {"add.Tensor", "add_.Tensor", "mm", "neg", "sub.Tensor"}},
      {RouteKind::CudaBoxing, {"add.Tensor", "mm", "sub.Tensor", "cuda_only"}},
      {RouteKind::Native, {"add.Tensor", "mm"}},
      {RouteKind::FlagGems, {"add.Tensor"}},
      {RouteKind::TileOps, {"mm", "neg"}},
  };
  std::map<RouteKind, std::string> unavailable = {
      {RouteKind::CudaBoxing, "plugin 'fake' memory is not CUDA-ABI (no FLAGOS_CAP_CUDA_ABI)"},
      {RouteKind::FlagGemsCpp, "this build did not compile flaggems_cpp (FLAGOS_BUILD_FLAGGEMS_CPP=OFF)"},
      {RouteKind::TileOps, "this build did not compile tileops (FLAGOS_BUILD_TILEOPS=OFF)"},
  };

  std::string unroutable_reason(const std::string& op) const override {
    if (!ops.count(op)) return "no such operator in torch " + version;
    auto it = unroutable.find(op);
    return it == unroutable.end() ? "" : it->second;
  }
  bool implements(RouteKind kind, const std::string& op) const override {
    auto it = impl.find(kind);
    return kind == RouteKind::Unrouted || (it != impl.end() && it->second.count(op));
  }
  std::string unavailable_reason(RouteKind kind) const override {
    auto it = unavailable.find(kind);
    return it == unavailable.end() ? "" : it->second;
  }
  std::string torch_version() const override { return version; }
};

Conf conf_of(std::vector<std::pair<std::string, RouteKind>> routes) {
  Conf conf;
  conf.path = "/confs/test.toml";
  int line = 10;
  for (auto& [op, kind] : routes) conf.entries.push_back({op, kind, conf.path, line++});
  return conf;
}

const Route& route_of(const Resolution& res, const std::string& op) {
  auto it = std::find_if(res.routes.begin(), res.routes.end(), [&](const Route& r) { return r.op == op; });
  INFO("the route of " << op);
  REQUIRE(it != res.routes.end());
  return *it;
}

const std::string kValid = "native, cpu, cuda, flaggems, flaggems_cpp, tileops, cpu_fallback, none";

}  // namespace

TEST_CASE("the conf's routes, sorted; later entries win; the default route", "[routing][table]") {
  FakeCatalog catalog;
  Conf conf = conf_of({{"mm", RouteKind::CpuBoxing}, {"add.Tensor", RouteKind::CpuBoxing},
                       {"mm", RouteKind::Native}});
  Resolution res = resolve(conf, {}, catalog);
  REQUIRE(res.routes.size() == 2);
  CHECK(res.routes[0].op == "add.Tensor");
  CHECK(res.routes[1].op == "mm");
  CHECK(res.routes[1].kind == RouteKind::Native);
  CHECK(res.routes[1].why == "conf /confs/test.toml:12");
  CHECK(res.routes[1].listed);
  CHECK(res.notes.empty());
  // No [conf] default: cpu_fallback.
  CHECK(res.default_route.kind == RouteKind::CpuFallback);
  CHECK(res.default_route.why == "default");

  conf.default_kind = RouteKind::CpuBoxing;
  conf.default_where = "/confs/test.toml:3";
  res = resolve(conf, {}, catalog);
  CHECK(res.default_route.kind == RouteKind::CpuBoxing);
  CHECK(res.default_route.why == "conf default /confs/test.toml:3");
}

TEST_CASE("FLAGOS_OP_<op> overrides the conf, and routes an op the conf does not list", "[routing][table]") {
  FakeCatalog catalog;
  Overrides ov;
  ov.per_op = {{"add.Tensor", "flaggems"}, {"neg", "none"}};
  Resolution res = resolve(conf_of({{"add.Tensor", RouteKind::CpuBoxing}}), ov, catalog);
  CHECK(res.notes.empty());
  const Route& add = route_of(res, "add.Tensor");
  CHECK(add.kind == RouteKind::FlagGems);
  CHECK(add.why == "FLAGOS_OP_add__Tensor over cpu (conf /confs/test.toml:10)");
  const Route& neg = route_of(res, "neg");
  CHECK(neg.kind == RouteKind::Unrouted);
  CHECK(neg.why == "FLAGOS_OP_neg");
  CHECK(neg.listed);
  // `none` raises one error naming the op and how to route it.
  CHECK(neg.error ==
        "aten::neg is not routed on flagos (FLAGOS_OP_neg); route it with FLAGOS_OP_neg=cpu_fallback "
        "or in a custom conf (FLAGOS_BACKEND_CONFIG)");
}

TEST_CASE("a `none` conf entry carries the error calling it raises", "[routing][table]") {
  FakeCatalog catalog;
  Resolution res = resolve(conf_of({{"add_.Tensor", RouteKind::Unrouted}}), {}, catalog);
  CHECK(route_of(res, "add_.Tensor").error ==
        "aten::add_.Tensor is not routed on flagos (conf /confs/test.toml:10); route it with "
        "FLAGOS_OP_add___Tensor=cpu_fallback or in a custom conf (FLAGOS_BACKEND_CONFIG)");
}

TEST_CASE("bad overrides are one note each, never errors", "[routing][table]") {
  FakeCatalog catalog;
  Overrides ov;
  ov.per_op = {{"mm", "gpu"}, {"nope.x", "cpu"}, {"linear", "cpu"}};
  Resolution res = resolve(conf_of({{"mm", RouteKind::CpuBoxing}}), ov, catalog);
  CHECK(res.notes == std::vector<std::string>{
                         "FLAGOS_OP_linear: 'linear': CompositeImplicitAutograd: it decomposes into other "
                         "operators; route those instead; ignored",
                         "FLAGOS_OP_mm=gpu: unknown route (valid: " + kValid + "); ignored",
                         "FLAGOS_OP_nope__x: 'nope.x': no such operator in torch 2.13.0+cpu; ignored"});
  CHECK(route_of(res, "mm").kind == RouteKind::CpuBoxing);
  CHECK(res.routes.size() == 1);
  // Upstream spellings are conf-file syntax only.
  ov.per_op = {{"mm", "vendor"}};
  res = resolve(conf_of({{"neg", RouteKind::CpuBoxing}}), ov, catalog);
  CHECK(res.notes == std::vector<std::string>{"FLAGOS_OP_mm=vendor: unknown route (valid: " + kValid +
                                              "); ignored"});
}

TEST_CASE("a conf listing no routes and no default is one note", "[routing][table]") {
  FakeCatalog catalog;
  const std::string note =
      "routing conf /confs/test.toml lists no routes and no default: every operator takes cpu_fallback, "
      "a copy to the host and back (write [conf] default = \"cpu_fallback\" to mean it)";
  CHECK(resolve(conf_of({}), {}, catalog).notes == std::vector<std::string>{note});
  // Naming the default, or any route, says it is meant.
  Conf chosen = conf_of({});
  chosen.default_kind = RouteKind::CpuFallback;
  CHECK(resolve(chosen, {}, catalog).notes.empty());
  CHECK(resolve(conf_of({{"neg", RouteKind::CpuFallback}}), {}, catalog).notes.empty());
}

TEST_CASE("conf entries naming unknown or unroutable ops are errors at their line", "[routing][table]") {
  FakeCatalog catalog;
  CHECK_THROWS_WITH(
      resolve(conf_of({{"mm", RouteKind::CpuBoxing}, {"nope.x", RouteKind::CpuBoxing}}), {}, catalog),
      "[flagos] routing conf /confs/test.toml:11: 'nope.x': no such operator in torch 2.13.0+cpu");
  CHECK_THROWS_WITH(resolve(conf_of({{"linear", RouteKind::CpuBoxing}}), {}, catalog),
                    "[flagos] routing conf /confs/test.toml:10: 'linear': CompositeImplicitAutograd: it "
                    "decomposes into other operators; route those instead");
}

TEST_CASE("[conf] torch: a conf generated for another torch skips the ops it cannot route, with one detail",
          "[routing][table]") {
  FakeCatalog catalog;
  Conf conf = conf_of({{"add.Tensor", RouteKind::CpuBoxing}, {"gone.a", RouteKind::CpuBoxing},
                       {"gone.b", RouteKind::CpuBoxing}});
  conf.torch = "2.11.0";
  Resolution res = resolve(conf, {}, catalog);
  CHECK(res.routes.size() == 1);
  CHECK(res.notes.empty());  // not a problem: reported under FLAGOS_LOG=dispatch and by conf check
  CHECK(res.details == std::vector<std::string>{
                           "routing conf /confs/test.toml was generated for torch 2.11.0; 2 of its operators cannot "
                           "be routed in torch 2.13.0+cpu and are skipped (gone.a, ...)"});
  // Also skipped: an op that exists but changed kind between the two torch
  // versions (seen: an op composite in 2.11 and not in 2.13).
  conf.entries.push_back({"linear", RouteKind::CpuBoxing, conf.path, 40});
  CHECK(resolve(conf, {}, catalog).routes.size() == 1);
  // The same torch (a local version label aside): a missing op is an error.
  conf.entries.pop_back();
  conf.torch = "2.13.0";
  CHECK_THROWS_WITH(resolve(conf, {}, catalog),
                    "[flagos] routing conf /confs/test.toml:11: 'gone.a': no such operator in torch 2.13.0+cpu");
  conf.torch = "2.13.0+cu130";
  CHECK_THROWS_WITH(resolve(conf, {}, catalog), StartsWith("[flagos] routing conf /confs/test.toml:11: "));
  // No torch recorded (a hand-written conf): an error too.
  conf.torch.clear();
  CHECK_THROWS_WITH(resolve(conf, {}, catalog), StartsWith("[flagos] routing conf /confs/test.toml:11: "));
}

TEST_CASE("[conf] torch: a conf for another torch routing an op to a stock kernel this torch lacks skips it",
          "[routing][table]") {
  FakeCatalog catalog;  // cuda_only: a CUDA kernel, no CPU one (as _scaled_mm_v2 in torch 2.11)
  Conf conf = conf_of({{"add.Tensor", RouteKind::CpuBoxing}, {"cuda_only", RouteKind::CpuBoxing}});
  conf.torch = "2.14.0";
  Resolution res = resolve(conf, {}, catalog);
  CHECK(res.routes.size() == 1);
  CHECK(res.notes.empty());
  CHECK(res.details == std::vector<std::string>{
                           "routing conf /confs/test.toml was generated for torch 2.14.0; 1 of its operators cannot "
                           "be routed in torch 2.13.0+cpu and are skipped (cuda_only)"});
  // Only a stock key's coverage changes with the torch: a native route the
  // plugin lacks stays listed (install demotes it, with a note), and so does
  // a stock route this build cannot run at all.
  conf.entries.push_back({"sub.Tensor", RouteKind::Native, conf.path, 30});
  conf.entries.push_back({"neg", RouteKind::CudaBoxing, conf.path, 31});
  res = resolve(conf, {}, catalog);
  CHECK(route_of(res, "sub.Tensor").kind == RouteKind::Native);
  CHECK(route_of(res, "neg").kind == RouteKind::CudaBoxing);
  // The same torch: the route stays, for install to demote with a note.
  conf.torch = "2.13.0";
  CHECK(route_of(resolve(conf, {}, catalog), "cuda_only").kind == RouteKind::CpuBoxing);
}

TEST_CASE("[conf] torch: entries keep their own file's tag through an include", "[routing][table]") {
  FakeCatalog catalog;
  // A hand-written conf (no tag) including a shipped one generated for 2.11.
  Conf conf = conf_of({{"add.Tensor", RouteKind::CpuBoxing}});
  conf.entries.push_back({"gone.a", RouteKind::CpuBoxing, "/confs/host.toml", 7, "2.11.0"});
  Resolution res = resolve(conf, {}, catalog);
  CHECK(res.routes.size() == 1);
  CHECK(res.details == std::vector<std::string>{
                           "routing conf /confs/test.toml was generated for torch 2.11.0; 1 of its operators cannot "
                           "be routed in torch 2.13.0+cpu and are skipped (gone.a)"});
  // The hand-written file's own unknown op is still an error.
  conf.entries.push_back({"gone.b", RouteKind::CpuBoxing, "/confs/test.toml", 3, ""});
  CHECK_THROWS_WITH(resolve(conf, {}, catalog),
                    "[flagos] routing conf /confs/test.toml:3: 'gone.b': no such operator in torch 2.13.0+cpu");
}

TEST_CASE("FLAGOS_FORCE_BACKEND wins over FLAGOS_OP_ and the conf", "[routing][table]") {
  FakeCatalog catalog;
  Overrides ov;
  ov.per_op = {{"mm", "cpu_fallback"}};
  ov.force = Family::Vendor;
  Resolution res = resolve(conf_of({{"mm", RouteKind::CpuBoxing}, {"add.Tensor", RouteKind::FlagGems},
                                    {"neg", RouteKind::CpuFallback}}),
                           ov, catalog);
  const Route& mm = route_of(res, "mm");
  CHECK(mm.kind == RouteKind::Native);
  CHECK(mm.why ==
        "FLAGOS_FORCE_BACKEND=vendor over cpu_fallback (FLAGOS_OP_mm over cpu (conf /confs/test.toml:10))");
  CHECK(route_of(res, "add.Tensor").kind == RouteKind::Native);
  // neg: no native kernel; cuda does not implement it; cpu boxing does.
  CHECK(route_of(res, "neg").kind == RouteKind::CpuBoxing);
  CHECK(res.notes.empty());
  // The default route of unlisted ops is not repinned.
  CHECK(res.default_route.kind == RouteKind::CpuFallback);
}

TEST_CASE("FLAGOS_FORCE_BACKEND skips a family kind that cannot run here while another can",
          "[routing][table]") {
  FakeCatalog catalog;  // sub.Tensor: cuda implements it (unavailable), cpu boxing too (available)
  Overrides ov;
  ov.force = Family::Vendor;
  Resolution res = resolve(conf_of({{"sub.Tensor", RouteKind::CpuFallback}}), ov, catalog);
  CHECK(route_of(res, "sub.Tensor").kind == RouteKind::CpuBoxing);
  CHECK(route_of(res, "sub.Tensor").error.empty());
}

TEST_CASE("FLAGOS_FORCE_BACKEND: implemented but not runnable here raises", "[routing][table]") {
  FakeCatalog catalog;
  catalog.unavailable[RouteKind::CpuBoxing] = "plugin 'fake' memory is not host-addressable";
  Overrides ov;
  ov.force = Family::Vendor;
  Resolution res = resolve(conf_of({{"sub.Tensor", RouteKind::CpuFallback}}), ov, catalog);
  const Route& sub = route_of(res, "sub.Tensor");
  CHECK(sub.kind == RouteKind::Unrouted);
  CHECK(sub.why == "FLAGOS_FORCE_BACKEND=vendor over cpu_fallback (conf /confs/test.toml:10)");
  // Named after the family's first kind that implements it.
  CHECK(sub.error ==
        "aten::sub.Tensor is forced onto cuda by FLAGOS_FORCE_BACKEND=vendor, but plugin 'fake' memory is "
        "not CUDA-ABI (no FLAGOS_CAP_CUDA_ABI)");
}

TEST_CASE("FLAGOS_FORCE_BACKEND: unimplemented ops keep their route, reported in one note",
          "[routing][table]") {
  FakeCatalog catalog;
  catalog.ops.insert({"op1", "op2", "op3", "op4", "op5", "op6"});
  std::vector<std::pair<std::string, RouteKind>> routes = {{"add.Tensor", RouteKind::CpuBoxing},
                                                           {"neg", RouteKind::CpuBoxing}};
  for (const char* op : {"op1", "op2", "op3", "op4", "op5", "op6"}) routes.push_back({op, RouteKind::CpuFallback});
  Overrides ov;
  ov.force = Family::FlagGems;
  Resolution res = resolve(conf_of(routes), ov, catalog);
  CHECK(route_of(res, "add.Tensor").kind == RouteKind::FlagGems);
  CHECK(route_of(res, "neg").kind == RouteKind::CpuBoxing);
  CHECK(route_of(res, "neg").why == "conf /confs/test.toml:11");
  CHECK(route_of(res, "op6").kind == RouteKind::CpuFallback);
  CHECK(res.notes == std::vector<std::string>{
                         "FLAGOS_FORCE_BACKEND=flaggems: 7 ops have no flaggems implementation and keep their "
                         "configured route (neg, op1, op2, op3, op4, ...); torch_fl.routes() lists them"});
}

TEST_CASE("FLAGOS_FORCE_BACKEND=flaggems with the Python layer off: flaggems_cpp is not compiled",
          "[routing][table]") {
  FakeCatalog catalog;
  catalog.unavailable[RouteKind::FlagGems] = "FLAGOS_DISABLE_FLAGGEMS_PY=1 leaves the FlagGems Python layer unregistered";
  catalog.impl[RouteKind::FlagGemsCpp] = {"mm"};
  Overrides ov;
  ov.force = Family::FlagGems;
  Resolution res = resolve(conf_of({{"add.Tensor", RouteKind::CpuBoxing}, {"mm", RouteKind::CpuBoxing}}), ov,
                           catalog);
  CHECK(route_of(res, "add.Tensor").error ==
        "aten::add.Tensor is forced onto flaggems by FLAGOS_FORCE_BACKEND=flaggems, but "
        "FLAGOS_DISABLE_FLAGGEMS_PY=1 leaves the FlagGems Python layer unregistered");
  CHECK(route_of(res, "mm").error ==
        "aten::mm is forced onto flaggems_cpp by FLAGOS_FORCE_BACKEND=flaggems, but this build did not "
        "compile flaggems_cpp (FLAGOS_BUILD_FLAGGEMS_CPP=OFF)");
}

TEST_CASE("FLAGOS_FORCE_BACKEND=tileops repins the ops the conf annotates", "[routing][table]") {
  FakeCatalog catalog;
  Conf conf = conf_of({{"mm", RouteKind::CpuBoxing}, {"add.Tensor", RouteKind::CpuBoxing},
                       {"neg", RouteKind::CpuBoxing}, {"sub.Tensor", RouteKind::CpuBoxing}});
  conf.tileops = {"mm", "sub.Tensor"};
  Overrides ov;
  ov.force = Family::TileOps;
  Resolution res = resolve(conf, ov, catalog);
  // Not compiled in: the annotated op TileOps implements raises; the one it
  // does not implement is reported and keeps its route, as do the unannotated.
  CHECK(route_of(res, "mm").kind == RouteKind::Unrouted);
  CHECK(route_of(res, "mm").error ==
        "aten::mm is forced onto tileops by FLAGOS_FORCE_BACKEND=tileops, but this build did not compile "
        "tileops (FLAGOS_BUILD_TILEOPS=OFF)");
  CHECK(route_of(res, "sub.Tensor").kind == RouteKind::CpuBoxing);
  CHECK(route_of(res, "neg").kind == RouteKind::CpuBoxing);  // implemented, not annotated
  CHECK(route_of(res, "add.Tensor").kind == RouteKind::CpuBoxing);
  CHECK(res.notes == std::vector<std::string>{
                         "FLAGOS_FORCE_BACKEND=tileops: 1 ops have no tileops implementation and keep their "
                         "configured route (sub.Tensor); torch_fl.routes() lists them"});
  // Compiled in: the annotated op takes tileops.
  catalog.unavailable.erase(RouteKind::TileOps);
  CHECK(route_of(resolve(conf, ov, catalog), "mm").kind == RouteKind::TileOps);
}

TEST_CASE("override_variable and FLAGOS_OP_* from the environment", "[routing][table]") {
  CHECK(override_variable("add.Tensor") == "FLAGOS_OP_add__Tensor");
  CHECK(override_variable("add_.Tensor") == "FLAGOS_OP_add___Tensor");
  CHECK(override_variable("__ior__.Tensor") == "FLAGOS_OP___ior____Tensor");
  CHECK(override_variable("mm") == "FLAGOS_OP_mm");

  // Each op's variable names it again, in-place and dunder ops included.
  const std::vector<std::string> ops = {"add.Tensor", "add_.Tensor", "__ior__.Tensor", "mm", "__and__",
                                        "_foreach_add_.Scalar", "sum.dim_IntList"};
  std::vector<std::string> names;  // outlives `env`: ScopedEnv keeps the name pointer
  for (const auto& op : ops) names.push_back(override_variable(op));
  std::vector<std::unique_ptr<ScopedEnv>> env;
  for (const auto& n : names) env.push_back(std::make_unique<ScopedEnv>(n.c_str(), "cpu"));
  ScopedEnv empty("FLAGOS_OP_neg", "");  // empty means unset
  ScopedEnv forced("FLAGOS_FORCE_BACKEND", "vendor");
  Overrides ov = overrides_from_env();
  std::map<std::string, std::string> expected;
  for (const auto& op : ops) expected[op] = "cpu";
  CHECK(ov.per_op == expected);
  CHECK(ov.force == Family::Vendor);
}

TEST_CASE("FLAGOS_FORCE_BACKEND unset or invalid: no forcing", "[routing][table]") {
  flagos::test::CapturedLog log;  // the registry reports the invalid value itself
  {
    ScopedEnv unset("FLAGOS_FORCE_BACKEND", std::nullopt);
    CHECK_FALSE(overrides_from_env().force.has_value());
  }
  ScopedEnv invalid("FLAGOS_FORCE_BACKEND", "native");
  CHECK_FALSE(overrides_from_env().force.has_value());
}
