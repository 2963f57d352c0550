// A kernel call's operands as aclnn sees them: the call checked against the
// operator's shape, each tensor's aclDataType and storage, and the cache key
// of everything a preparation depends on except the addresses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "aclnn/library.h"
#include "aclnn/ops.h"
#include "flagos/ext/kernels.h"

namespace flagos_cudalike::aclnn {

struct TensorOperand {
  const flagos_tensor_desc_t* desc = nullptr;
  int data_type = 0;             // aclDataType
  void* storage = nullptr;       // data + byte_offset: the element at index 0
  int64_t storage_elements = 0;  // 1 + the largest offset any index reaches
  int64_t numel = 1;
};

struct Operands {
  std::vector<TensorOperand> inputs;  // the operator's input order
  TensorOperand out;
  // kBinaryAlpha: alpha as aclCreateScalar takes it.
  int64_t alpha_int = 0;
  double alpha_double = 0;
  int alpha_type = -1;  // aclDataType, -1 without alpha
  std::string key;      // the executor cache key (the op and device excluded)
};

// Reads `call` for an operator of `shape`. INVALID_ARGUMENT (with a last
// error naming `fn`) for a malformed call; UNSUPPORTED for operands aclnn is
// not asked about here (a dtype without an aclDataType, negative strides).
flagos_status_t read_operands(const char* fn, Shape shape, const flagos_kernel_call_t* call, Operands* out);

// Whether `out` shares memory with an input in a way aclnn is not asked to
// handle: any sharing for a matmul, and for elementwise operators any but
// the same elements in the same layout (an in-place form). The kernel then
// declines, so that the ABI's "as if every input were read first" holds.
bool out_overlaps_input(Shape shape, const Operands& o);

// Creates the aclTensor of one operand (storage at offset 0: the address is
// the only thing a cached executor changes).
aclTensor* create_tensor(const Library& lib, const TensorOperand& t);

}  // namespace flagos_cudalike::aclnn
