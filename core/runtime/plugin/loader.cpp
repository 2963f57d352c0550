#include "plugin/loader.h"

#include <dlfcn.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <mutex>

#include "diag/channels.h"
#include "diag/log.h"
#include "env/registry.h"
#include "error.h"
#include "plugin/handshake.h"
#include "plugin/host_services.h"
#include "plugin/library.h"

#ifndef FLAGOS_VERSION
#define FLAGOS_VERSION "0.0.0"
#endif

namespace fs = std::filesystem;

namespace flagos::plugin {
namespace {

struct LoaderState {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const Plugin>> by_identity;
  std::shared_ptr<const Plugin> active;
  std::string selection;  // why the active plugin was chosen
};

LoaderState& state() {
  static auto* s = new LoaderState;  // process lifetime, like the libraries
  return *s;
}

constexpr std::string_view kPrefix = "libflagos_";
constexpr std::string_view kSuffix = ".so";

// "libflagos_cuda.so" -> "cuda"; "" when the file is not a plugin library.
std::string name_from_filename(const std::string& filename) {
  if (filename.size() <= kPrefix.size() + kSuffix.size()) return {};
  if (filename.compare(0, kPrefix.size(), kPrefix) != 0) return {};
  if (filename.compare(filename.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) return {};
  return filename.substr(kPrefix.size(), filename.size() - kPrefix.size() - kSuffix.size());
}

std::string describe(const Candidate& c) { return "plugin '" + c.name + "' (" + c.path + ")"; }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The requirements a plugin states beside its library (libflagos_<name>.toml):
// [requires] any_path = [...], because = "...". Checked before the library is
// loaded, so a machine without the vendor's driver never loads the plugin.
// Returns why the plugin cannot run here, or "".
std::string unmet_requirements(const std::string& library) {
  fs::path manifest(library);
  manifest.replace_extension(".toml");
  std::error_code ec;
  if (!fs::is_regular_file(manifest, ec)) return {};
  try {
    const toml::table root = toml::parse_file(manifest.string());
    const toml::array* paths = root["requires"]["any_path"].as_array();
    if (!paths || paths->empty()) return {};
    std::string listed;
    for (const auto& item : *paths) {
      const auto path = item.value<std::string>();
      if (!path) continue;
      if (fs::exists(*path, ec)) return {};
      listed += (listed.empty() ? "" : ", ") + *path;
    }
    const std::string because = root["requires"]["because"].value_or(std::string("a requirement is not met"));
    return because + " (none of " + listed + " exists)";
  } catch (const toml::parse_error& e) {
    diag::warn_once("manifest:" + manifest.string(),
                    "plugin requirements " + manifest.string() + ":" + std::to_string(e.source().begin.line) +
                        ": " + std::string(e.description()) + "; loading the plugin without checking them");
    return {};
  }
}

std::string call_entry(const OpenedLibrary& lib, const std::string& name, const Options& options,
                       const flagos_plugin_api_t** api) {
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : options) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  flagos_host_info_t host{};
  host.struct_size = sizeof(host);
  host.abi_major = FLAGOS_ABI_MAJOR;
  host.abi_minor = FLAGOS_ABI_MINOR;
  host.host_name = "torch_fl";
  host.host_version = FLAGOS_VERSION;
  host.num_options = options.size();
  host.option_keys = keys.data();
  host.option_values = values.data();
  host.services = host_services(name);
  *api = nullptr;
  const flagos_status_t status = lib.entry(&host, api);
  if (status == FLAGOS_SUCCESS) return {};
  std::string why = std::string("its entry point failed with ") + flagos_status_name(status);
  // The entry may hand back its table on failure so that we can read why.
  if (*api && (*api)->struct_size >= FLAGOS_STRUCT_SIZE(flagos_plugin_api_t, last_error_message) &&
      (*api)->last_error_message) {
    const char* message = (*api)->last_error_message();
    if (message && *message) return why + ": " + std::string(message);
  }
  // No message: name what the plugin was given, the likeliest culprit.
  if (status == FLAGOS_ERROR_INVALID_ARGUMENT && !options.empty()) {
    std::string given;
    for (const auto& [k, v] : options) given += (given.empty() ? "" : ",") + k + "=" + v;
    why += " (FLAGOS_PLUGIN_OPTIONS=" + given + ")";
  }
  return why;
}

// An explicit FLAGOS_PLUGIN value: a path (it has a '/'), or a plugin name
// in any case. A bare file name (libflagos_host.so) names the plugin too: it
// is looked up among the installed plugins, never in the current directory.
Candidate explicit_candidate(const std::string& value, const std::vector<Candidate>& found) {
  if (value.find('/') != std::string::npos) {
    const fs::path path = fs::absolute(value);
    std::string name = name_from_filename(path.filename().string());
    return {name.empty() ? path.stem().string() : name, path.string(), Origin::Explicit};
  }
  const std::string from_file = name_from_filename(value);
  const std::string wanted = lower(from_file.empty() ? value : from_file);
  for (const Candidate& c : found)
    if (lower(c.name) == wanted) return {c.name, c.path, Origin::Explicit};
  std::string known;
  for (const Candidate& c : found) known += (known.empty() ? "" : ", ") + c.name;
  throw Error("FLAGOS_PLUGIN=" + value + ": no plugin of that name is installed (found: " +
              (known.empty() ? "none" : known) + "); install torch_fl-plugin-" + wanted +
              " or give a path to libflagos_" + wanted + ".so (./libflagos_" + wanted +
              ".so for the current directory)");
}

std::shared_ptr<const Plugin> select_implicit(const std::vector<Candidate>& found,
                                              const Options& options, std::string& selection) {
  std::string tried;
  for (const Candidate& c : found) {
    if (c.name == "host") continue;
    if (!c.unavailable.empty()) {
      tried += (tried.empty() ? "" : ", ") + c.name + ": " + c.unavailable;
      continue;
    }
    hold_log(c.name);
    try {
      auto plugin = load(c, options);
      const int32_t count = plugin->device_count();
      if (count > 0) {
        release_log(c.name, /*selected=*/true);
        selection = "the first accelerator plugin that found a device";
        if (diag::channel_enabled("plugin")) diag::info("plugin: " + c.name + " (" + selection + ")");
        return plugin;
      }
      release_log(c.name, /*selected=*/false);
      tried += (tried.empty() ? "" : ", ") + c.name + ": 0 devices";
    } catch (const Error& e) {
      release_log(c.name, /*selected=*/false);
      diag::warn_once("skip:" + c.path, e.detail() + "; skipping it");
      tried += (tried.empty() ? "" : ", ") + c.name + ": failed to load";
    }
  }
  auto host = std::find_if(found.begin(), found.end(), [](const Candidate& c) { return c.name == "host"; });
  if (host == found.end())
    throw Error("no usable plugin: no accelerator plugin found a device and the host plugin "
                "is not installed (expected plugins/host/libflagos_host.so beside the core)");
  auto plugin = load(*host, options);
  // The usual case on a machine without accelerators: not worth a line on
  // every import; FLAGOS_LOG=plugin and `python -m torch_fl info` show it.
  selection = tried.empty() ? "no accelerator plugin installed; using the host plugin"
                            : "no accelerator plugin found a device (" + tried + "); using the host plugin";
  if (diag::channel_enabled("plugin")) diag::info("plugin: " + selection);
  return plugin;
}

}  // namespace

std::vector<std::string> default_search_dirs() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&default_search_dirs), &info) || !info.dli_fname) return {};
  const fs::path lib = fs::weakly_canonical(fs::path(info.dli_fname));
  return {(lib.parent_path().parent_path() / "plugins").string()};
}

std::vector<Candidate> discover(const std::vector<std::string>& dirs,
                                const std::vector<Candidate>& entry_points) {
  std::vector<Candidate> found(entry_points.begin(), entry_points.end());
  for (Candidate& c : found) c.origin = Origin::EntryPoint;
  for (Candidate& c : found) c.unavailable = unmet_requirements(c.path);
  for (const std::string& dir : dirs) {
    std::error_code ec;
    std::vector<Candidate> in_dir;
    for (const auto& sub : fs::directory_iterator(dir, ec)) {
      if (!sub.is_directory()) continue;
      const std::string name = sub.path().filename().string();
      const fs::path lib = sub.path() / (std::string(kPrefix) + name + std::string(kSuffix));
      if (fs::exists(lib))
        in_dir.push_back({name, fs::absolute(lib).string(), Origin::BuildDir, unmet_requirements(lib.string())});
    }
    std::sort(in_dir.begin(), in_dir.end(),
              [](const Candidate& a, const Candidate& b) { return a.name < b.name; });
    found.insert(found.end(), in_dir.begin(), in_dir.end());
  }
  return found;
}

Options options_from_env() {
  Options options;
  for (const std::string& item : env::get_list("FLAGOS_PLUGIN_OPTIONS")) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      diag::warn_once("FLAGOS_PLUGIN_OPTIONS:" + item,
                      "FLAGOS_PLUGIN_OPTIONS item '" + item + "' is not key=value; ignoring it");
      continue;
    }
    options.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return options;
}

std::shared_ptr<const Plugin> load(const Candidate& candidate, const Options& options) {
  OpenedLibrary lib;
  try {
    lib = open_library(candidate.path);
  } catch (const Error& e) {
    throw Error(describe(candidate) + ": " + e.detail());
  }
  LoaderState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (auto it = s.by_identity.find(lib.identity); it != s.by_identity.end()) return it->second;

  const flagos_plugin_api_t* api = nullptr;
  if (std::string why = call_entry(lib, candidate.name, options, &api); !why.empty())
    throw Error(describe(candidate) + ": " + why);
  if (std::string why = validate_table(api); !why.empty())
    throw Error(describe(candidate) + " refused: " + why);
  auto plugin = std::make_shared<const Plugin>(candidate, api, options);
  s.by_identity.emplace(lib.identity, plugin);
  return plugin;
}

std::shared_ptr<const Plugin> activate(const std::vector<Candidate>& entry_points,
                                       const std::vector<std::string>& dirs) {
  if (auto current = active()) return current;
  const std::vector<Candidate> found = discover(dirs, entry_points);
  const Options options = options_from_env();
  std::shared_ptr<const Plugin> chosen;
  std::string selection;
  if (auto requested = env::raw("FLAGOS_PLUGIN")) {
    chosen = load(explicit_candidate(*requested, found), options);
    selection = "FLAGOS_PLUGIN=" + *requested;
    if (diag::channel_enabled("plugin")) diag::info("plugin: " + chosen->name() + " (" + selection + ")");
  } else {
    chosen = select_implicit(found, options, selection);
  }
  LoaderState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.active) {
    s.active = chosen;
    s.selection = selection;
  }
  return s.active;
}

std::shared_ptr<const Plugin> active() {
  LoaderState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.active;
}

std::string selection() {
  LoaderState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.selection;
}

}  // namespace flagos::plugin
