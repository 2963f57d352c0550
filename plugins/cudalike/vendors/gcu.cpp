// Enflame GCU: tops* in libtopsrt.so under $TOPS_HOME/lib (TopsRider installs
// to /opt/tops). HIP-derived: calls, memcpy kinds, flags and error numbers as
// EnflameTechnology/tops-codec-headers include/tops/tops_runtime_api.h and
// driver_types.h declare them (topsErrorNotReady 600, kinds 0..4,
// topsEventDisableTiming 0x2, attribute ids). It has no stream priorities and no
// LaunchHostFunc: the adapter creates streams with topsStreamCreateWithFlags,
// so the devices report no FLAGOS_CAP_STREAM_PRIORITY, and enqueues host
// functions with topsStreamAddCallback. No PCI attribute ids
// are published. Unverified on hardware.
#include <new>
#include <string>

#include "../runtime.h"
#include "../vendor.h"
#include "flagos/kit/runtime_library.hpp"

namespace flagos_cudalike {
namespace {

const char* const kRuntime[] = {"libtopsrt.so", "libtopsrt.so.1", nullptr};
const char* const kEnv[] = {"TOPS_HOME", nullptr};
const char* const kSubdirs[] = {"lib", "lib64", nullptr};
const char* const kFixed[] = {"/opt/tops/lib", nullptr};

using StreamCreateWithFlags = int (*)(rt_stream*, unsigned);
StreamCreateWithFlags g_stream_create_with_flags = nullptr;

// topsStreamCreateWithFlags under cudaStreamCreateWithPriority's contract:
// priority 0 is the only one (the device table reports the range 0..0).
int stream_create(rt_stream* s, unsigned flags, int priority) {
  if (priority != 0) return 1;  // topsErrorInvalidValue
  return g_stream_create_with_flags(s, flags);
}

// topsStreamAddCallback(stream, callback(stream, status, user), user, flags 0).
using StreamCallback = void (*)(rt_stream, int, void*);
using StreamAddCallback = int (*)(rt_stream, StreamCallback, void*, unsigned);
StreamAddCallback g_stream_add_callback = nullptr;

struct HostCall {
  rt_host_fn fn;
  void* user;
};

void run_host_call(rt_stream, int, void* data) {
  HostCall* call = static_cast<HostCall*>(data);
  call->fn(call->user);
  delete call;
}

// cudaLaunchHostFunc's contract over a stream callback: runs once the
// stream's earlier work is done; the callback owns its small record.
int launch_host_func(rt_stream s, rt_host_fn fn, void* user) {
  HostCall* call = new (std::nothrow) HostCall{fn, user};
  if (call == nullptr) return 2;  // topsErrorOutOfMemory
  const int err = g_stream_add_callback(s, &run_host_call, call, 0);
  if (err != 0) delete call;
  return err;
}

const char* adapt(void* library, Runtime* rt) {
  g_stream_create_with_flags = flagos::kit::symbol<StreamCreateWithFlags>(library, "topsStreamCreateWithFlags");
  if (g_stream_create_with_flags == nullptr) return "topsStreamCreateWithFlags";
  rt->stream_create_with_priority = &stream_create;
  g_stream_add_callback = flagos::kit::symbol<StreamAddCallback>(library, "topsStreamAddCallback");
  if (g_stream_add_callback != nullptr) rt->launch_host_func = &launch_host_func;
  rt->device_get_stream_priority_range = nullptr;  // none exported; never asked
  return nullptr;
}

Vendor make_gcu() {
  Vendor v = {
      "gcu", "Enflame GCU (TopsRider)", "tops",
      {kRuntime, kEnv, kSubdirs, nullptr, kFixed, true, false},
      {nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
      nullptr, nullptr,
      "topsHostMalloc", 0x1 /* topsHostMallocPortable */, "topsHostFree",
      "topsDeviceGetName", "topsDeviceTotalMem",
      nullptr,
      {0, 1, 2, 3},  // topsMemcpyHostToHost .. DeviceToDevice
      0x1 /* topsStreamNonBlocking */, 0x2 /* topsEventDisableTiming */,
      1, 2, 10, -1, -1, -1,  // topsDeviceAttributeComputeCapabilityMajor/Minor, MultiprocessorCount; no PCI ids
      "gcu%d%d",
      600 /* topsErrorNotReady */, kCudaNumberedErrors,
      false,
      false,
  };
  v.adapt = &adapt;
  return v;
}

}  // namespace

FLAGOS_CUDALIKE_VENDOR_BUILT_BY(make_gcu)

}  // namespace flagos_cudalike
