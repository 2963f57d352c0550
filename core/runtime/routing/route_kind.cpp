#include "routing/route_kind.h"

#include <array>
#include <utility>

namespace flagos::routing {
namespace {

constexpr std::array<std::pair<RouteKind, std::string_view>, 8> kNames{{
    {RouteKind::Native, "native"},
    {RouteKind::CpuBoxing, "cpu"},
    {RouteKind::CudaBoxing, "cuda"},
    {RouteKind::FlagGems, "flaggems"},
    {RouteKind::FlagGemsCpp, "flaggems_cpp"},
    {RouteKind::TileOps, "tileops"},
    {RouteKind::CpuFallback, "cpu_fallback"},
    {RouteKind::Unrouted, "none"},
}};

constexpr std::array<std::pair<std::string_view, RouteKind>, 11> kUpstream{{
    {"flagos_python", RouteKind::FlagGems},
    {"flaggems_python", RouteKind::FlagGems},
    {"flagos", RouteKind::FlagGemsCpp},
    {"flaggems", RouteKind::FlagGemsCpp},
    {"ascend", RouteKind::Native},
    {"musa", RouteKind::Native},
    {"gcu", RouteKind::Native},
    {"metax", RouteKind::Native},
    {"tsingmicro", RouteKind::Native},
    {"vendor", RouteKind::Native},
    {"cuda", RouteKind::CudaBoxing},
}};

}  // namespace

std::string_view name(RouteKind kind) {
  for (const auto& [k, n] : kNames)
    if (k == kind) return n;
  return "?";
}

std::optional<RouteKind> parse(std::string_view value, bool upstream_spellings) {
  if (upstream_spellings) {
    for (const auto& [n, k] : kUpstream)
      if (n == value) return k;
  }
  for (const auto& [k, n] : kNames)
    if (n == value) return k;
  return std::nullopt;
}

std::string valid_names() {
  std::string out;
  for (const auto& [k, n] : kNames) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

std::optional<Family> parse_family(std::string_view value) {
  if (value == "flaggems") return Family::FlagGems;
  if (value == "vendor") return Family::Vendor;
  if (value == "tileops") return Family::TileOps;
  return std::nullopt;
}

std::string_view name(Family family) {
  switch (family) {
    case Family::FlagGems: return "flaggems";
    case Family::Vendor: return "vendor";
    case Family::TileOps: return "tileops";
  }
  return "?";
}

std::vector<RouteKind> kinds_of(Family family) {
  switch (family) {
    case Family::FlagGems: return {RouteKind::FlagGems, RouteKind::FlagGemsCpp};
    case Family::Vendor: return {RouteKind::Native, RouteKind::CudaBoxing, RouteKind::CpuBoxing};
    case Family::TileOps: return {RouteKind::TileOps};
  }
  return {};
}

}  // namespace flagos::routing
