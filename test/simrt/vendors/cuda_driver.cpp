// libcuda.so.1: the driver calls a plugin makes without a context (cuda.h,
// CUDA 12.5). Shares the runtime instance of libcudart through the engine.
#include "exports.h"

#ifndef SIMRT_KEY
#define SIMRT_KEY "cuda"
#define SIMRT_DISPLAY "CUDA"
#endif

namespace {

// Only the fields the driver calls use are meaningful; CUresult names.
const simrt::Vendor kCu = {
    SIMRT_KEY, "cu", SIMRT_DISPLAY, "",
    {{0, "CUDA_SUCCESS"},
     {1, "CUDA_ERROR_INVALID_VALUE"},
     {2, "CUDA_ERROR_OUT_OF_MEMORY"},
     {3, "CUDA_ERROR_NOT_INITIALIZED"},
     {21, nullptr},  // no driver counterpart
     {100, "CUDA_ERROR_NO_DEVICE"},
     {101, "CUDA_ERROR_INVALID_DEVICE"},
     {400, "CUDA_ERROR_INVALID_HANDLE"},
     {600, "CUDA_ERROR_NOT_READY"},
     {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"},
     {800, "CUDA_ERROR_NOT_PERMITTED"},
     {801, "CUDA_ERROR_NOT_SUPPORTED"}},
    0, 1, 2, 3, 4, 0x1, 0x1, 0x7, 0x2, 0x4, 0x7, {75, 76, 16, 33, 34, 50}, 0, -5, 9, 0, 132,
};

}  // namespace

SIMRT_DRIVER_EXPORTS(cu, kCu)
// cuda.h: #define cuDeviceTotalMem cuDeviceTotalMem_v2 (size_t); the plain
// name is the old 32-bit call and is not exported here.
SIMRT_EXPORT_TOTAL_MEM(cuDeviceTotalMem_v2, kCu, true)
