#include "tracer_library.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "errors.h"
#include "optional_library.h"
#include "runtime.h"
#include "vendor.h"

namespace flagos_cudalike {
namespace {

OptionalLibrary<TracerLibrary>& tracer_library() {
  static auto* l = new OptionalLibrary<TracerLibrary>;  // leaked: CUPTI may call back during exit
  return *l;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A copy of the tracer mapped before this plugin opened one belongs to
// another client (kineto links CUPTI into CUDA builds of torch); returns its
// name, or "".
std::string loaded_by_another(const flagos::kit::LibrarySearch& search) {
  std::vector<std::string> names = search.sonames;
  if (!search.explicit_path.empty()) names.push_back(base_name(search.explicit_path));
  for (const std::string& name : names)
    if (dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD) != nullptr) return name;
  return "";
}

bool open_tracer(TracerLibrary* lib, std::string* why) {
  const Vendor& v = vendor();
  const char* given = std::getenv(kTracerLibraryVar);
  const bool overridden = given != nullptr && *given != '\0';
  flagos::kit::LibrarySearch search;
  if (!search_of(v.tracer, &search, why) && !overridden) return false;
  if (overridden) search.explicit_path = given;  // then the only place tried
  const std::string other = loaded_by_another(search);
  if (!other.empty()) {
    *why = other + " is already loaded in this process by another client of the activity API (torch's "
                   "profiler on a CUDA build of torch, whose trace holds this plugin's kernels already); "
                   "a process has one";
    return false;
  }
  flagos::kit::OpenedLibrary opened;
  if (!flagos::kit::open_library(search, &opened, why)) {
    if (overridden) {  // the kit names the path as its runtime= option; name the variable instead
      const size_t colon = why->find(": ");
      *why = std::string(kTracerLibraryVar) + "=" + given + (colon == std::string::npos ? "" : why->substr(colon));
    }
    return false;
  }
  lib->path = opened.path;
  lib->found_by = overridden ? kTracerLibraryVar : opened.how;
  void* handle = opened.handle;
  const std::string prefix = v.tracer_prefix;
  std::string missing;
  FLAGOS_CUDALIKE_TRACER_CALLS(FLAGOS_CUDALIKE_RESOLVE_CALL)
  if (!missing.empty()) {
    *why = lib->path + " has no " + missing + " (not an activity tracer this plugin supports)";
    return false;
  }
  if (lib->get_version != nullptr && lib->get_version(&lib->version) != kTracerSuccess) lib->version = 0;
  return true;
}

// FLAGOS_TRACE (the core's switch, read here as the plugin reads its other
// variables): say which tracer library was opened.
bool trace_on() {
  const char* v = std::getenv("FLAGOS_TRACE");
  if (v == nullptr) return false;
  const std::string s = v;
  return s == "1" || s == "true" || s == "TRUE" || s == "on" || s == "ON" || s == "yes" || s == "YES";
}

}  // namespace

bool has_tracer_library() { return vendor().tracer.sonames != nullptr && vendor().tracer_prefix != nullptr; }

const TracerLibrary* load_tracer_library(const char* fn, flagos_status_t* status) {
  const std::string what = std::string("the ") + vendor().display + " activity tracer";
  return tracer_library().load(fn, what, [](TracerLibrary* l, std::string* why) {
    const bool ok = has_tracer_library() ? open_tracer(l, why) : false;
    if (!has_tracer_library()) *why = "the vendor table names no activity tracer";
    if (trace_on())
      std::fprintf(stderr, "[flagos] %s tracer: %s\n", vendor().name,
                   ok ? (l->path + " (" + l->found_by + ")").c_str() : why->c_str());
    return ok;
  }, status);
}

const TracerLibrary* loaded_tracer_library() { return tracer_library().loaded(); }

flagos_status_t tracer_fail(const char* fn, const char* call, int result) {
  const TracerLibrary* lib = loaded_tracer_library();
  const char* text = nullptr;
  if (lib != nullptr && lib->result_string != nullptr && lib->result_string(result, &text) != kTracerSuccess)
    text = nullptr;
  return fail(FLAGOS_ERROR_DEVICE, "%s: %s%s failed: error %d (%s)", fn, vendor().tracer_prefix, call, result,
              text != nullptr ? text : "no description");
}

}  // namespace flagos_cudalike
