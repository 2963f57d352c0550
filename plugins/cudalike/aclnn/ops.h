// The aten out= overloads the ascend plugin serves with aclnn operators: one
// row per operator, the row's shape saying how the schema's arguments map
// onto the operator's two calls (aclnn<Name>GetWorkspaceSize prepares an
// executor, aclnn<Name> launches it on a stream).
#pragma once

#include <cstddef>

namespace flagos_cudalike::aclnn {

enum class Shape {
  kUnary,        // (self, *, out):               Prepare(self, out, ...)
  kBinary,       // (self, other, *, out):        Prepare(self, other, out, ...)
  kBinaryAlpha,  // (self, other, *, alpha, out): Prepare(self, other, alpha, out, ...)
  kMatmul,       // (self, mat2, *, out):         Prepare(self, mat2, out, cubeMathType, ...)
};

struct Op {
  const char* schema;  // the installed torch's schema string of the out= overload
  const char* name;    // "aclnnAdd"; its preparation adds "GetWorkspaceSize"
  Shape shape;
};

inline constexpr Op kOps[] = {
    {"aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)", "aclnnAdd",
     Shape::kBinaryAlpha},
    {"aten::sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)", "aclnnSub",
     Shape::kBinaryAlpha},
    {"aten::mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", "aclnnMul", Shape::kBinary},
    {"aten::div.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", "aclnnDiv", Shape::kBinary},
    {"aten::neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "aclnnNeg", Shape::kUnary},
    {"aten::abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "aclnnAbs", Shape::kUnary},
    {"aten::exp.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "aclnnExp", Shape::kUnary},
    {"aten::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)", "aclnnMm", Shape::kMatmul},
};
inline constexpr size_t kNumOps = sizeof(kOps) / sizeof(kOps[0]);

// Schema arguments of a shape (out included), and how many are input tensors.
constexpr size_t num_args(Shape s) {
  return s == Shape::kUnary ? 2 : s == Shape::kBinaryAlpha ? 4 : 3;
}
constexpr size_t num_inputs(Shape s) { return s == Shape::kUnary ? 1 : 2; }

}  // namespace flagos_cudalike::aclnn
