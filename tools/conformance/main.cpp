// flagos-conformance: certifies a flagos plugin against the ABI contract in
// include/flagos. See docs/conformance.md.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "framework.h"
#include "helpers.h"
#include "plugin_handle.h"
#include "report.h"
#include "runner.h"

using namespace conformance;

namespace {

struct Args {
  std::string plugin;
  Options options;
  std::string json;
  std::vector<std::string> groups;
  bool list = false;
  RunConfig run;
};

const char kUsage[] =
    "usage: flagos-conformance <path/to/libflagos_x.so> [--option key=value]...\n"
    "                          [--json FILE] [--group NAME]... [--list]\n"
    "                          [--no-fork] [--timeout SECONDS]\n"
    "  --option key=value  passed to the plugin as a host_info option (repeatable)\n"
    "  --json FILE         also write the report as JSON\n"
    "  --group NAME        run only this group (repeatable; see --list)\n"
    "  --list              list groups and checks, run nothing\n"
    "  --no-fork           run checks in this process (for debuggers); a crash\n"
    "                      then ends the run\n"
    "  --timeout SECONDS   per-check limit in forked mode (default 120)\n";

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "flagos-conformance: %s\n%s", why.c_str(), kUsage);
  std::exit(2);
}

// Accepts "--name value" and "--name=value".
bool take_value(int argc, char** argv, int* i, const char* name, std::string* out) {
  size_t n = std::strlen(name);
  if (std::strncmp(argv[*i], name, n) != 0) return false;
  if (argv[*i][n] == '=') {
    *out = argv[*i] + n + 1;
    return true;
  }
  if (argv[*i][n] != '\0') return false;
  if (*i + 1 >= argc) usage_error(std::string(name) + " needs a value");
  *out = argv[++*i];
  return true;
}

void add_option(Args* a, const std::string& kv) {
  size_t eq = kv.find('=');
  if (eq == std::string::npos || eq == 0) usage_error("--option wants key=value, got '" + kv + "'");
  std::string key = kv.substr(0, eq);
  for (const auto& o : a->options)
    if (o.first == key) usage_error("option '" + key + "' given twice");
  a->options.emplace_back(key, kv.substr(eq + 1));
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--list") {
      a.list = true;
    } else if (arg == "--no-fork") {
      a.run.fork = false;
    } else if (take_value(argc, argv, &i, "--option", &v)) {
      add_option(&a, v);
    } else if (take_value(argc, argv, &i, "--json", &v)) {
      a.json = v;
    } else if (take_value(argc, argv, &i, "--group", &v)) {
      a.groups.push_back(v);
    } else if (take_value(argc, argv, &i, "--timeout", &v)) {
      a.run.timeout_s = std::atoi(v.c_str());
      if (a.run.timeout_s <= 0) usage_error("--timeout wants a positive number of seconds");
    } else if (arg.size() > 1 && arg[0] == '-') {
      usage_error("unknown argument '" + arg + "'");
    } else if (a.plugin.empty()) {
      a.plugin = arg;
    } else {
      usage_error("more than one plugin path given");
    }
  }
  return a;
}

// Keeps the canonical order whatever order --group came in: handshake's first
// check relies on running before any group that calls the entry.
std::vector<Group> select_groups(const Args& a) {
  std::vector<Group> all = all_groups();
  if (a.groups.empty()) return all;
  for (const std::string& name : a.groups) {
    bool known = false;
    for (const Group& g : all) known = known || g.name == name;
    if (!known) usage_error("unknown group '" + name + "' (see --list)");
  }
  std::vector<Group> out;
  for (const Group& g : all)
    for (const std::string& name : a.groups)
      if (g.name == name) {
        out.push_back(g);
        break;
      }
  return out;
}

void list_groups(const std::vector<Group>& groups) {
  size_t n = 0;
  for (const Group& g : groups) {
    std::printf("%s — %s\n", g.name.c_str(), g.summary.c_str());
    for (const Check& c : g.checks) std::printf("    %s\n", c.name.c_str());
    n += g.checks.size();
  }
  std::printf("%zu groups, %zu checks\n", groups.size(), n);
}

// When no group called the entry (e.g. --group packaging), ask for the table
// here, after all forks, so the report still names the plugin.
void fill_meta(PluginHandle& plugin, Report* rep) {
  if (!rep->meta.empty()) return;
  const flagos_plugin_api_t* api = nullptr;
  if (plugin.get_api(&api) != FLAGOS_SUCCESS || !api) return;
  rep->meta["name"] = api->name ? api->name : "(null)";
  rep->meta["version"] = api->version ? api->version : "(null)";
  rep->meta["abi"] = strf("%u.%u", api->abi_major, api->abi_minor);
  rep->meta["table_size"] = strf("%zu", api->struct_size);
}

int finish(const Args& a, Report& rep) {
  if (!rep.meta.empty()) {
    std::printf("plugin: %s %s, ABI %s", rep.meta["name"].c_str(), rep.meta["version"].c_str(),
                rep.meta["abi"].c_str());
    if (rep.meta.count("devices")) std::printf(", %s device(s)", rep.meta["devices"].c_str());
    std::printf("\n");
  }
  print_summary(rep);
  std::string err;
  if (!a.json.empty() && !write_json(rep, a.json, &err)) {
    std::fprintf(stderr, "flagos-conformance: %s\n", err.c_str());
    return 2;
  }
  return rep.failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse_args(argc, argv);
  std::vector<Group> groups = select_groups(a);
  if (a.list) {
    list_groups(groups);
    return 0;
  }
  if (a.plugin.empty()) usage_error("no plugin path given");

  Report rep;
  rep.path = a.plugin;
  rep.options = a.options;
  std::printf("%s %s (ABI %d.%d): %s\n", FLAGOS_CONFORMANCE_NAME, FLAGOS_CONFORMANCE_VERSION,
              FLAGOS_ABI_MAJOR, FLAGOS_ABI_MINOR, a.plugin.c_str());
  print_table_header();

  PluginHandle plugin(a.plugin, a.options);
  std::string err;
  if (!plugin.open(&err)) {
    rep.add("load", {"dlopen", Result::kFail, err});
    return finish(a, rep);
  }
  bool pristine = true;
  for (const Group& g : groups) run_group(g, plugin, a.run, &pristine, &rep);
  fill_meta(plugin, &rep);
  return finish(a, rep);
}
