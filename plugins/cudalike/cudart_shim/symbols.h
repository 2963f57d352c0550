/* The CUDA runtime functions the shim exports as libcudart.so.12, each
 * tagged with the version node libcudart.so.12 (cudart_shim.map): the calls
 * a generic PyTorch CUDA 12 build (libc10_cuda, libtorch_cuda) and the
 * kernels compiled into it bind by version. Two lists, because a function
 * MACA's bridge lacks is answered differently:
 *   STATUS: returns cudaError_t; a missing one returns cudaErrorNotSupported;
 *   OTHER:  returns something else; a missing one aborts with its name. */
#pragma once

#define FLAGOS_CUDART_SHIM_STATUS(X)                                                        \
  X(cudaGetDeviceCount) X(cudaSetDevice) X(cudaGetDevice) X(cudaDeviceGetAttribute)         \
  X(cudaGetDeviceProperties) X(cudaGetDeviceProperties_v2) X(cudaDeviceSynchronize)         \
  X(cudaDeviceReset) X(cudaDeviceGetStreamPriorityRange) X(cudaDeviceCanAccessPeer)         \
  X(cudaDeviceEnablePeerAccess) X(cudaDeviceDisablePeerAccess) X(cudaDeviceGetPCIBusId)     \
  X(cudaDeviceGetDefaultMemPool) X(cudaDeviceSetLimit) X(cudaDeviceGetLimit)                \
  X(cudaDriverGetVersion) X(cudaRuntimeGetVersion) X(cudaGetLastError) X(cudaPeekAtLastError) \
  X(cudaMalloc) X(cudaFree) X(cudaMallocHost) X(cudaHostAlloc) X(cudaFreeHost)              \
  X(cudaHostRegister) X(cudaHostUnregister) X(cudaHostGetDevicePointer) X(cudaMallocManaged) \
  X(cudaMallocAsync) X(cudaFreeAsync) X(cudaMemGetInfo) X(cudaPointerGetAttributes)         \
  X(cudaMemcpy) X(cudaMemcpyAsync) X(cudaMemcpy2DAsync) X(cudaMemcpyPeerAsync)              \
  X(cudaMemset) X(cudaMemsetAsync) X(cudaStreamCreate) X(cudaStreamCreateWithFlags)         \
  X(cudaStreamCreateWithPriority) X(cudaStreamDestroy) X(cudaStreamQuery)                   \
  X(cudaStreamSynchronize) X(cudaStreamWaitEvent) X(cudaStreamGetPriority)                  \
  X(cudaStreamGetFlags) X(cudaStreamIsCapturing) X(cudaStreamGetCaptureInfo)               \
  X(cudaStreamBeginCapture) X(cudaStreamEndCapture) X(cudaThreadExchangeStreamCaptureMode)  \
  X(cudaLaunchHostFunc) X(cudaEventCreate) X(cudaEventCreateWithFlags) X(cudaEventDestroy)  \
  X(cudaEventRecord) X(cudaEventRecordWithFlags) X(cudaEventQuery) X(cudaEventSynchronize)  \
  X(cudaEventElapsedTime) X(cudaIpcGetMemHandle) X(cudaIpcOpenMemHandle)                    \
  X(cudaIpcCloseMemHandle) X(cudaIpcGetEventHandle) X(cudaIpcOpenEventHandle)               \
  X(cudaLaunchKernel) X(cudaFuncGetAttributes) X(cudaFuncSetAttribute)                      \
  X(cudaOccupancyMaxActiveBlocksPerMultiprocessor)                                          \
  X(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags) X(cudaGetDriverEntryPoint)      \
  X(cudaGraphInstantiate) X(cudaGraphInstantiateWithFlags) X(cudaGraphLaunch)               \
  X(cudaGraphDestroy) X(cudaGraphExecDestroy) X(cudaGraphGetNodes)                          \
  X(cudaGraphDebugDotPrint) X(cudaProfilerStart) X(cudaProfilerStop)                        \
  X(__cudaPopCallConfiguration)

#define FLAGOS_CUDART_SHIM_OTHER(X)                                                          \
  X(cudaGetErrorString) X(cudaGetErrorName) X(__cudaRegisterFatBinary)                      \
  X(__cudaRegisterFatBinaryEnd) X(__cudaUnregisterFatBinary) X(__cudaRegisterFunction)      \
  X(__cudaRegisterVar) X(__cudaPushCallConfiguration)
