// NVIDIA CUDA: libcudart (runtime) and libcuda (driver: names, UUIDs,
// primary-context state). Values from the CUDA 13 headers (driver_types.h,
// cuda.h). The runtime is found where torch already loaded it, else among the
// libraries the plugin's wheel bundles, the nvidia wheels beside this plugin,
// the toolkit, or the system path.
#include "../vendor.h"

namespace flagos_cudalike {
namespace {

const char* const kRuntime[] = {"libcudart.so.13", "libcudart.so.12", nullptr};
const char* const kDriver[] = {"libcuda.so.1", nullptr};
const char* const kEnv[] = {"CUDA_HOME", "CUDA_PATH", nullptr};
const char* const kSubdirs[] = {"lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib", nullptr};
// torch_fl/plugins/cuda/ in torch_fl's wheel, torch_fl_plugin_cuda/ in the plugin's.
const char* const kBeside[] = {"../../../nvidia/cu13/lib", "../../../nvidia/cuda_runtime/lib",
                               "../nvidia/cu13/lib", "../nvidia/cuda_runtime/lib", nullptr};
const char* const kFixed[] = {"/usr/local/cuda/lib64", nullptr};
// NCCL (nccl.h of NCCL 2.x): torch's CUDA build loads it, else the
// nvidia-nccl-cu* wheel beside this plugin's wheel, the toolkit, the system path.
const char* const kComm[] = {"libnccl.so.2", nullptr};
const char* const kCommBeside[] = {"../../../nvidia/nccl/lib", "../nvidia/nccl/lib", nullptr};
// CUPTI: torch's CUDA wheels install it (nvidia-cuda-cupti); a toolkit keeps
// it under extras/CUPTI.
const char* const kTracer[] = {"libcupti.so.13", "libcupti.so.12", nullptr};
const char* const kTracerSubdirs[] = {"lib64", "extras/CUPTI/lib64", "targets/x86_64-linux/lib", nullptr};
const char* const kTracerBeside[] = {"../../../nvidia/cu13/lib", "../../../nvidia/cuda_cupti/lib",
                                     "../nvidia/cu13/lib", "../nvidia/cuda_cupti/lib", nullptr};
const char* const kTracerFixed[] = {"/usr/local/cuda/extras/CUPTI/lib64", nullptr};

Vendor make() {
  Vendor v = {
    "cuda", "CUDA", "cuda",
    {kRuntime, kEnv, kSubdirs, kBeside, kFixed, true, false, /*bundled=*/true},
    // The driver comes with the GPU driver (the system path); a toolkit's
    // lib64 holds only a link stub, named otherwise.
    {kDriver, kEnv, kSubdirs, nullptr, nullptr, true, false},
    "cu", "cuDeviceTotalMem_v2",  // the unversioned symbol is the old 32-bit one
    "cudaHostAlloc", 0x1 /* cudaHostAllocPortable */, "cudaFreeHost",
    nullptr, nullptr,  // name and memory come from the driver
    "cudaPointerGetAttributes",
    {0, 1, 2, 3},      // cudaMemcpyHostToHost .. DeviceToDevice
    0x1 /* cudaStreamNonBlocking */, 0x2 /* cudaEventDisableTiming */,
    75, 76, 16, 50, 33, 34,  // cudaDevAttrComputeCapabilityMajor/Minor, MultiProcessorCount, PciDomain/Bus/DeviceId
    "sm_%d%d",
    600 /* cudaErrorNotReady */, kCudaNumberedErrors,
    true,
    false,
    {kComm, kEnv, kSubdirs, kCommBeside, kFixed, true, false}, "nccl",
  };
  v.tracer = {kTracer, kEnv, kTracerSubdirs, kTracerBeside, kTracerFixed, true, false};
  v.tracer_prefix = "cupti";
  return v;
}

}  // namespace

FLAGOS_CUDALIKE_VENDOR_BUILT_BY(make)

}  // namespace flagos_cudalike
