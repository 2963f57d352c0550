// aclnnXxxGetWorkspaceSize: every argument rule is checked here, before an
// executor exists (CANN docs, "aclnn API two-phase interface": the first
// phase validates the inputs and computes the workspace; on failure it
// returns the error and no executor).
#include <cmath>
#include <cstring>

#include "../engine/api.h"
#include "aclnn_ops.h"
#include "aclnn_status.h"

namespace simrt_aclnn {
namespace {

// Computation the sim supports: float32 for every operator, int64 for add,
// sub, mul, neg and abs (div is true division: float only).
bool supports(Op op, int dtype) {
  return dtype == kFloat || (dtype == kInt64 && op != Op::Div && op != Op::Exp && op != Op::Mm);
}

// A tensor argument: live, copied into the executor (the caller may destroy
// its aclTensor once GetWorkspaceSize returned).
int operand(const char* sym, const char* name, const aclTensor* h, Operand* op, int* dtype) {
  if (h == nullptr) return fail(sym, kAclnnParamNullptr, "%s is NULL", name);
  Tensor t;
  if (!find_tensor(h, &t))
    return fail(sym, kAclnnParamInvalid, "%s (%p) is not a live aclTensor (destroyed, or never created)", name,
                static_cast<const void*>(h));
  op->handle = h;
  op->name = name;
  op->dims = t.dims;
  op->strides = t.strides;
  op->offset = t.offset;
  op->data = t.data;
  *dtype = t.dtype;
  return kAclnnSuccess;
}

// numpy broadcasting of `in` to out's shape: right-aligned, each dimension
// equal to out's or 1.
int broadcasts(const char* sym, const Operand& in, const Operand& out) {
  bool ok = in.dims.size() <= out.dims.size();
  const size_t lead = ok ? out.dims.size() - in.dims.size() : 0;
  for (size_t i = 0; ok && i < in.dims.size(); ++i) ok = in.dims[i] == out.dims[lead + i] || in.dims[i] == 1;
  if (ok) return kAclnnSuccess;
  return fail(sym, kAclnnParamInvalid, "%s's shape %s does not broadcast to out's shape %s", in.name,
              shape_text(in.dims).c_str(), shape_text(out.dims).c_str());
}

// add/sub's alpha: an ACL_FLOAT, ACL_DOUBLE or ACL_INT64 scalar, converted to
// the tensors' dtype (an int64 computation takes integral values only).
int convert_alpha(const char* sym, const aclScalar* h, int dtype, Executor* e) {
  if (h == nullptr) return fail(sym, kAclnnParamNullptr, "alpha is NULL");
  Scalar s;
  if (!find_scalar(h, &s))
    return fail(sym, kAclnnParamInvalid, "alpha (%p) is not a live aclScalar", static_cast<const void*>(h));
  double value = 0;
  int64_t integral = 0;
  bool exact = true;
  if (s.dtype == kFloat) {
    float f;
    std::memcpy(&f, s.bytes, sizeof f);
    value = f;
  } else if (s.dtype == kDouble) {
    std::memcpy(&value, s.bytes, sizeof value);
  } else if (s.dtype == kInt64) {
    std::memcpy(&integral, s.bytes, sizeof integral);
    value = static_cast<double>(integral);
  } else {
    return fail(sym, kAclnnParamInvalid, "alpha's dtype %s is not ACL_FLOAT, ACL_DOUBLE or ACL_INT64",
                dtype_name(s.dtype).c_str());
  }
  if (s.dtype != kInt64) {
    exact = std::isfinite(value) && std::trunc(value) == value && std::fabs(value) < 9.2e18;
    if (exact) integral = static_cast<int64_t>(value);
  }
  if (dtype == kInt64 && !exact)
    return fail(sym, kAclnnParamInvalid, "alpha %g is not an integer, and the tensors are ACL_INT64", value);
  e->alpha_f = value;
  e->alpha_i = integral;
  return kAclnnSuccess;
}

// The executor goes live only once every check passed.
int finish(std::unique_ptr<Executor> e, uint64_t workspace, uint64_t* workspace_size, aclOpExecutor** executor) {
  e->device = simrt::stream_device(kAclnn, nullptr);  // the calling thread's current device
  e->workspace = workspace;
  *workspace_size = workspace;
  *executor = add_executor(std::move(e));
  return kAclnnSuccess;
}

int out_params(const char* sym, uint64_t* workspace_size, aclOpExecutor** executor) {
  if (workspace_size == nullptr) return fail(sym, kAclnnParamNullptr, "workspaceSize is NULL");
  if (executor == nullptr) return fail(sym, kAclnnParamNullptr, "executor is NULL");
  *executor = nullptr;
  *workspace_size = 0;
  // The executor belongs to the current device (its tensors' and its stream's).
  if (simrt::stream_device(kAclnn, nullptr) < 0)
    return fail(sym, kAclnnRuntimeError, "the calling thread has no usable current device");
  return kAclnnSuccess;
}

}  // namespace

int prepare_elementwise(Op op, const aclTensor* self, const aclTensor* other, const aclScalar* alpha,
                        const aclTensor* out, uint64_t* workspace_size, aclOpExecutor** executor) {
  const char* sym = prepare_symbol(op);
  int st = 0;
  if (refused(sym, &st) || (st = out_params(sym, workspace_size, executor)) != 0) return st;
  const bool binary = op == Op::Add || op == Op::Sub || op == Op::Mul || op == Op::Div;
  auto e = std::make_unique<Executor>();
  e->op = op;
  Operand a, b, r;
  int da = 0, db = 0, dr = 0;
  if ((st = operand(sym, "self", self, &a, &da)) != 0) return st;
  if (binary && (st = operand(sym, "other", other, &b, &db)) != 0) return st;
  if ((st = operand(sym, "out", out, &r, &dr)) != 0) return st;
  if (da != dr || (binary && db != da)) {
    if (binary)
      return fail(sym, kAclnnParamInvalid, "mixed dtypes (self %s, other %s, out %s): every tensor must have one dtype",
                  dtype_name(da).c_str(), dtype_name(db).c_str(), dtype_name(dr).c_str());
    return fail(sym, kAclnnParamInvalid, "mixed dtypes (self %s, out %s): every tensor must have one dtype",
                dtype_name(da).c_str(), dtype_name(dr).c_str());
  }
  if (!supports(op, da))
    return fail(sym, kAclnnParamInvalid, "dtype %s is not supported (%s)", dtype_name(da).c_str(),
                supports(op, kInt64) ? "ACL_FLOAT or ACL_INT64" : "ACL_FLOAT only");
  if ((st = broadcasts(sym, a, r)) != 0 || (binary && (st = broadcasts(sym, b, r)) != 0)) return st;
  if ((op == Op::Add || op == Op::Sub) && (st = convert_alpha(sym, alpha, da, e.get())) != 0) return st;
  e->dtype = da;
  e->in.push_back(a);
  if (binary) e->in.push_back(b);
  e->out.push_back(r);
  return finish(std::move(e), 0, workspace_size, executor);  // elementwise ops need no workspace
}

int prepare_mm(const aclTensor* self, const aclTensor* mat2, const aclTensor* out, int8_t cube_math_type,
               uint64_t* workspace_size, aclOpExecutor** executor) {
  const char* sym = prepare_symbol(Op::Mm);
  int st = 0;
  if (refused(sym, &st) || (st = out_params(sym, workspace_size, executor)) != 0) return st;
  Operand a, b, r;
  int da = 0, db = 0, dr = 0;
  if ((st = operand(sym, "self", self, &a, &da)) != 0 || (st = operand(sym, "mat2", mat2, &b, &db)) != 0 ||
      (st = operand(sym, "out", out, &r, &dr)) != 0)
    return st;
  if (da != db || da != dr)
    return fail(sym, kAclnnParamInvalid, "mixed dtypes (self %s, mat2 %s, out %s): every tensor must have one dtype",
                dtype_name(da).c_str(), dtype_name(db).c_str(), dtype_name(dr).c_str());
  if (!supports(Op::Mm, da))
    return fail(sym, kAclnnParamInvalid, "dtype %s is not supported (ACL_FLOAT only)", dtype_name(da).c_str());
  if (a.dims.size() != 2 || b.dims.size() != 2 || r.dims.size() != 2)
    return fail(sym, kAclnnParamInvalid, "self, mat2 and out must be 2-D (ranks %zu, %zu, %zu)", a.dims.size(),
                b.dims.size(), r.dims.size());
  const int64_t n = a.dims[0], k = a.dims[1], m = b.dims[1];
  if (b.dims[0] != k || r.dims[0] != n || r.dims[1] != m)
    return fail(sym, kAclnnParamInvalid, "shapes do not multiply: self %s x mat2 %s -> out %s (want [n,k] x [k,m] -> [n,m])",
                shape_text(a.dims).c_str(), shape_text(b.dims).c_str(), shape_text(r.dims).c_str());
  // cubeMathType: KEEP_DTYPE 0, ALLOW_FP32_DOWN_PRECISION 1, USE_FP16 2, USE_HF32 3; no effect here.
  if (cube_math_type < 0 || cube_math_type > 3)
    return fail(sym, kAclnnParamInvalid, "cubeMathType %d is not 0..3", cube_math_type);
  auto e = std::make_unique<Executor>();
  e->op = Op::Mm;
  e->dtype = da;
  e->in = {a, b};
  e->out = {r};
  // The accumulator: n*m floats, copied to out at the end (so a short or
  // misplaced workspace is caught, as it would corrupt on hardware).
  return finish(std::move(e), static_cast<uint64_t>(n) * static_cast<uint64_t>(m) * sizeof(float), workspace_size,
                executor);
}

}  // namespace simrt_aclnn
