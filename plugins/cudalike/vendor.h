// A CUDA-shaped vendor as data: where its runtime lives, what its calls are
// named, the numbers of its enums and error codes, and what it can do. One
// plugin library links the shared runtime layer with exactly one table
// (vendors/<name>.cpp); nothing else differs between cuda, ppu, metax, dcu
// and musa. Values are the vendor's documented ones; each table cites where
// they come from, and says which are unverified on hardware.
#pragma once

#include <cstdint>

#include "flagos/abi.h"

namespace flagos_cudalike {

struct Runtime;

// A vendor error code and the flagos status it means.
struct ErrorCode {
  int code;
  flagos_status_t status;
};

// Where one library of the vendor is searched (kit/runtime_library.hpp's order).
struct LibrarySpec {
  const char* const* sonames;   // nullptr-terminated, preferred first
  const char* const* env_vars;  // SDK root variables, in order (nullptr-terminated)
  const char* const* subdirs;   // folders under each root (nullptr-terminated)
  const char* const* beside;    // folders relative to this plugin's own (a wheel's neighbours), or nullptr
  const char* const* fixed;     // absolute fallback folders (nullptr-terminated, may be nullptr)
  bool system_path;             // finally the system loader's path
  // Search only where an SDK variable points (else report it unset): for a
  // runtime whose sonames another vendor's runtime also has (ppu's libcudart).
  bool env_required;
  // The plugin's wheel may bundle this library in <name>_assets beside it
  // (docs/platforms/cuda.md, "CUDA assets"): searched right after an
  // already loaded copy.
  bool bundled = false;
};

struct Vendor {
  const char* name;     // plugin name, [a-z0-9_]+: libflagos_<name>.so
  const char* display;  // for messages and device names, e.g. "MetaX MACA"
  const char* prefix;   // runtime symbol prefix: "cuda", "hip", "mc", "musa"

  LibrarySpec runtime;
  // Optional driver library (cuDeviceGetName and friends); sonames nullptr: none.
  LibrarySpec driver;
  const char* driver_prefix;  // "cu", "mu"; nullptr without a driver library
  const char* driver_total;   // its (size_t*, int device) total-memory getter, or nullptr

  // Symbols whose names are not prefix + the CUDA runtime's suffix.
  const char* host_alloc;  // page-locked allocation
  int host_alloc_flags;    // its flags argument (portable), or -1: the call takes (void**, size_t)
  const char* host_free;
  const char* device_name;   // runtime (char*, int, int device) getter, or nullptr
  const char* device_total;  // runtime (size_t*, int device) getter, or nullptr
  // cudaPointerGetAttributes, for a CUDA-ABI runtime only: there the core
  // may allocate through torch's CUDA allocator, so not every device
  // pointer comes from this plugin. nullptr: the plugin's own table decides.
  const char* pointer_attributes;

  int memcpy_kind[4];  // vendor values of FLAGOS_MEMCPY_HOST_TO_HOST .. DEVICE_TO_DEVICE
  unsigned stream_non_blocking;
  unsigned event_disable_timing;

  // Device attribute ids (-1: not asked): compute capability, SM count, PCI.
  int attr_major, attr_minor, attr_multiprocessors, attr_pci_domain, attr_pci_bus, attr_pci_device;
  const char* arch_format;  // printf with major, minor, e.g. "sm_%d%d"

  int error_not_ready;     // the "still pending" code of queries
  const ErrorCode* errors;  // the rest, ended by {0, FLAGOS_SUCCESS}; unlisted: DEVICE
  // Device pointers are CUDA pointers usable by the installed torch's CUDA
  // kernels (FLAGOS_CAP_CUDA_ABI): true only for a runtime that is CUDA's.
  bool cuda_abi;
  // The runtime is searched first in FLAGOS_VENDOR_TORCH_LIB (after runtime=
  // and an already-loaded copy): the vendor builds a torch of its own whose
  // lib folder holds the runtime that torch uses, and the two must share one.
  bool vendor_torch_lib = false;
  // The NCCL-shaped communicator library behind FLAGOS_EXTENSION_COLLECTIVES
  // (comm_library.h), opened at the first collectives call; sonames nullptr:
  // the vendor has none and the plugin leaves the extension out.
  LibrarySpec comm = {};
  const char* comm_prefix = nullptr;  // "nccl", "mccl": the prefix of ncclAllReduce and friends
  // The CUPTI-shaped activity tracer behind FLAGOS_EXTENSION_PROFILER
  // (tracer_library.h), opened at the first profiler_create;
  // FLAGOS_TRACER_LIBRARY replaces the search. sonames nullptr: the vendor
  // has none and the plugin leaves the extension out.
  LibrarySpec tracer = {};
  const char* tracer_prefix = nullptr;  // "cupti", "mupti": the prefix of cuptiActivityEnable and friends

  // The operator library behind the vendor's native kernels (ascend's aclnn,
  // libopapi.so), opened at the first kernel call; only read by a plugin
  // built with those kernels (FLAGOS_BUILD_VENDOR).
  LibrarySpec kernels = {};

  // A runtime whose calls are not all CUDA-shaped (gcu has no priorities;
  // ascend, tsingmicro and bpu differ throughout): the vendor file's adapter
  // fills runtime.h's members from the opened library, each keeping the
  // CUDA-shaped contract declared there, and returns nullptr, or the first
  // vendor symbol it needs and the library lacks. It runs after the prefix
  // resolution (skipped when calls_by_prefix is false, so that a same-named
  // call of another shape is never taken), once, under the loader's lock.
  const char* (*adapt)(void* library, Runtime* rt) = nullptr;
  bool calls_by_prefix = true;
  // Page-locked host memory exists (FLAGOS_CAP_PINNED_HOST); false: the
  // adapter leaves host_alloc unset and host_alloc answers UNSUPPORTED.
  bool pinned_host = true;
  // The runtime has no streams: the adapter runs every enqueued operation at
  // the call (bpu). Nothing is ever pending, so the testing extension, whose
  // delays must leave the caller free while the stream waits, is left out.
  bool synchronous = false;
  // The vendor call that counts devices when it is not prefix +
  // "GetDeviceCount" ("hb_bpu_core_num"): named in the no-device note.
  const char* count_call = nullptr;
};

// The variable naming the tracer library to open instead of searching
// (read by the plugin itself, like the one below).
inline constexpr const char* kTracerLibraryVar = "FLAGOS_TRACER_LIBRARY";

// The variable naming the vendor torch's lib folder. The plugin reads it
// itself (it builds from include/ alone, without the core's registry); a
// folder needs no parsing, and an empty value is unset, as everywhere.
inline constexpr const char* kVendorTorchLibVar = "FLAGOS_VENDOR_TORCH_LIB";

// The vendor this plugin library was linked with.
const Vendor& vendor();

// Defines vendor() for a table that a function builds (an adapter vendor's:
// the adapter members come after the aggregate's defaulted ones). Built at
// first use: the entry table reads it during other files' static
// initialisation, before a namespace-scope table built by a call would be.
#define FLAGOS_CUDALIKE_VENDOR_BUILT_BY(make) \
  const Vendor& vendor() {                    \
    static const Vendor built = make();       \
    return built;                             \
  }

// The CUDA runtime's error numbering (driver_types.h), which HIP, MUSA and
// MACA mirror for every code listed here.
extern const ErrorCode kCudaNumberedErrors[];

}  // namespace flagos_cudalike
