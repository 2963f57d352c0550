#include "comm_library.h"

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "errors.h"
#include "vendor.h"

namespace flagos_cudalike {
namespace {

struct State {
  std::once_flag once;
  CommLibrary lib;
  bool ok = false;
  std::string why;
};

State& state() {
  static State* s = new State;  // leaked: used after static destructors at exit
  return *s;
}

std::atomic<const CommLibrary*> g_loaded{nullptr};

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
  const std::string prefix = v.comm_prefix;
  std::string missing;
#define FLAGOS_CUDALIKE_COMM_RESOLVE(member, suffix, required, ret, params) \
  lib->member = flagos::kit::symbol<decltype(lib->member)>(opened.handle, (prefix + suffix).c_str()); \
  if ((required) && lib->member == nullptr && missing.empty()) missing = prefix + suffix;
  FLAGOS_CUDALIKE_COMM_CALLS(FLAGOS_CUDALIKE_COMM_RESOLVE)
#undef FLAGOS_CUDALIKE_COMM_RESOLVE
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
  State& s = state();
  std::call_once(s.once, [&] {
    s.ok = has_comm_library() ? open_comm(&s.lib, &s.why) : false;
    if (!has_comm_library()) s.why = "the vendor table names no communicator library";
    if (s.ok) g_loaded.store(&s.lib, std::memory_order_release);
  });
  if (s.ok) {
    *status = FLAGOS_SUCCESS;
    return &s.lib;
  }
  *status = fail(FLAGOS_ERROR_RUNTIME_UNAVAILABLE, "%s: the %s communicator library is unavailable: %s", fn,
                 vendor().display, s.why.c_str());
  return nullptr;
}

const CommLibrary* loaded_comm_library() { return g_loaded.load(std::memory_order_acquire); }

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
