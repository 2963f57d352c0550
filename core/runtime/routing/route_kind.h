// Route kinds: where one ATen operator on flagos runs (docs/architecture.md, "Routing").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flagos::routing {

enum class RouteKind {
  Native,       // the plugin's kernel extension (out= kernels, core allocates)
  CpuBoxing,    // the installed torch's CPU kernel on host-addressable memory, zero-copy
  CudaBoxing,   // the installed torch's CUDA kernel on CUDA-ABI memory, zero-copy
  FlagGems,     // a registered Python implementation (FlagGems) on the current stream
  FlagGemsCpp,  // FlagGems' C++ wrapper (compiled in with FLAGOS_BUILD_FLAGGEMS_CPP)
  TileOps,      // a registered Python implementation over TileOps (FLAGOS_BUILD_TILEOPS)
  CpuFallback,  // copy operands to the host, run the CPU kernel, copy back
  Unrouted,     // deliberately not routed: calling it raises a clear error
};
inline constexpr size_t kRouteKindCount = 8;

// The conf spelling: native, cpu, cuda, flaggems, flaggems_cpp, tileops,
// cpu_fallback, none.
std::string_view name(RouteKind kind);

// Parses a conf value. TOML confs and FLAGOS_OP_* take the names above;
// the upstream line format (`op = backend`) also takes its own spellings:
// flagos_python / flaggems_python (-> flaggems), flagos / flaggems (-> the
// C++ FlagGems path, as upstream meant), and vendor names such as ascend,
// musa, gcu, metax, tsingmicro (-> native).
std::optional<RouteKind> parse(std::string_view value, bool upstream_spellings);

// "native, cpu, cuda, ..." for error messages.
std::string valid_names();

// FLAGOS_FORCE_BACKEND families.
enum class Family { FlagGems, Vendor, TileOps };
std::optional<Family> parse_family(std::string_view value);
std::string_view name(Family family);
// Route kinds of a family, in preference order.
std::vector<RouteKind> kinds_of(Family family);

}  // namespace flagos::routing
