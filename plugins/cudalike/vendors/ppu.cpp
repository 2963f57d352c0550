// PPU: its SDK ships a complete CUDA 13 toolkit ($PPU_SDK/CUDA_SDK), so the
// calls and values are CUDA's (vendors/cuda.cpp). The runtime is searched
// only under $PPU_SDK: NVIDIA's libcudart has the same soname, and claiming
// an NVIDIA GPU as a PPU device would be wrong.
#include "../vendor.h"

namespace flagos_cudalike {
namespace {

const char* const kRuntime[] = {"libcudart.so.13", "libcudart.so.12", nullptr};
const char* const kDriver[] = {"libcuda.so.1", "libcuda.so", nullptr};
const char* const kEnv[] = {"PPU_SDK", nullptr};
const char* const kSubdirs[] = {"CUDA_SDK/lib64", "CUDA_SDK/lib", nullptr};
// NCCL as PPU ships it (libnccl.so.2, NCCL's names): unverified, and
// searched only under $PPU_SDK, as the runtime is (NVIDIA's has the soname).
const char* const kComm[] = {"libnccl.so.2", nullptr};
const char* const kCommSubdirs[] = {"CUDA_SDK/lib64", "CUDA_SDK/lib", "lib64", "lib", nullptr};
// PPU's CUDA SDK carries CUPTI beside its runtime (upstream's PPU build
// compiles the CUPTI tracer against it).
const char* const kTracer[] = {"libcupti.so.13", "libcupti.so.12", nullptr};
const char* const kTracerSubdirs[] = {"CUDA_SDK/lib64", "CUDA_SDK/extras/CUPTI/lib64", nullptr};

Vendor make() {
  Vendor v = {
    "ppu", "PPU", "cuda",
    {kRuntime, kEnv, kSubdirs, nullptr, nullptr, false, true},
    {kDriver, kEnv, kSubdirs, nullptr, nullptr, false, true},
    "cu", "cuDeviceTotalMem_v2",
    "cudaHostAlloc", 0x1, "cudaFreeHost",
    nullptr, nullptr,
    "cudaPointerGetAttributes",
    {0, 1, 2, 3},
    0x1, 0x2,
    75, 76, 16, 50, 33, 34,
    "sm_%d%d",
    600, kCudaNumberedErrors,
    true,  // its runtime is CUDA's: a PPU build of torch runs its CUDA kernels on this memory
    true,  // searched first in FLAGOS_VENDOR_TORCH_LIB
    {kComm, kEnv, kCommSubdirs, nullptr, nullptr, false, true}, "nccl",
  };
  v.tracer = {kTracer, kEnv, kTracerSubdirs, nullptr, nullptr, false, true};
  v.tracer_prefix = "cupti";
  return v;
}

}  // namespace

FLAGOS_CUDALIKE_VENDOR_BUILT_BY(make)

}  // namespace flagos_cudalike
