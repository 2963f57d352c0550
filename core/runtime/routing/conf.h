// Routing confs: which route kind each ATen operator takes (docs/routing.md).
//
// Two formats, chosen by the file name:
//   *.toml  [conf] platform/default/include/tileops, then [routes] "op" = "kind"
//   other   the upstream line format: `op = backend`, `# comment`,
//           `include <path>`; `# tileops` after a route annotates it.
// Includes resolve against the including file's directory and nest at most 8
// deep; a cycle is an error. Each distinct file (dev, inode) is read once, at
// its first include. A TOML conf's includes are read before its own [conf]
// values and routes, so the including file wins; in the line format an
// include's lines take its place. Later entries win (table.cpp). One load
// reads at most 256 files and 100,000 routes.
// Every error names the file and the line and throws flagos::Error.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "routing/route_kind.h"

namespace flagos::routing {

struct ConfEntry {
  std::string op;  // "add.Tensor", "mm" (default overload), "_foreach_add_.Scalar"
  RouteKind kind;
  std::string file;
  int line = 0;
  // The `[conf] torch` of the file that lists the entry ("" when it names
  // none): a shipped conf included by a hand-written one keeps its own tag.
  std::string torch;
  std::string where() const { return file + ":" + std::to_string(line); }
};

struct Conf {
  std::string path;      // the file loaded (absolute)
  std::string platform;  // [conf] platform; "" for line-format confs
  // [conf] torch: the torch version a generated conf was made from. Against
  // another torch, operators that torch lacks are skipped (a detail, not an
  // error): a shipped conf outlives the exact torch it was generated with.
  // Each entry is judged by its own file's tag (ConfEntry::torch), else by
  // this one.
  std::string torch;
  std::optional<RouteKind> default_kind;  // [conf] default; else cpu_fallback
  std::string default_where;
  std::vector<ConfEntry> entries;    // in file order, includes first
  std::vector<std::string> tileops;  // ops annotated for FLAGOS_FORCE_BACKEND=tileops
};

Conf load_conf(const std::string& path);

// "add.Tensor" shaped: an identifier, then optionally "." and an overload.
bool valid_op_name(const std::string& op);

}  // namespace flagos::routing
