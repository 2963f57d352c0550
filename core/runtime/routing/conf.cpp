#include "routing/conf.h"

#include <toml++/toml.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "error.h"

namespace flagos::routing {
namespace {

namespace fs = std::filesystem;
constexpr int kMaxDepth = 8;

[[noreturn]] void fail(const std::string& file, int line, const std::string& message) {
  throw Error("routing conf " + file + ":" + std::to_string(line) + ": " + message);
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

RouteKind parse_kind(const std::string& value, bool upstream, const std::string& op,
                     const std::string& file, int line) {
  auto kind = parse(value, upstream);
  if (!kind)
    fail(file, line, "unknown route '" + value + "' for '" + op + "' (valid: " + valid_names() + ")");
  return *kind;
}

void add_entry(Conf& conf, const std::string& op, RouteKind kind, const std::string& file, int line,
               const std::string& torch = "") {
  if (!valid_op_name(op)) fail(file, line, "'" + op + "' is not an operator name (expected e.g. add.Tensor)");
  conf.entries.push_back({op, kind, file, line, torch});
}

std::string resolve_include(const std::string& from, const std::string& target) {
  fs::path p(target);
  if (p.is_relative()) p = fs::path(from).parent_path() / p;
  return fs::absolute(p).lexically_normal().string();
}

void load_into(Conf& conf, const std::string& path, int depth, const std::string& from, int from_line);

void load_lines(Conf& conf, const std::string& path, int depth) {
  std::ifstream in(path);
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    std::string code = raw, comment;
    if (auto hash = raw.find('#'); hash != std::string::npos) {
      code = raw.substr(0, hash);
      comment = trim(raw.substr(hash + 1));
    }
    code = trim(code);
    if (code.empty()) continue;
    if (code.rfind("include", 0) == 0 && code.find('=') == std::string::npos) {
      std::string target = trim(code.substr(7));
      if (target.empty()) fail(path, line, "include needs a path");
      load_into(conf, resolve_include(path, target), depth + 1, path, line);
      continue;
    }
    auto eq = code.find('=');
    if (eq == std::string::npos)
      fail(path, line, "expected `op = backend` or `include <path>`, got '" + code + "'");
    std::string op = trim(code.substr(0, eq)), value = trim(code.substr(eq + 1));
    add_entry(conf, op, parse_kind(value, true, op, path, line), path, line);
    if (comment.rfind("tileops", 0) == 0) conf.tileops.push_back(op);
  }
}

int line_of(const toml::node& node) { return static_cast<int>(node.source().begin.line); }

// A [conf] list of strings: each item with its own line.
template <typename F>
void load_strings(const std::string& path, const toml::node& node, const std::string& key, F&& each) {
  const toml::array* list = node.as_array();
  if (!list) fail(path, line_of(node), "[conf] " + key + " must be a list of strings");
  for (const auto& item : *list) {
    auto s = item.value<std::string>();
    if (!s) fail(path, line_of(item), "[conf] " + key + " entries must be strings");
    each(*s, line_of(item));
  }
}

void load_toml(Conf& conf, const std::string& path, int depth) {
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    fail(path, static_cast<int>(e.source().begin.line), std::string(e.description()));
  }
  std::string file_torch;  // this file's [conf] torch, for its own routes
  if (auto* meta = root["conf"].as_table()) {
    // Includes first, whatever the key order: the including file's [conf]
    // values (default, torch) and routes must win over the included ones.
    if (const toml::node* node = meta->get("include"))
      load_strings(path, *node, "include", [&](const std::string& s, int line) {
        load_into(conf, resolve_include(path, s), depth + 1, path, line);
      });
    for (const auto& [key, node] : *meta) {
      const std::string k(key.str());
      const int line = line_of(node);
      if (k == "include") continue;
      if (k == "platform" || k == "default" || k == "torch") {
        auto s = node.value<std::string>();
        if (!s) fail(path, line, "[conf] " + k + " must be a string");
        if (k == "platform") {
          if (depth == 0) conf.platform = *s;
        } else if (k == "torch") {
          conf.torch = file_torch = *s;
        } else {
          conf.default_kind = parse_kind(*s, false, "default", path, line);
          conf.default_where = path + ":" + std::to_string(line);
        }
      } else if (k == "tileops") {
        load_strings(path, node, k, [&](const std::string& s, int) { conf.tileops.push_back(s); });
      } else if (k != "generated_by" && k != "description") {
        fail(path, line, "unknown key '" + k + "' in [conf] (platform, default, include, tileops, "
                         "description, generated_by, torch)");
      }
    }
  }
  for (const auto& [key, node] : root) {
    const std::string k(key.str());
    if (k != "conf" && k != "routes")
      fail(path, line_of(node), "unknown table [" + k + "] (expected [conf] and [routes])");
  }
  if (auto* routes = root["routes"].as_table()) {
    for (const auto& [key, node] : *routes) {
      const std::string op(key.str());
      const int line = line_of(node);
      auto value = node.value<std::string>();
      if (!value) fail(path, line, "the route of '" + op + "' must be a string");
      add_entry(conf, op, parse_kind(*value, false, op, path, line), path, line, file_torch);
    }
  }
}

void load_into(Conf& conf, const std::string& path, int depth, const std::string& from, int from_line) {
  if (depth > kMaxDepth) fail(from, from_line, "includes nest deeper than 8 (a cycle?)");
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    if (from.empty()) throw Error("routing conf " + path + ": no such file");
    fail(from, from_line, "included file " + path + " does not exist");
  }
  const bool toml_format = fs::path(path).extension() == ".toml";
  if (toml_format) {
    load_toml(conf, path, depth);
  } else {
    load_lines(conf, path, depth);
  }
}

}  // namespace

bool valid_op_name(const std::string& op) {
  if (op.empty() || !(std::isalpha(static_cast<unsigned char>(op[0])) || op[0] == '_')) return false;
  int dots = 0;
  for (char c : op) {
    if (c == '.') {
      if (++dots > 1) return false;
    } else if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) {
      return false;
    }
  }
  return op.back() != '.';
}

Conf load_conf(const std::string& path) {
  Conf conf;
  conf.path = std::filesystem::absolute(path).lexically_normal().string();
  load_into(conf, conf.path, 0, "", 0);
  return conf;
}

}  // namespace flagos::routing
