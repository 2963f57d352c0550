#include "comm_library.h"

#include <cstdlib>

#include "errors.h"
#include "optional_library.h"
#include "vendor.h"

namespace flagos_cudalike {
namespace {

OptionalLibrary<CommLibrary>& comm_library() {
  static auto* l = new OptionalLibrary<CommLibrary>;  // leaked: used after static destructors at exit
  return *l;
}

// Opens the library in kit/runtime_library.hpp's order (a copy already loaded
// first: torch's CUDA build loads libnccl.so.2, and one process must not run
// two NCCLs) and resolves every call; false with `why`.
bool open_comm(CommLibrary* lib, std::string* why) {
  const Vendor& v = vendor();
  flagos::kit::LibrarySearch search;
  if (!search_of(v.comm, &search, why)) return false;
  const char* torch_lib = v.vendor_torch_lib ? std::getenv(kVendorTorchLibVar) : nullptr;
  if (torch_lib != nullptr && *torch_lib != '\0') search.folders.insert(search.folders.begin(), torch_lib);
  flagos::kit::OpenedLibrary opened;
  if (!flagos::kit::open_library(search, &opened, why)) return false;
  lib->path = opened.path;
  lib->found_by = opened.how;
  void* handle = opened.handle;
  const std::string prefix = v.comm_prefix;
  std::string missing;
  FLAGOS_CUDALIKE_COMM_CALLS(FLAGOS_CUDALIKE_RESOLVE_CALL)
  if (!missing.empty()) {
    *why = lib->path + " has no " + missing + " (not a communicator library this plugin supports)";
    return false;
  }
  if (lib->get_version != nullptr && lib->get_version(&lib->version) != kNcclSuccess) lib->version = 0;
  return true;
}

}  // namespace

bool has_comm_library() { return vendor().comm.sonames != nullptr && vendor().comm_prefix != nullptr; }

const CommLibrary* load_comm_library(const char* fn, flagos_status_t* status) {
  const std::string what = std::string("the ") + vendor().display + " communicator library";
  return comm_library().load(fn, what, [](CommLibrary* l, std::string* why) {
    if (has_comm_library()) return open_comm(l, why);
    *why = "the vendor table names no communicator library";
    return false;
  }, status);
}

const CommLibrary* loaded_comm_library() { return comm_library().loaded(); }

flagos_status_t comm_status_of(int result) {
  switch (result) {
    case kNcclSuccess: return FLAGOS_SUCCESS;
    case kNcclInvalidArgument:
    case kNcclInvalidUsage: return FLAGOS_ERROR_INVALID_ARGUMENT;
    case kNcclUnhandledCudaError: return FLAGOS_ERROR_DEVICE;
    case kNcclTimeout: return FLAGOS_ERROR_TIMEOUT;
    default: return FLAGOS_ERROR_COMM;  // system, internal, remote: the communicator is broken
  }
}

flagos_status_t comm_fail(const char* fn, const char* call, int result, nccl_comm comm) {
  const CommLibrary* lib = loaded_comm_library();
  const char* text = lib && lib->get_error_string ? lib->get_error_string(result) : nullptr;
  const char* last = lib && lib->get_last_error ? lib->get_last_error(comm) : nullptr;
  return fail(comm_status_of(result), "%s: %s%s failed: error %d (%s)%s%s", fn, vendor().comm_prefix, call, result,
              text ? text : "no description", last && *last ? ": " : "", last ? last : "");
}

}  // namespace flagos_cudalike
