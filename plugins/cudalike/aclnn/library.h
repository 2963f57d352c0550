// CANN's aclnn operator library (libopapi.so) for the ascend plugin's native
// kernels. The plugin declares the calls it makes itself (no CANN header is
// needed to build) and opens the library at the first kernel call, never in
// the entry symbol; the vendor table's `kernels` spec says where to search.
// Signatures: CANN's aclnn/acl_meta.h and the aclnn_*.h of each operator;
// unverified on hardware (the simulated runtime implements the same).
#pragma once

#include <cstdint>
#include <string>

#include "flagos/abi.h"

namespace flagos_cudalike::aclnn {

// Opaque CANN objects.
struct aclTensor;
struct aclScalar;
struct aclOpExecutor;

using Status = int32_t;  // aclnnStatus: 0 is ACLNN_SUCCESS

// aclDataType values (acl_base.h).
enum DataType : int { kFloat = 0, kFloat16 = 1, kInt8 = 2, kInt32 = 3, kUint8 = 4, kInt16 = 6, kInt64 = 9,
                      kDouble = 11, kBool = 12, kBfloat16 = 27 };
constexpr int kFormatNd = 2;  // ACL_FORMAT_ND

// The calls every operator shares. Process lifetime once loaded.
struct Library {
  std::string path;
  void* handle = nullptr;
  aclTensor* (*create_tensor)(const int64_t* view_dims, uint64_t view_dims_num, int data_type,
                              const int64_t* stride, int64_t offset, int format, const int64_t* storage_dims,
                              uint64_t storage_dims_num, void* tensor_data) = nullptr;
  Status (*destroy_tensor)(const aclTensor*) = nullptr;
  aclScalar* (*create_scalar)(void* value, int data_type) = nullptr;
  Status (*destroy_scalar)(const aclScalar*) = nullptr;
  Status (*set_repeatable)(aclOpExecutor*) = nullptr;  // aclSetAclOpExecutorRepeatable
  Status (*destroy_executor)(aclOpExecutor*) = nullptr;
  Status (*set_input_addr)(aclOpExecutor*, size_t index, aclTensor*, void* addr) = nullptr;
  Status (*set_output_addr)(aclOpExecutor*, size_t index, aclTensor*, void* addr) = nullptr;
  const char* (*recent_error)() = nullptr;  // aclGetRecentErrMsg (AscendCL), optional

  // An operator's entry ("aclnnAddGetWorkspaceSize"), or nullptr.
  void* symbol(const std::string& name) const;
  // "<recent error>" of the thread, or "no message" when the library has none.
  std::string recent() const;
};

// The library, opened at the first call; nullptr with RUNTIME_UNAVAILABLE
// in *status and a last error naming `fn` and what was searched.
const Library* load_library(const char* fn, flagos_status_t* status);

}  // namespace flagos_cudalike::aclnn
