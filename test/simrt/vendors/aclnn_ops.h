// The two phases of every aclnn operator (CANN docs, "aclnn API two-phase
// interface"): aclnnXxxGetWorkspaceSize checks the arguments and prepares an
// executor and a workspace size (aclnn_prepare.cpp); aclnnXxx checks the
// launch and enqueues the computation on a stream (aclnn_launch.cpp).
#pragma once

#include <cstdint>

#include "aclnn_objects.h"

namespace simrt_aclnn {

// Add, Sub, Mul, Div (self, other, out; alpha for Add and Sub only),
// Neg, Abs, Exp (self, out: other and alpha NULL).
int prepare_elementwise(Op op, const aclTensor* self, const aclTensor* other, const aclScalar* alpha,
                        const aclTensor* out, uint64_t* workspace_size, aclOpExecutor** executor);
int prepare_mm(const aclTensor* self, const aclTensor* mat2, const aclTensor* out, int8_t cube_math_type,
               uint64_t* workspace_size, aclOpExecutor** executor);

int launch(Op op, void* workspace, uint64_t workspace_size, aclOpExecutor* executor, void* stream);

}  // namespace simrt_aclnn
