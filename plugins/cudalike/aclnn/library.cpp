#include "aclnn/library.h"

#include <dlfcn.h>

#include "optional_library.h"
#include "runtime.h"
#include "vendor.h"

namespace flagos_cudalike::aclnn {
namespace {

OptionalLibrary<Library>& library() {
  static auto* l = new OptionalLibrary<Library>;  // leaked: kernels may run during static destruction
  return *l;
}

template <class Fn>
bool resolve(void* handle, const char* name, Fn* out, std::string* missing) {
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
  if (*out == nullptr && missing->empty()) *missing = name;
  return *out != nullptr;
}

// In kit/runtime_library.hpp's order, a copy already loaded first (a vendor
// torch's aclnn and the plugin's must be one). Symbols are looked up
// through the library's handle, which also covers what it links
// (aclCreateTensor lives in libnnopbase.so, a dependency of libopapi.so).
bool open_aclnn(Library* lib, std::string* why) {
  flagos::kit::LibrarySearch search;
  if (!search_of(vendor().kernels, &search, why)) return false;
  flagos::kit::OpenedLibrary opened;
  if (!flagos::kit::open_library(search, &opened, why)) return false;
  lib->path = opened.path;
  lib->handle = opened.handle;
  std::string missing;
  void* h = opened.handle;
  resolve(h, "aclCreateTensor", &lib->create_tensor, &missing);
  resolve(h, "aclDestroyTensor", &lib->destroy_tensor, &missing);
  resolve(h, "aclCreateScalar", &lib->create_scalar, &missing);
  resolve(h, "aclDestroyScalar", &lib->destroy_scalar, &missing);
  resolve(h, "aclSetAclOpExecutorRepeatable", &lib->set_repeatable, &missing);
  resolve(h, "aclDestroyAclOpExecutor", &lib->destroy_executor, &missing);
  resolve(h, "aclSetInputTensorAddr", &lib->set_input_addr, &missing);
  resolve(h, "aclSetOutputTensorAddr", &lib->set_output_addr, &missing);
  lib->recent_error = reinterpret_cast<const char* (*)()>(dlsym(h, "aclGetRecentErrMsg"));
  if (!missing.empty()) {
    *why = lib->path + " has no " + missing + " (not an aclnn library this plugin supports)";
    return false;
  }
  return true;
}

}  // namespace

void* Library::symbol(const std::string& name) const { return dlsym(handle, name.c_str()); }

std::string Library::recent() const {
  const char* text = recent_error != nullptr ? recent_error() : nullptr;
  return text != nullptr && *text != '\0' ? text : "no message";
}

const Library* load_library(const char* fn, flagos_status_t* status) {
  const std::string what = std::string("the ") + vendor().display + " operator library";
  return library().load(fn, what, open_aclnn, status);
}

}  // namespace flagos_cudalike::aclnn
