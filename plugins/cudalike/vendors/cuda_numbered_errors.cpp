// The CUDA runtime's error codes (driver_types.h, CUDA 12 and 13) and what
// each means to flagos. HIP (hip_runtime_api.h), MUSA and MACA number these
// codes the same way; a vendor whose numbering differs lists its own.
#include "../vendor.h"

namespace flagos_cudalike {

const ErrorCode kCudaNumberedErrors[] = {
    {2, FLAGOS_ERROR_OUT_OF_MEMORY},             // MemoryAllocation
    {1, FLAGOS_ERROR_INVALID_ARGUMENT},          // InvalidValue
    {17, FLAGOS_ERROR_INVALID_ARGUMENT},         // InvalidDevicePointer
    {21, FLAGOS_ERROR_INVALID_ARGUMENT},         // InvalidMemcpyDirection
    {101, FLAGOS_ERROR_INVALID_DEVICE},          // InvalidDevice
    {400, FLAGOS_ERROR_INVALID_HANDLE},          // InvalidResourceHandle
    {709, FLAGOS_ERROR_INVALID_HANDLE},          // ContextIsDestroyed
    {801, FLAGOS_ERROR_UNSUPPORTED},             // NotSupported
    {100, FLAGOS_ERROR_RUNTIME_UNAVAILABLE},     // NoDevice
    {35, FLAGOS_ERROR_RUNTIME_UNAVAILABLE},      // InsufficientDriver
    {3, FLAGOS_ERROR_RUNTIME_UNAVAILABLE},       // InitializationError
    {36, FLAGOS_ERROR_RUNTIME_UNAVAILABLE},      // CallRequiresNewerDriver
    {803, FLAGOS_ERROR_RUNTIME_UNAVAILABLE},     // SystemDriverMismatch
    {804, FLAGOS_ERROR_RUNTIME_UNAVAILABLE},     // CompatNotSupportedOnDevice
    {46, FLAGOS_ERROR_RUNTIME_UNAVAILABLE},      // DevicesUnavailable
    {802, FLAGOS_ERROR_RUNTIME_UNAVAILABLE},     // SystemNotReady
    {34, FLAGOS_ERROR_RUNTIME_UNAVAILABLE},      // StubLibrary
    {800, FLAGOS_ERROR_INVALID_STATE},           // NotPermitted
    // Stream capture (flagos/ext/graphs.h): a call a capture forbids, or one
    // on a capture such a call invalidated.
    {900, FLAGOS_ERROR_STREAM_CAPTURE},  // StreamCaptureUnsupported
    {901, FLAGOS_ERROR_STREAM_CAPTURE},  // StreamCaptureInvalidated
    {902, FLAGOS_ERROR_STREAM_CAPTURE},  // StreamCaptureMerge
    {903, FLAGOS_ERROR_STREAM_CAPTURE},  // StreamCaptureUnmatched
    {904, FLAGOS_ERROR_STREAM_CAPTURE},  // StreamCaptureUnjoined
    {905, FLAGOS_ERROR_STREAM_CAPTURE},  // StreamCaptureIsolation
    {906, FLAGOS_ERROR_STREAM_CAPTURE},  // StreamCaptureImplicit
    {907, FLAGOS_ERROR_STREAM_CAPTURE},  // CapturedEvent
    {908, FLAGOS_ERROR_STREAM_CAPTURE},  // StreamCaptureWrongThread
    {401, FLAGOS_ERROR_INVALID_STATE},           // IllegalState
    // Sticky: the context is corrupt and every later call fails.
    {700, FLAGOS_ERROR_DEVICE_LOST},  // IllegalAddress
    {719, FLAGOS_ERROR_DEVICE_LOST},  // LaunchFailure
    {702, FLAGOS_ERROR_DEVICE_LOST},  // LaunchTimeout
    {714, FLAGOS_ERROR_DEVICE_LOST},  // HardwareStackError
    {715, FLAGOS_ERROR_DEVICE_LOST},  // IllegalInstruction
    {716, FLAGOS_ERROR_DEVICE_LOST},  // MisalignedAddress
    {717, FLAGOS_ERROR_DEVICE_LOST},  // InvalidAddressSpace
    {718, FLAGOS_ERROR_DEVICE_LOST},  // InvalidPc
    {214, FLAGOS_ERROR_DEVICE_LOST},  // ECCUncorrectable
    {220, FLAGOS_ERROR_DEVICE_LOST},  // NvlinkUncorrectable
    {710, FLAGOS_ERROR_DEVICE_LOST},  // Assert
    {0, FLAGOS_SUCCESS},
};

}  // namespace flagos_cudalike
