// Moore Threads MUSA: musa* in libmusart.so and mu* in the driver libmusa.so,
// under $MUSA_HOME/lib (/usr/local/musa). A one-for-one rename of CUDA:
// error codes and attribute ids as CUDA's (from public copies of the MUSA
// headers); flags and the pinned-memory call shape follow CUDA's and are
// unverified on hardware.
#include "../vendor.h"

namespace flagos_cudalike {
namespace {

const char* const kRuntime[] = {"libmusart.so", "libmusart.so.1", nullptr};
const char* const kDriver[] = {"libmusa.so", "libmusa.so.1", nullptr};
const char* const kEnv[] = {"MUSA_HOME", nullptr};
const char* const kSubdirs[] = {"lib", "lib64", nullptr};
const char* const kFixed[] = {"/usr/local/musa/lib", nullptr};
// MCCL, Moore Threads' NCCL rename: mccl* in $MUSA_HOME/lib/libmccl.so
// (torchada maps ncclX to mcclX there; vLLM on MUSA points at libmccl.so.2).
// NCCL's argument lists and enum values assumed, unverified on hardware.
const char* const kComm[] = {"libmccl.so", "libmccl.so.2", nullptr};
// MUPTI: CUPTI's activity API renamed (upstream's musa_mupti_device_tracer);
// its record layouts are taken to be CUPTI's, unverified on hardware.
const char* const kTracer[] = {"libmupti.so", "libmupti.so.1", nullptr};

Vendor make() {
  Vendor v = {
    "musa", "Moore Threads MUSA", "musa",
    {kRuntime, kEnv, kSubdirs, nullptr, kFixed, true, false},
    {kDriver, kEnv, kSubdirs, nullptr, kFixed, true, false},
    "mu", "muDeviceTotalMem",
    "musaMallocHost", -1 /* (void**, size_t) */, "musaFreeHost",
    nullptr, nullptr,  // name and memory come from the driver
    nullptr,
    {0, 1, 2, 3},
    0x1 /* musaStreamNonBlocking */, 0x2 /* musaEventDisableTiming */,
    75, 76, 16, 50, 33, 34,
    "mp_%d%d",
    600 /* musaErrorNotReady */, kCudaNumberedErrors,
    false,
    false,
    {kComm, kEnv, kSubdirs, nullptr, kFixed, true, false}, "mccl",
  };
  v.tracer = {kTracer, kEnv, kSubdirs, nullptr, kFixed, true, false};
  v.tracer_prefix = "mupti";
  return v;
}

}  // namespace

FLAGOS_CUDALIKE_VENDOR_BUILT_BY(make)

}  // namespace flagos_cudalike
