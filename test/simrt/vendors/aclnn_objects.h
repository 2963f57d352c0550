// The aclnn library's objects (libopapi.so): tensors, scalars, int arrays and
// op executors, each behind a handle. Handles are never-reused tokens in
// disjoint ranges (as the engine's streams and events), never addresses of
// the objects: a destroyed, foreign or wrong-kind handle is always recognised,
// and a handle is never dereferenced by the caller (the types are opaque).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

// Opaque to callers, as in CANN's headers.
struct aclTensor;
struct aclScalar;
struct aclIntArray;
struct aclOpExecutor;

namespace simrt_aclnn {

// aclDataType values the sim knows (acl_base.h); computation is float32 and int64 only.
enum DType : int {
  kFloat = 0, kFloat16 = 1, kInt8 = 2, kInt32 = 3, kUInt8 = 4, kInt16 = 6,
  kInt64 = 9, kDouble = 11, kBool = 12, kBf16 = 27,
};
size_t dtype_size(int dtype);  // 0: not an aclDataType the sim knows
std::string dtype_name(int dtype);
constexpr size_t kMaxDims = 8;  // the most view dimensions aclCreateTensor takes

enum class Op { Add, Sub, Mul, Div, Neg, Abs, Exp, Mm };
// "aclnnAdd", "aclnnAddGetWorkspaceSize", and the symbol the launch's stream
// work is enqueued under ("aclnnAdd(stream)": fault injection counts the export alone).
const char* launch_symbol(Op);
const char* prepare_symbol(Op);
const char* stream_symbol(Op);

struct Tensor {
  std::vector<int64_t> dims, strides, storage;  // strides and offset in elements
  int dtype = kFloat;
  int64_t offset = 0;
  int format = 2;  // ACL_FORMAT_ND; others are accepted and ignored
  void* data = nullptr;  // the storage base, a device address
};

struct Scalar {
  int dtype = kFloat;
  unsigned char bytes[8] = {};
};

struct IntArray {
  std::vector<int64_t> values;
};

// One tensor argument of an executor: the view it was prepared with, and the
// storage base it uses (aclSet*TensorAddr replaces it on a repeatable one).
struct Operand {
  const aclTensor* handle = nullptr;  // the aclTensor given at GetWorkspaceSize
  const char* name = "";              // "self", "other", "mat2", "out"
  std::vector<int64_t> dims, strides;
  int64_t offset = 0;
  void* data = nullptr;
};
int64_t numel(const std::vector<int64_t>& dims);
// The elements [*lo, *hi] of the storage a non-empty view touches (relative
// to its base); false for an empty view or one whose extent overflows (*overflow).
bool extent(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, int64_t offset, int64_t* lo,
            int64_t* hi, bool* overflow);
std::string shape_text(const std::vector<int64_t>& dims);  // "[2,3]"

struct Executor {
  Op op = Op::Add;
  int dtype = kFloat;
  int device = 0;  // current at GetWorkspaceSize: the tensors' and the stream's device
  std::vector<Operand> in, out;
  double alpha_f = 1.0;  // add/sub's alpha, for float and for int64 tensors
  int64_t alpha_i = 1;
  uint64_t workspace = 0;  // what GetWorkspaceSize returned
  bool repeatable = false;
};

aclTensor* add_tensor(std::unique_ptr<Tensor> t);
bool find_tensor(const aclTensor* h, Tensor* copy);
bool remove_tensor(const aclTensor* h);
aclScalar* add_scalar(std::unique_ptr<Scalar> s);
bool find_scalar(const aclScalar* h, Scalar* copy);
bool remove_scalar(const aclScalar* h);
aclIntArray* add_int_array(std::unique_ptr<IntArray> a);
bool remove_int_array(const aclIntArray* h);

// Executors: every use holds the registry's lock (a launch, from its checks
// to its enqueue and the retirement of a single-use executor).
aclOpExecutor* add_executor(std::unique_ptr<Executor> e);
std::unique_lock<std::mutex> lock_executors();
Executor* find_executor(const aclOpExecutor* h);  // nullptr: not live
std::unique_ptr<Executor> take_executor(const aclOpExecutor* h);
bool executor_issued(const aclOpExecutor* h);      // a token this library handed out, live or gone

}  // namespace simrt_aclnn
