#include "runtime.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "flagos/kit/last_error.hpp"
#include "flagos/kit/runtime_library.hpp"
#include "vendor.h"

namespace flagos_cudalike {
namespace {

struct State {
  std::once_flag once;
  std::string override_path;
  Runtime runtime;
  bool ok = false;
  std::string why;
};

State& state() {
  static State* s = new State;  // leaked: used after static destructors at exit
  return *s;
}

std::vector<std::string> strings(const char* const* list) {
  std::vector<std::string> out;
  for (; list != nullptr && *list != nullptr; ++list) out.emplace_back(*list);
  return out;
}

// The folder this plugin library was loaded from ("" when unknown).
std::string plugin_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&plugin_folder), &info) == 0 || info.dli_fname == nullptr) return {};
  const std::string lib = info.dli_fname;
  const size_t slash = lib.rfind('/');
  return slash == std::string::npos ? std::string() : lib.substr(0, slash);
}

// FLAGOS_DISABLE_CUDA_ASSETS=1 (docs/environment-variables.md): read here,
// where the runtime is searched, in the probe process as in torch's.
bool assets_disabled() {
  const char* v = std::getenv("FLAGOS_DISABLE_CUDA_ASSETS");
  if (v == nullptr) return false;
  const std::string s(v);
  return s == "1" || s == "true" || s == "TRUE" || s == "True" || s == "yes" || s == "on" || s == "ON";
}

}  // namespace

bool search_of(const LibrarySpec& spec, flagos::kit::LibrarySearch* s, std::string* why) {
  s->sonames = strings(spec.sonames);
  s->folders = flagos::kit::folders_from_env(strings(spec.env_vars), strings(spec.subdirs));
  if (spec.env_required && s->folders.empty()) {
    std::string vars;
    for (const std::string& var : strings(spec.env_vars)) vars += (vars.empty() ? "" : " or ") + var;
    *why = vars + " is not set (the " + std::string(vendor().display) + " SDK)";
    return false;
  }
  const std::string here = plugin_folder();
  // The runtime libraries the plugin's wheel bundles (tools/plugin_wheel),
  // unless FLAGOS_DISABLE_CUDA_ASSETS asks for the installed ones.
  if (spec.bundled && !here.empty() && !assets_disabled()) {
    const std::string assets = here + "/" + std::string(vendor().name) + "_assets";
    struct stat st {};
    if (stat(assets.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) s->bundled = assets;
  }
  for (const std::string& rel : strings(spec.beside))
    if (!here.empty()) s->folders.push_back(here + "/" + rel);
  for (const std::string& fixed : strings(spec.fixed)) s->folders.push_back(fixed);
  s->system_path = spec.system_path;
  return true;
}

namespace {

template <class Fn>
void resolve(void* lib, const std::string& name, Fn* out) {
  *out = flagos::kit::symbol<Fn>(lib, name.c_str());
}

// Opens the libraries and resolves every call; false with `why` when the
// runtime is missing or lacks a required symbol.
bool open_runtime(const std::string& override_path, Runtime* rt, std::string* why) {
  const Vendor& v = vendor();
  flagos::kit::LibrarySearch search;
  flagos::kit::OpenedLibrary lib;
  if (override_path.empty() && !search_of(v.runtime, &search, why)) return false;
  const char* torch_lib = v.vendor_torch_lib ? std::getenv(kVendorTorchLibVar) : nullptr;
  const bool use_torch_lib = torch_lib != nullptr && *torch_lib != '\0';
  if (use_torch_lib) search.folders.insert(search.folders.begin(), torch_lib);
  search.explicit_path = override_path;
  if (!flagos::kit::open_library(search, &lib, why)) return false;
  rt->path = lib.path;
  rt->found_by = use_torch_lib && lib.how == std::string("folder") &&
                         lib.path.rfind(std::string(torch_lib) + "/", 0) == 0
                     ? kVendorTorchLibVar
                     : lib.how;
  const std::string prefix = v.prefix;
  if (v.calls_by_prefix) {
#define FLAGOS_CUDALIKE_RESOLVE(member, suffix, required, ret, params) \
  resolve(lib.handle, prefix + suffix, &rt->member);
    FLAGOS_CUDALIKE_CALLS(FLAGOS_CUDALIKE_RESOLVE)
#undef FLAGOS_CUDALIKE_RESOLVE
  }
  if (v.host_alloc != nullptr && v.host_alloc_flags >= 0)
    resolve(lib.handle, v.host_alloc, &rt->host_alloc_flags);
  else if (v.host_alloc != nullptr)
    resolve(lib.handle, v.host_alloc, &rt->host_alloc_plain);
  if (v.host_free != nullptr) resolve(lib.handle, v.host_free, &rt->host_free);
  if (v.device_name != nullptr) resolve(lib.handle, v.device_name, &rt->device_name);
  if (v.device_total != nullptr) resolve(lib.handle, v.device_total, &rt->device_total);
  if (v.pointer_attributes != nullptr) resolve(lib.handle, v.pointer_attributes, &rt->pointer_attributes);
  std::string missing;
  if (v.adapt != nullptr) {
    const char* lacking = v.adapt(lib.handle, rt);
    if (lacking != nullptr) missing = lacking;
  }
  // What the adapter left unset is missing under the vendor's own name.
#define FLAGOS_CUDALIKE_REQUIRE(member, suffix, required, ret, params) \
  if ((required) && rt->member == nullptr && missing.empty()) missing = prefix + suffix;
  FLAGOS_CUDALIKE_CALLS(FLAGOS_CUDALIKE_REQUIRE)
#undef FLAGOS_CUDALIKE_REQUIRE
  if (v.pinned_host && rt->host_alloc_flags == nullptr && rt->host_alloc_plain == nullptr && missing.empty())
    missing = v.host_alloc;
  if (v.pinned_host && rt->host_free == nullptr && missing.empty()) missing = v.host_free;
  if (!missing.empty()) {
    *why = lib.path + " has no " + missing + " (not a " + v.display + " runtime this plugin supports)";
    return false;
  }
  // The driver library is optional: without it the plugin only loses what
  // the driver alone can tell (names, primary-context state).
  if (v.driver.sonames != nullptr) {
    flagos::kit::LibrarySearch drv_search;
    flagos::kit::OpenedLibrary drv;
    std::string ignored;
    if (search_of(v.driver, &drv_search, &ignored) && flagos::kit::open_library(drv_search, &drv, &ignored)) {
      rt->driver_path = drv.path;
      const std::string dp = v.driver_prefix;
#define FLAGOS_CUDALIKE_RESOLVE_DRIVER(member, suffix, required, ret, params) \
  resolve(drv.handle, dp + suffix, &rt->member);
      FLAGOS_CUDALIKE_DRIVER_CALLS(FLAGOS_CUDALIKE_RESOLVE_DRIVER)
#undef FLAGOS_CUDALIKE_RESOLVE_DRIVER
      if (v.driver_total != nullptr) resolve(drv.handle, v.driver_total, &rt->drv_device_total);
    }
  }
  return true;
}

void load_once() {
  State& s = state();
  std::call_once(s.once, [&] { s.ok = open_runtime(s.override_path, &s.runtime, &s.why); });
}

}  // namespace

void set_runtime_override(const std::string& path) { state().override_path = path; }

const Runtime* try_load(std::string* why) {
  load_once();
  const State& s = state();
  if (s.ok) return &s.runtime;
  *why = s.why;
  return nullptr;
}

const Runtime* load(const char* fn, flagos_status_t* status) {
  std::string why;
  const Runtime* rt = try_load(&why);
  if (rt == nullptr)
    *status = flagos::kit::fail(FLAGOS_ERROR_RUNTIME_UNAVAILABLE, "%s: the %s runtime is unavailable: %s", fn,
                                vendor().display, why.c_str());
  else
    *status = FLAGOS_SUCCESS;
  return rt;
}

}  // namespace flagos_cudalike
