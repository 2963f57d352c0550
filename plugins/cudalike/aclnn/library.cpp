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
  const char* missing = nullptr;
  void* h = opened.handle;
  flagos::kit::require_symbol(h, "aclCreateTensor", &lib->create_tensor, &missing);
  flagos::kit::require_symbol(h, "aclDestroyTensor", &lib->destroy_tensor, &missing);
  flagos::kit::require_symbol(h, "aclCreateScalar", &lib->create_scalar, &missing);
  flagos::kit::require_symbol(h, "aclDestroyScalar", &lib->destroy_scalar, &missing);
  flagos::kit::require_symbol(h, "aclSetAclOpExecutorRepeatable", &lib->set_repeatable, &missing);
  flagos::kit::require_symbol(h, "aclDestroyAclOpExecutor", &lib->destroy_executor, &missing);
  flagos::kit::require_symbol(h, "aclSetInputTensorAddr", &lib->set_input_addr, &missing);
  flagos::kit::require_symbol(h, "aclSetOutputTensorAddr", &lib->set_output_addr, &missing);
  lib->recent_error = flagos::kit::symbol<const char* (*)()>(h, "aclGetRecentErrMsg");
  if (missing != nullptr) {
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
