#include "routing/conf.h"

#include <toml++/toml.h>

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "diag/log.h"
#include "error.h"

namespace flagos::routing {
namespace {

namespace fs = std::filesystem;
constexpr int kMaxDepth = 8;
// Bounds on one load, includes counted: far above any real conf (the shipped
// ones are two files and ~2,000 routes), low enough to fail fast.
constexpr size_t kMaxFiles = 256;
constexpr size_t kMaxEntries = 100000;
constexpr size_t kMaxBytes = size_t{16} << 20;
// Errors quote the offending token, never more than this: a file that is not
// a conf (/etc/passwd, /proc/self/environ) must not end up in a log.
constexpr size_t kMaxQuoted = 40;

// One load: the conf being built, plus every file read so far by identity
// (dev, inode), so each distinct file is read once, at its first include.
struct Loader {
  Conf& conf;
  std::set<std::pair<dev_t, ino_t>> seen;
  std::vector<std::pair<dev_t, ino_t>> reading;  // the include chain, for cycles
};

[[noreturn]] void fail(const std::string& file, int line, const std::string& message) {
  throw Error(diag::one_line("routing conf " + file + ":" + std::to_string(line) + ": " + message));
}

// At most `max` characters of `token`, bytes outside printable ASCII as '?'.
std::string clip(const std::string& token, size_t max = kMaxQuoted) {
  std::string out;
  for (size_t i = 0; i < token.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(token[i]);
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  }
  return token.size() > max ? out + "..." : out;
}

std::string quote(const std::string& token) { return "'" + clip(token) + "'"; }

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
    fail(file, line, "unknown route " + quote(value) + " for " + quote(op) + " (valid: " + valid_names() + ")");
  return *kind;
}

void add_entry(Conf& conf, const std::string& op, RouteKind kind, const std::string& file, int line,
               const std::string& torch = "") {
  if (!valid_op_name(op)) fail(file, line, quote(op) + " is not an operator name (expected e.g. add.Tensor)");
  if (conf.entries.size() >= kMaxEntries)
    fail(file, line, "more than " + std::to_string(kMaxEntries) + " routes in all (includes counted)");
  conf.entries.push_back({op, kind, file, line, torch});
}

std::string resolve_include(const std::string& from, const std::string& target) {
  fs::path p(target);
  if (p.is_relative()) p = fs::path(from).parent_path() / p;
  return fs::absolute(p).lexically_normal().string();
}

void load_into(Loader& ld, const std::string& path, int depth, const std::string& from, int from_line);

void load_lines(Loader& ld, const std::string& path, const std::string& text, int depth) {
  Conf& conf = ld.conf;
  std::istringstream in(text);
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
      load_into(ld, resolve_include(path, target), depth + 1, path, line);
      continue;
    }
    auto eq = code.find('=');
    if (eq == std::string::npos)
      fail(path, line, "expected `op = backend` or `include <path>`, got " + quote(code));
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

// The key line `line` sets, bare or quoted (toml++ points at the value).
std::string key_at(const std::string& text, int line) {
  std::istringstream in(text);
  std::string raw;
  for (int n = 0; n < line && std::getline(in, raw);) ++n;
  const size_t at = raw.find_first_not_of(" \t");
  if (at == std::string::npos) return "";
  if (raw[at] == '"' || raw[at] == '\'') {
    const size_t end = raw.find(raw[at], at + 1);
    return raw.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
  }
  size_t end = at;
  while (end < raw.size() && (std::isalnum(static_cast<unsigned char>(raw[end])) || raw[end] == '_' ||
                              raw[end] == '-' || raw[end] == '.'))
    ++end;
  return raw.substr(at, end - at);
}

void load_toml(Loader& ld, const std::string& path, const std::string& text, int depth) {
  Conf& conf = ld.conf;
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    const int line = static_cast<int>(e.source().begin.line);
    const std::string what(e.description());
    // toml++ words a repeated key with a garbled copy of it: say it plainly.
    if (what.find("key-value pair: cannot redefine existing") != std::string::npos)
      fail(path, line, "key " + quote(key_at(text, line)) +
                           " is set twice (a TOML table holds each key once)");
    fail(path, line, clip(what, 3 * kMaxQuoted));  // toml++ may quote the text it stopped at
  }
  std::string file_torch;  // this file's [conf] torch, for its own routes
  if (auto* meta = root["conf"].as_table()) {
    // Includes first, whatever the key order: the including file's [conf]
    // values (default, torch) and routes must win over the included ones.
    if (const toml::node* node = meta->get("include"))
      load_strings(path, *node, "include", [&](const std::string& s, int line) {
        load_into(ld, resolve_include(path, s), depth + 1, path, line);
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
        fail(path, line, "unknown key " + quote(k) + " in [conf] (platform, default, include, tileops, "
                         "description, generated_by, torch)");
      }
    }
  }
  for (const auto& [key, node] : root) {
    const std::string k(key.str());
    if (k != "conf" && k != "routes")
      fail(path, line_of(node), "unknown table [" + clip(k) + "] (expected [conf] and [routes])");
  }
  if (auto* routes = root["routes"].as_table()) {
    for (const auto& [key, node] : *routes) {
      const std::string op(key.str());
      const int line = line_of(node);
      auto value = node.value<std::string>();
      if (!value) fail(path, line, "the route of " + quote(op) + " must be a string");
      add_entry(conf, op, parse_kind(*value, false, op, path, line), path, line, file_torch);
    }
  }
}

// What a path that is not a regular file is, for the error.
std::string what_is(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISFIFO(st.st_mode)) return "a pipe";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "a special file";
}

// The text of a conf file, or "" with `problem` saying why it cannot be one.
std::string read_text(const std::string& path, std::string& problem) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    problem = std::string("cannot be read (") + std::strerror(errno) + ")";
    return "";
  }
  std::string text;
  char chunk[1 << 16];
  while (text.size() <= kMaxBytes && in.read(chunk, sizeof chunk).gcount() > 0)
    text.append(chunk, static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxBytes)
    problem = "is larger than " + std::to_string(kMaxBytes >> 20) + " MiB, too large for a conf";
  else if (text.find('\0') != std::string::npos)
    problem = "contains a NUL byte: not a text file";
  return problem.empty() ? text : "";
}

void load_into(Loader& ld, const std::string& path, int depth, const std::string& from, int from_line) {
  if (depth > kMaxDepth) fail(from, from_line, "includes nest deeper than 8");
  // A top-level problem is "routing conf P: ...", an include's names the including line.
  auto refuse = [&](const std::string& problem) {
    if (from.empty()) throw Error(diag::one_line("routing conf " + path + ": " + problem));
    fail(from, from_line, "included file " + path + " " + problem);
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      if (from.empty()) throw Error(diag::one_line("routing conf " + path + ": no such file"));
      fail(from, from_line, "included file " + path + " does not exist");
    }
    refuse(std::string("cannot be read (") + std::strerror(errno) + ")");
  }
  if (!S_ISREG(st.st_mode)) refuse("is " + what_is(st) + ", not a regular file");
  const std::pair<dev_t, ino_t> id{st.st_dev, st.st_ino};
  for (const auto& open : ld.reading)
    if (open == id) fail(from, from_line, "include cycle: " + path + " is already being read");
  // Read once, at its first include: a later include of the same file adds
  // nothing, so it cannot undo the routes written after the first one.
  if (!ld.seen.insert(id).second) return;
  if (ld.seen.size() > kMaxFiles)
    fail(from, from_line, "more than " + std::to_string(kMaxFiles) + " distinct files are included");
  std::string problem;
  const std::string text = read_text(path, problem);
  if (!problem.empty()) refuse(problem);
  ld.reading.push_back(id);
  if (fs::path(path).extension() == ".toml") {
    load_toml(ld, path, text, depth);
  } else {
    load_lines(ld, path, text, depth);
  }
  ld.reading.pop_back();
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
  Loader loader{conf, {}, {}};
  load_into(loader, conf.path, 0, "", 0);
  return conf;
}

}  // namespace flagos::routing
