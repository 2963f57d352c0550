#include "plugin/loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>

#include "diag/log.h"
#include "env/registry.h"
#include "error.h"
#include "plugin/handshake.h"
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

std::string call_entry(const OpenedLibrary& lib, const Options& options,
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
  *api = nullptr;
  const flagos_status_t status = lib.entry(&host, api);
  if (status == FLAGOS_SUCCESS) return {};
  std::string why = std::string("its entry point failed with ") + flagos_status_name(status);
  // The entry may hand back its table on failure so that we can read why.
  if (*api && (*api)->struct_size >= FLAGOS_STRUCT_SIZE(flagos_plugin_api_t, last_error_message) &&
      (*api)->last_error_message) {
    const char* message = (*api)->last_error_message();
    if (message && *message) why += ": " + std::string(message);
  }
  return why;
}

// An explicit FLAGOS_PLUGIN value: a path, or a name to look up.
Candidate explicit_candidate(const std::string& value, const std::vector<Candidate>& found) {
  const bool is_path = value.find('/') != std::string::npos ||
                       (value.size() > 3 && value.compare(value.size() - 3, 3, ".so") == 0);
  if (is_path) {
    const fs::path path = fs::absolute(value);
    std::string name = name_from_filename(path.filename().string());
    return {name.empty() ? path.stem().string() : name, path.string(), Origin::Explicit};
  }
  for (const Candidate& c : found)
    if (c.name == value) return {c.name, c.path, Origin::Explicit};
  std::string known;
  for (const Candidate& c : found) known += (known.empty() ? "" : ", ") + c.name;
  throw Error("FLAGOS_PLUGIN=" + value + ": no plugin of that name is installed (found: " +
              (known.empty() ? "none" : known) +
              "); install torch_fl-plugin-" + value + " or give a path to libflagos_" + value + ".so");
}

std::shared_ptr<const Plugin> select_implicit(const std::vector<Candidate>& found,
                                              const Options& options) {
  std::string tried;
  for (const Candidate& c : found) {
    if (c.name == "host") continue;
    try {
      auto plugin = load(c, options);
      const int32_t count = plugin->device_count();
      if (count > 0) return plugin;
      tried += (tried.empty() ? "" : ", ") + c.name + ": 0 devices";
    } catch (const Error& e) {
      diag::warn_once("skip:" + c.path, e.detail() + "; skipping it");
      tried += (tried.empty() ? "" : ", ") + c.name + ": failed to load";
    }
  }
  auto host = std::find_if(found.begin(), found.end(), [](const Candidate& c) { return c.name == "host"; });
  if (host == found.end())
    throw Error("no usable plugin: no accelerator plugin found a device and the host plugin "
                "is not installed (expected plugins/host/libflagos_host.so beside the core)");
  auto plugin = load(*host, options);
  diag::info(tried.empty() ? "no accelerator plugin installed; using the host plugin"
                           : "no accelerator plugin found a device (" + tried + "); using the host plugin");
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
  for (const std::string& dir : dirs) {
    std::error_code ec;
    std::vector<Candidate> in_dir;
    for (const auto& sub : fs::directory_iterator(dir, ec)) {
      if (!sub.is_directory()) continue;
      const std::string name = sub.path().filename().string();
      const fs::path lib = sub.path() / (std::string(kPrefix) + name + std::string(kSuffix));
      if (fs::exists(lib)) in_dir.push_back({name, fs::absolute(lib).string(), Origin::BuildDir});
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
  if (std::string why = call_entry(lib, options, &api); !why.empty())
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
  if (auto requested = env::raw("FLAGOS_PLUGIN")) {
    chosen = load(explicit_candidate(*requested, found), options);
  } else {
    chosen = select_implicit(found, options);
  }
  LoaderState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.active) s.active = chosen;
  return s.active;
}

std::shared_ptr<const Plugin> active() {
  LoaderState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.active;
}

}  // namespace flagos::plugin
