// flagos/kit/runtime_library.hpp — finding and opening a vendor runtime
// library at first use (never in the entry symbol), in a fixed order:
//   1. an explicit path (the plugin's `runtime=<path>` option), tried alone;
//   2. a library of one of the sonames already loaded in the process
//      (RTLD_NOLOAD): a vendor torch and the plugin must share one runtime;
//   3. the folder of libraries bundled with the plugin (its wheel's assets),
//      when the plugin names one;
//   4. each candidate folder (from the vendor's SDK variables), each soname;
//   5. when allowed, each soname through the system loader's own path.
// When nothing opens, `why` says in one line what was searched.
//
// Ownership: the handle is never closed (a runtime unloaded under live
// streams would crash at exit); resolve symbols once and keep them.
// Threading: stateless; the caller serialises the first open (call_once).
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace flagos::kit {

struct LibrarySearch {
  std::vector<std::string> sonames;  // in order of preference, e.g. libcudart.so.13
  std::vector<std::string> folders;  // candidate folders, in order
  bool system_path = true;           // finally let dlopen search LD_LIBRARY_PATH etc.
  std::string explicit_path;         // when set, the only place tried
  std::string bundled;               // the plugin's bundled libraries' folder, or ""
};

struct OpenedLibrary {
  void* handle = nullptr;
  std::string path;  // what was opened (a soname for steps 2 and 4)
  std::string how;   // "already loaded", "runtime=", "bundled", "folder", "system path"
};

// `$VAR/sub` for each variable that is set and non-empty, in order.
inline std::vector<std::string> folders_from_env(const std::vector<std::string>& vars,
                                                 const std::vector<std::string>& subdirs) {
  std::vector<std::string> out;
  for (const std::string& var : vars) {
    const char* root = std::getenv(var.c_str());
    if (root == nullptr || *root == '\0') continue;
    for (const std::string& sub : subdirs) out.push_back(std::string(root) + (sub.empty() ? "" : "/" + sub));
  }
  return out;
}

inline bool open_library(const LibrarySearch& search, OpenedLibrary* out, std::string* why) {
  auto opened = [&](void* h, std::string path, const char* how) {
    out->handle = h;
    out->path = std::move(path);
    out->how = how;
    return true;
  };
  if (!search.explicit_path.empty()) {
    if (void* h = dlopen(search.explicit_path.c_str(), RTLD_NOW | RTLD_LOCAL))
      return opened(h, search.explicit_path, "runtime=");
    const char* err = dlerror();
    *why = "runtime=" + search.explicit_path + ": " + (err ? err : "cannot be opened");
    return false;
  }
  for (const std::string& soname : search.sonames)
    if (void* h = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD))
      return opened(h, soname, "already loaded");
  std::string searched;
  std::string bundled_error;  // a bundled library that exists but does not load
  if (!search.bundled.empty()) {
    for (const std::string& soname : search.sonames) {
      const std::string path = search.bundled + "/" + soname;
      if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return opened(h, path, "bundled");
      const char* err = dlerror();
      if (err != nullptr && bundled_error.empty() && std::string(err).find("No such file") == std::string::npos)
        bundled_error = err;
    }
    searched = search.bundled;
  }
  for (const std::string& folder : search.folders) {
    for (const std::string& soname : search.sonames) {
      const std::string path = folder + "/" + soname;
      if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return opened(h, path, "folder");
    }
    searched += (searched.empty() ? "" : ", ") + folder;
  }
  std::string names;
  for (const std::string& soname : search.sonames) names += (names.empty() ? "" : " or ") + soname;
  std::string last_error;
  if (search.system_path) {
    for (const std::string& soname : search.sonames) {
      if (void* h = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL)) return opened(h, soname, "system path");
      if (const char* err = dlerror()) last_error = err;
    }
    searched += std::string(searched.empty() ? "" : ", ") + "the system library path";
  }
  *why = "no " + names + " found (searched " + (searched.empty() ? "nothing" : searched) + ")";
  // The loader's reason matters when a library exists but cannot load (a
  // missing dependency), not for "no such file".
  if (!last_error.empty() && last_error.find("No such file") == std::string::npos) *why += ": " + last_error;
  if (!bundled_error.empty()) *why += "; the bundled library does not load: " + bundled_error;
  return false;
}

// The symbol `name` of `handle` as a function pointer of type Fn, or nullptr.
template <class Fn>
Fn symbol(void* handle, const char* name) noexcept {
  return handle == nullptr ? nullptr : reinterpret_cast<Fn>(dlsym(handle, name));
}

// A call the plugin cannot work without: resolves `name` into *out and, when
// it is absent, keeps in *missing the first absent name (what a "<library>
// has no <call>" message names). Returns whether it was found.
template <class Fn>
bool require_symbol(void* handle, const char* name, Fn* out, const char** missing) noexcept {
  *out = symbol<Fn>(handle, name);
  if (*out == nullptr && *missing == nullptr) *missing = name;
  return *out != nullptr;
}

}  // namespace flagos::kit
