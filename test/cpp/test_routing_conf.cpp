// Routing confs (core/runtime/routing/conf.*, route_kind.*): the TOML and the
// upstream line format, includes, route-kind spellings, and every error with
// the exact file:line it names.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "catch.hpp"
#include "error.h"
#include "routing/conf.h"
#include "routing/route_kind.h"

namespace fs = std::filesystem;
using flagos::routing::Conf;
using flagos::routing::load_conf;
using flagos::routing::RouteKind;

namespace {

// A private directory of conf files, removed with the object.
class ConfDir {
 public:
  ConfDir() {
    std::string tmpl = (fs::temp_directory_path() / "flagos_conf_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~ConfDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  // Writes `text` to `name` (subdirectories created); returns the absolute path.
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  std::string at(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& root() const { return path_; }

 private:
  fs::path path_;
};

// The message load_conf throws (without the "[flagos] " prefix).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const flagos::Error& e) {
    return e.detail();
  }
  return "(no error)";
}

std::string load_error(const std::string& path) {
  return error_of([&] { load_conf(path); });
}

// "op=kind@line" for each entry, in load order.
std::vector<std::string> summary(const Conf& conf) {
  std::vector<std::string> out;
  for (const auto& e : conf.entries)
    out.push_back(e.op + "=" + std::string(flagos::routing::name(e.kind)) + "@" + std::to_string(e.line));
  return out;
}

}  // namespace

TEST_CASE("TOML conf: [conf] keys and [routes] with their lines", "[routing][conf]") {
  ConfDir dir;
  const std::string path = dir.write("p.toml",
                                     "# a platform\n"
                                     "[conf]\n"
                                     "platform = \"host\"\n"
                                     "default = \"cpu\"\n"
                                     "torch = \"2.13.0\"\n"
                                     "generated_by = \"tools/routing_conf\"\n"
                                     "description = \"test\"\n"
                                     "tileops = [\"mm\"]\n"
                                     "\n"
                                     "[routes]\n"
                                     "\"add.Tensor\" = \"native\"   # trailing comment\n"
                                     "\"mm\" = \"none\"\n");
  const Conf conf = load_conf(path);
  CHECK(conf.path == path);
  CHECK(conf.platform == "host");
  CHECK(conf.torch == "2.13.0");
  REQUIRE(conf.default_kind.has_value());
  CHECK(*conf.default_kind == RouteKind::CpuBoxing);
  CHECK(conf.default_where == path + ":4");
  CHECK(conf.tileops == std::vector<std::string>{"mm"});
  CHECK(summary(conf) == std::vector<std::string>{"add.Tensor=native@11", "mm=none@12"});
  CHECK(conf.entries[0].file == path);
  CHECK(conf.entries[0].where() == path + ":11");
}

TEST_CASE("TOML conf without [conf]: no platform, no default", "[routing][conf]") {
  ConfDir dir;
  const Conf conf = load_conf(dir.write("r.toml", "[routes]\n\"mul.Tensor\" = \"cpu_fallback\"\n"));
  CHECK(conf.platform.empty());
  CHECK(!conf.default_kind.has_value());
  CHECK(summary(conf) == std::vector<std::string>{"mul.Tensor=cpu_fallback@2"});
}

TEST_CASE("TOML include: relative to the including file, read before its routes", "[routing][conf]") {
  ConfDir dir;
  dir.write("base/base.toml",
            "[conf]\nplatform = \"base\"\ndefault = \"cpu_fallback\"\ntorch = \"1.0\"\n"
            "[routes]\n\"add.Tensor\" = \"cpu\"\n\"mm\" = \"cpu\"\n");
  const std::string top = dir.write("base/top.toml",
                                    "[conf]\nplatform = \"top\"\ndefault = \"none\"\ntorch = \"2.0\"\n"
                                    "include = [\"base.toml\"]\n"
                                    "[routes]\n\"add.Tensor\" = \"native\"\n");
  const Conf conf = load_conf(top);
  // The included routes come first, so the including file's line is the later one.
  CHECK(summary(conf) == std::vector<std::string>{"add.Tensor=cpu@6", "mm=cpu@7", "add.Tensor=native@7"});
  CHECK(conf.entries[0].file == dir.at("base/base.toml"));
  CHECK(conf.entries[2].file == top);
  // The including file's [conf] wins too.
  CHECK(conf.platform == "top");
  CHECK(conf.torch == "2.0");
  REQUIRE(conf.default_kind.has_value());
  CHECK(*conf.default_kind == RouteKind::Unrouted);
  CHECK(conf.default_where == top + ":3");
}

TEST_CASE("line format: comments, blank lines, upstream spellings, # tileops", "[routing][conf]") {
  ConfDir dir;
  const std::string path = dir.write("backends_x.conf",
                                     "# upstream conf\n"
                                     "\n"
                                     "   add.Tensor = flagos_python\n"
                                     "mm = vendor   # tileops\n"
                                     "mul.Tensor=cuda#plain comment\n"
                                     "sub.Tensor = flaggems\n"
                                     "neg = cpu_fallback   # a comment that is not an annotation\n");
  const Conf conf = load_conf(path);
  CHECK(conf.platform.empty());
  CHECK(summary(conf) == std::vector<std::string>{"add.Tensor=flaggems@3", "mm=native@4",
                                                  "mul.Tensor=cuda@5", "sub.Tensor=flaggems_cpp@6",
                                                  "neg=cpu_fallback@7"});
  CHECK(conf.tileops == std::vector<std::string>{"mm"});
}

TEST_CASE("line format: include relative to the including file, at its position", "[routing][conf]") {
  ConfDir dir;
  dir.write("sub/inner.conf", "add.Tensor = cpu\nmm = cpu\n");
  const std::string outer = dir.write("sub/outer.conf",
                                      "mm = native\n"
                                      "include inner.conf   # the platform's table\n"
                                      "add.Tensor = none\n");
  const Conf conf = load_conf(outer);
  // Later lines win (table.cpp): mm ends on the include's cpu, add.Tensor on none.
  CHECK(summary(conf) == std::vector<std::string>{"mm=native@1", "add.Tensor=cpu@1", "mm=cpu@2",
                                                  "add.Tensor=none@3"});
  CHECK(conf.entries[1].file == dir.at("sub/inner.conf"));
}

TEST_CASE("the two formats include each other", "[routing][conf]") {
  ConfDir dir;
  dir.write("lines.conf", "mm = vendor\n");
  dir.write("table.toml", "[routes]\n\"neg\" = \"cpu\"\n");
  const Conf from_toml = load_conf(dir.write("a.toml", "[conf]\ninclude = [\"lines.conf\"]\n"));
  CHECK(summary(from_toml) == std::vector<std::string>{"mm=native@1"});
  const Conf from_lines = load_conf(dir.write("b.conf", "include table.toml\n"));
  CHECK(summary(from_lines) == std::vector<std::string>{"neg=cpu@2"});
}

TEST_CASE("includes nest at most 8 deep; the error names the including line", "[routing][conf]") {
  ConfDir dir;
  // c0 includes c1 ... c<n-1>; the last one routes mm.
  auto chain = [&](const std::string& prefix, int n) {
    for (int i = 0; i < n; ++i) {
      const std::string next = prefix + std::to_string(i + 1) + ".conf";
      dir.write(prefix + std::to_string(i) + ".conf",
                i + 1 < n ? "# level " + std::to_string(i) + "\ninclude " + next + "\n" : "mm = cpu\n");
    }
    return dir.at(prefix + "0.conf");
  };
  CHECK(summary(load_conf(chain("ok", 9))) == std::vector<std::string>{"mm=cpu@1"});  // depth 8
  chain("deep", 10);                                                                     // depth 9
  CHECK(load_error(dir.at("deep0.conf")) == "routing conf " + dir.at("deep8.conf") + ":2: includes nest deeper than 8");
}

TEST_CASE("an include cycle is an error naming the line that closes it", "[routing][conf]") {
  ConfDir dir;
  const std::string self = dir.write("self.toml", "[conf]\ninclude = [\n  \"self.toml\",\n]\n");
  CHECK(load_error(self) == "routing conf " + self + ":3: include cycle: " + self + " is already being read");
  const std::string a = dir.write("a.conf", "mm = cpu\ninclude b.conf\n");
  const std::string b = dir.write("b.conf", "# b\ninclude ./a.conf\n");
  CHECK(load_error(a) == "routing conf " + b + ":2: include cycle: " + a + " is already being read");
}

TEST_CASE("each distinct file is read once, at its first include", "[routing][conf]") {
  ConfDir dir;
  dir.write("base.toml", "[routes]\n\"mm\" = \"cpu\"\n\"neg\" = \"cpu\"\n");
  dir.write("a.toml", "[conf]\ninclude = [\"base.toml\"]\n[routes]\n\"mm\" = \"native\"\n");
  dir.write("b.toml", "[conf]\ninclude = [\"./base.toml\"]\n[routes]\n\"neg\" = \"none\"\n");
  // base.toml, reached again through b.toml (under another spelling), adds
  // nothing: a.toml's mm stays the later entry.
  const Conf diamond = load_conf(dir.write("top.toml", "[conf]\ninclude = [\"a.toml\", \"b.toml\"]\n"));
  CHECK(summary(diamond) == std::vector<std::string>{"mm=cpu@2", "neg=cpu@3", "mm=native@4", "neg=none@4"});
  // By file identity: a symlink to base.toml is base.toml.
  fs::create_symlink(dir.at("base.toml"), dir.at("link.toml"));
  const Conf linked = load_conf(dir.write("l.conf", "include base.toml\nmm = none\ninclude link.toml\n"));
  CHECK(summary(linked) == std::vector<std::string>{"mm=cpu@2", "neg=cpu@3", "mm=none@2"});

  std::string many = "[conf]\ninclude = [\n";
  for (int i = 0; i < 10000; ++i) many += "  \"base.toml\",\n";
  const Conf repeated = load_conf(dir.write("many.toml", many + "]\n"));
  CHECK(summary(repeated) == std::vector<std::string>{"mm=cpu@2", "neg=cpu@3"});
}

TEST_CASE("an include fan-out is read in time linear in its distinct files", "[routing][conf]") {
  ConfDir dir;
  // 8 levels of 20 files; each file includes all 20 of the next level:
  // 20^8 include paths, 160 distinct files.
  constexpr int kLevels = 8, kWidth = 20;
  for (int level = 0; level < kLevels; ++level) {
    for (int i = 0; i < kWidth; ++i) {
      std::string text = "[conf]\ninclude = [";
      if (level + 1 < kLevels)
        for (int j = 0; j < kWidth; ++j)
          text += "\"l" + std::to_string(level + 1) + "_" + std::to_string(j) + ".toml\", ";
      text += "]\n[routes]\n\"mm\" = \"cpu\"\n";
      dir.write("l" + std::to_string(level) + "_" + std::to_string(i) + ".toml", text);
    }
  }
  std::string top = "[conf]\ninclude = [";
  for (int j = 0; j < kWidth; ++j) top += "\"l0_" + std::to_string(j) + ".toml\", ";
  const Conf conf = load_conf(dir.write("top.toml", top + "]\n"));
  CHECK(conf.entries.size() == static_cast<size_t>(kLevels * kWidth));
}

TEST_CASE("a load is bounded: distinct files and routes, includes counted", "[routing][conf]") {
  ConfDir dir;
  std::string top;
  for (int i = 0; i < 300; ++i) {
    dir.write("f" + std::to_string(i) + ".conf", "mm = cpu\n");
    top += "include f" + std::to_string(i) + ".conf\n";
  }
  // The top file is the first of the 256; the 256th include is its line 256.
  const std::string files = dir.write("files.conf", top);
  CHECK(load_error(files) == "routing conf " + files + ":256: more than 256 distinct files are included");

  std::string routes;
  for (int i = 0; i < 100001; ++i) routes += "mm = cpu\n";
  dir.write("routes.conf", routes);
  const std::string big = dir.write("big.conf", "neg = cpu\ninclude routes.conf\n");
  CHECK(load_error(big) == "routing conf " + dir.at("routes.conf") +
                               ":100000: more than 100000 routes in all (includes counted)");
}

TEST_CASE("conf errors name the file and the line", "[routing][conf]") {
  ConfDir dir;
  const std::string valid = "native, cpu, cuda, flaggems, flaggems_cpp, tileops, cpu_fallback, none";
  struct Case {
    const char* name;
    const char* text;
    std::string expected;  // after "routing conf <path>:"
  };
  const std::vector<Case> cases = {
      {"kind.toml", "[routes]\n\"add.Tensor\" = \"cpu\"\n\"mm\" = \"gpu\"\n",
       "3: unknown route 'gpu' for 'mm' (valid: " + valid + ")"},
      {"upstream_in_toml.toml", "[routes]\n\"mm\" = \"flagos_python\"\n",
       "2: unknown route 'flagos_python' for 'mm' (valid: " + valid + ")"},
      {"default.toml", "[conf]\n\ndefault = \"fast\"\n",
       "3: unknown route 'fast' for 'default' (valid: " + valid + ")"},
      {"opname.toml", "[routes]\n\"add.Tensor\" = \"cpu\"\n\"add..Tensor\" = \"cpu\"\n",
       "3: 'add..Tensor' is not an operator name (expected e.g. add.Tensor)"},
      {"notstring.toml", "[routes]\n\n\"mm\" = 3\n", "3: the route of 'mm' must be a string"},
      {"key.toml", "[conf]\nplatform = \"x\"\nplatfrom = \"y\"\n",
       "3: unknown key 'platfrom' in [conf] (platform, default, include, tileops, description, "
       "generated_by, torch)"},
      {"table.toml", "[conf]\n[route]\n\"mm\" = \"cpu\"\n",
       "2: unknown table [route] (expected [conf] and [routes])"},
      {"platform.toml", "[conf]\nplatform = 1\n", "2: [conf] platform must be a string"},
      {"include.toml", "[conf]\ninclude = \"x.toml\"\n", "2: [conf] include must be a list of strings"},
      {"include_item.toml", "[conf]\ninclude = [\n  1,\n]\n", "3: [conf] include entries must be strings"},
      {"tileops.toml", "[conf]\ntileops = [\"mm\", 2]\n", "2: [conf] tileops entries must be strings"},
      {"syntax.toml", "[routes]\n\"add.Tensor\" = \"cpu\"\n\"mm\" = cpu\n", ""},  // toml++ words it
      {"duplicate.toml", "[routes]\n\"mm\" = \"cpu\"\n\"mm\" = \"native\"\n",
       "3: key 'mm' is set twice (a TOML table holds each key once)"},
      {"duplicate_bare.toml", "[conf]\ndefault = \"cpu\"\n  default = \"none\"\n",
       "3: key 'default' is set twice (a TOML table holds each key once)"},
      {"duplicate_dotted.toml", "[routes]\n'add.Tensor' = \"cpu\"\n\n\"add.Tensor\" = \"native\"\n",
       "4: key 'add.Tensor' is set twice (a TOML table holds each key once)"},
      {"duplicate_table.toml", "[routes]\n\"mm\" = \"cpu\"\n[routes]\n",
       "3: Error while parsing table header: cannot redefine existing table 'routes'"},
      {"noeq.conf", "# x\nmm = cpu\nmul.Tensor cpu\n",
       "3: expected `op = backend` or `include <path>`, got 'mul.Tensor cpu'"},
      {"kind.conf", "mm = cpu\n\nneg = gpu  # no such route\n",
       "3: unknown route 'gpu' for 'neg' (valid: " + valid + ")"},
      {"opname.conf", "aten::mm = cpu\n", "1: 'aten::mm' is not an operator name (expected e.g. add.Tensor)"},
      {"include.conf", "mm = cpu\ninclude\n", "2: include needs a path"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const std::string path = dir.write(c.name, c.text);
    const std::string message = load_error(path);
    if (c.expected.empty()) {
      // A TOML syntax error: the parser's own words after the last line's file:line.
      CHECK(message.rfind("routing conf " + path + ":3: ", 0) == 0);
    } else {
      CHECK(message == "routing conf " + path + ":" + c.expected);
    }
  }
}

TEST_CASE("missing files: the conf itself, or an include named at its line", "[routing][conf]") {
  ConfDir dir;
  CHECK(load_error(dir.at("absent.toml")) == "routing conf " + dir.at("absent.toml") + ": no such file");
  const std::string toml = dir.write("t.toml", "[conf]\ninclude = [\"gone.toml\"]\n");
  CHECK(load_error(toml) ==
        "routing conf " + toml + ":2: included file " + dir.at("gone.toml") + " does not exist");
  const std::string lines = dir.write("l.conf", "mm = cpu\ninclude ../gone.conf\n");
  const std::string gone = (dir.root().parent_path() / "gone.conf").string();
  CHECK(load_error(lines) == "routing conf " + lines + ":2: included file " + gone + " does not exist");
}

TEST_CASE("a path that is not a regular file says what it is", "[routing][conf]") {
  ConfDir dir;
  fs::create_directories(dir.at("d.toml"));
  CHECK(load_error(dir.at("d.toml")) == "routing conf " + dir.at("d.toml") + ": is a directory, not a regular file");
  REQUIRE(::mkfifo(dir.at("fifo.conf").c_str(), 0600) == 0);
  CHECK(load_error(dir.at("fifo.conf")) == "routing conf " + dir.at("fifo.conf") + ": is a pipe, not a regular file");
  CHECK(load_error("/dev/null") == "routing conf /dev/null: is a character device, not a regular file");
  const std::string inc = dir.write("inc.toml", "[conf]\ninclude = [\"d.toml\"]\n");
  CHECK(load_error(inc) == "routing conf " + inc + ":2: included file " + dir.at("d.toml") +
                               " is a directory, not a regular file");
}

TEST_CASE("errors quote at most 40 characters of the offending token", "[routing][conf]") {
  ConfDir dir;
  // Not a conf: the first line is refused, quoting only its start.
  const std::string passwd = dir.write("passwd", "root:x:0:0:root:/root:/bin/bash:and-some-more-text\nbin:x\n");
  CHECK(load_error(passwd) == "routing conf " + passwd +
                                  ":1: expected `op = backend` or `include <path>`, got "
                                  "'root:x:0:0:root:/root:/bin/bash:and-some...'");
  const std::string secret = dir.write("env.conf", "TOKEN = 0123456789abcdef0123456789abcdef0123456789\n");
  CHECK(load_error(secret) == "routing conf " + secret + ":1: unknown route '0123456789abcdef0123456789abcdef01234567...' "
                                  "for 'TOKEN' (valid: native, cpu, cuda, flaggems, flaggems_cpp, tileops, "
                                  "cpu_fallback, none)");
  const std::string control = dir.write("ctl.conf", "mm = c\x1bpu\n");
  CHECK(load_error(control) == "routing conf " + control + ":1: unknown route 'c?pu' for 'mm' (valid: native, cpu, "
                                   "cuda, flaggems, flaggems_cpp, tileops, cpu_fallback, none)");
  // A NUL byte (as in /proc/self/environ): not a text file, nothing quoted.
  const std::string binary = dir.write("environ", std::string("HOME=/root\0SECRET=x\0", 21));
  CHECK(load_error(binary) == "routing conf " + binary + ": contains a NUL byte: not a text file");
}

TEST_CASE("valid_op_name: identifier, then at most one overload", "[routing][conf]") {
  using flagos::routing::valid_op_name;
  for (const char* ok : {"mm", "add.Tensor", "add_.Tensor", "_foreach_add_.Scalar", "__ior__.Tensor",
                         "sum.dim_IntList", "_adaptive_avg_pool2d", "a1.b2"})
    CHECK(valid_op_name(ok));
  for (const char* bad : {"", ".Tensor", "add.", "add..Tensor", "add.Tensor.x", "1add", "aten::mm",
                          "add Tensor", "add-Tensor", "add.Ten sor"})
    CHECK_FALSE(valid_op_name(bad));
}

TEST_CASE("route kinds: conf names round-trip; upstream spellings only when asked", "[routing][kinds]") {
  using namespace flagos::routing;
  const std::vector<std::pair<const char*, RouteKind>> names = {
      {"native", RouteKind::Native},        {"cpu", RouteKind::CpuBoxing},
      {"cuda", RouteKind::CudaBoxing},      {"flaggems", RouteKind::FlagGems},
      {"flaggems_cpp", RouteKind::FlagGemsCpp}, {"tileops", RouteKind::TileOps},
      {"cpu_fallback", RouteKind::CpuFallback}, {"none", RouteKind::Unrouted}};
  std::string joined;
  for (const auto& [text, kind] : names) {
    INFO(text);
    CHECK(name(kind) == text);
    CHECK(parse(text, false) == kind);
    joined += (joined.empty() ? "" : ", ") + std::string(text);
  }
  CHECK(valid_names() == joined);
  // Upstream names: flagos_python/flaggems_python are the Python layer,
  // flagos/flaggems the C++ wrapper, vendor and vendor names the plugin's own.
  const std::vector<std::pair<const char*, RouteKind>> upstream = {
      {"flagos_python", RouteKind::FlagGems}, {"flaggems_python", RouteKind::FlagGems},
      {"flagos", RouteKind::FlagGemsCpp},     {"flaggems", RouteKind::FlagGemsCpp},
      {"vendor", RouteKind::Native},          {"ascend", RouteKind::Native},
      {"musa", RouteKind::Native},            {"gcu", RouteKind::Native},
      {"metax", RouteKind::Native},           {"tsingmicro", RouteKind::Native},
      {"cuda", RouteKind::CudaBoxing},        {"cpu_fallback", RouteKind::CpuFallback},
      {"native", RouteKind::Native}};
  for (const auto& [text, kind] : upstream) {
    INFO(text);
    CHECK(parse(text, true) == kind);
  }
  for (const char* only_upstream : {"flagos_python", "flaggems_python", "flagos", "vendor", "ascend"})
    CHECK_FALSE(parse(only_upstream, false).has_value());
  for (const char* never : {"", "CPU", "gpu", "cpu ", "fallback"}) {
    CHECK_FALSE(parse(never, false).has_value());
    CHECK_FALSE(parse(never, true).has_value());
  }
}

TEST_CASE("FLAGOS_FORCE_BACKEND families and their kinds in preference order", "[routing][kinds]") {
  using namespace flagos::routing;
  for (Family f : {Family::FlagGems, Family::Vendor, Family::TileOps})
    CHECK(parse_family(name(f)) == f);
  CHECK_FALSE(parse_family("native").has_value());
  CHECK_FALSE(parse_family("").has_value());
  CHECK(kinds_of(Family::FlagGems) == std::vector<RouteKind>{RouteKind::FlagGems, RouteKind::FlagGemsCpp});
  CHECK(kinds_of(Family::Vendor) ==
        std::vector<RouteKind>{RouteKind::Native, RouteKind::CudaBoxing, RouteKind::CpuBoxing});
  CHECK(kinds_of(Family::TileOps) == std::vector<RouteKind>{RouteKind::TileOps});
}
