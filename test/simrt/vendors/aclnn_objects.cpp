#include "aclnn_objects.h"

#include <unordered_map>

namespace simrt_aclnn {
namespace {

// Token ranges, disjoint from each other and from the engine's stream
// (0x51…) and event (0x5e…) handles.
constexpr uintptr_t kTensorBase = 0x5a00000000000;
constexpr uintptr_t kScalarBase = 0x5b00000000000;
constexpr uintptr_t kIntArrayBase = 0x5c00000000000;
constexpr uintptr_t kExecutorBase = 0x5d00000000000;

template <class T>
class Registry {
 public:
  explicit Registry(uintptr_t base) : base_(base) {}
  std::mutex mu;  // held by the caller of every member below

  void* add(std::unique_ptr<T> p) {
    const uintptr_t h = base_ + 16 * next_++;
    live_[h] = std::move(p);
    return reinterpret_cast<void*>(h);
  }
  T* find(const void* h) {
    auto it = live_.find(reinterpret_cast<uintptr_t>(h));
    return it == live_.end() ? nullptr : it->second.get();
  }
  std::unique_ptr<T> take(const void* h) {
    auto it = live_.find(reinterpret_cast<uintptr_t>(h));
    if (it == live_.end()) return nullptr;
    std::unique_ptr<T> p = std::move(it->second);
    live_.erase(it);
    return p;
  }
  bool issued(const void* h) const {
    const uintptr_t a = reinterpret_cast<uintptr_t>(h);
    return a > base_ && (a - base_) % 16 == 0 && (a - base_) / 16 < next_;
  }

 private:
  uintptr_t base_;
  uint64_t next_ = 1;
  std::unordered_map<uintptr_t, std::unique_ptr<T>> live_;
};

// Leaked: a stream's host function may run after static destructors.
Registry<Tensor>& tensors() {
  static auto* r = new Registry<Tensor>(kTensorBase);
  return *r;
}
Registry<Scalar>& scalars() {
  static auto* r = new Registry<Scalar>(kScalarBase);
  return *r;
}
Registry<IntArray>& int_arrays() {
  static auto* r = new Registry<IntArray>(kIntArrayBase);
  return *r;
}
Registry<Executor>& executors() {
  static auto* r = new Registry<Executor>(kExecutorBase);
  return *r;
}

template <class H, class T>
H* add(Registry<T>& r, std::unique_ptr<T> p) {
  std::lock_guard<std::mutex> lock(r.mu);
  return static_cast<H*>(r.add(std::move(p)));
}

template <class T>
bool find(Registry<T>& r, const void* h, T* copy) {
  std::lock_guard<std::mutex> lock(r.mu);
  const T* p = r.find(h);
  if (p != nullptr) *copy = *p;
  return p != nullptr;
}

template <class T>
bool remove(Registry<T>& r, const void* h) {
  std::lock_guard<std::mutex> lock(r.mu);
  return r.take(h) != nullptr;
}

}  // namespace

size_t dtype_size(int dtype) {
  switch (dtype) {
    case kFloat: case kInt32: return 4;
    case kFloat16: case kInt16: case kBf16: return 2;
    case kInt8: case kUInt8: case kBool: return 1;
    case kInt64: case kDouble: return 8;
    default: return 0;
  }
}

std::string dtype_name(int dtype) {
  switch (dtype) {
    case kFloat: return "ACL_FLOAT";
    case kFloat16: return "ACL_FLOAT16";
    case kInt8: return "ACL_INT8";
    case kInt32: return "ACL_INT32";
    case kUInt8: return "ACL_UINT8";
    case kInt16: return "ACL_INT16";
    case kInt64: return "ACL_INT64";
    case kDouble: return "ACL_DOUBLE";
    case kBool: return "ACL_BOOL";
    case kBf16: return "ACL_BF16";
    default: return "aclDataType " + std::to_string(dtype);
  }
}

namespace {
struct OpNames {
  const char* launch;
  const char* prepare;
  const char* stream;
};
#define SIMRT_ACLNN_NAMES(N) {"aclnn" #N, "aclnn" #N "GetWorkspaceSize", "aclnn" #N "(stream)"}
const OpNames kNames[] = {SIMRT_ACLNN_NAMES(Add), SIMRT_ACLNN_NAMES(Sub), SIMRT_ACLNN_NAMES(Mul),
                          SIMRT_ACLNN_NAMES(Div), SIMRT_ACLNN_NAMES(Neg), SIMRT_ACLNN_NAMES(Abs),
                          SIMRT_ACLNN_NAMES(Exp), SIMRT_ACLNN_NAMES(Mm)};
#undef SIMRT_ACLNN_NAMES
}  // namespace

const char* launch_symbol(Op op) { return kNames[static_cast<int>(op)].launch; }
const char* prepare_symbol(Op op) { return kNames[static_cast<int>(op)].prepare; }
const char* stream_symbol(Op op) { return kNames[static_cast<int>(op)].stream; }

int64_t numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;  // aclCreateTensor bounded every extent
  return n;
}

bool extent(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, int64_t offset, int64_t* lo,
            int64_t* hi, bool* overflow) {
  *overflow = false;
  __int128 l = offset, h = offset;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) return false;
    const __int128 span = static_cast<__int128>(strides[i]) * (dims[i] - 1);
    (span < 0 ? l : h) += span;
  }
  // Byte offsets must fit too: keep the elements well inside int64.
  constexpr __int128 kLimit = static_cast<__int128>(1) << 59;
  if (l < -kLimit || h > kLimit) {
    *overflow = true;
    return false;
  }
  *lo = static_cast<int64_t>(l);
  *hi = static_cast<int64_t>(h);
  return true;
}

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

aclTensor* add_tensor(std::unique_ptr<Tensor> t) { return add<aclTensor>(tensors(), std::move(t)); }
bool find_tensor(const aclTensor* h, Tensor* copy) { return find(tensors(), h, copy); }
bool remove_tensor(const aclTensor* h) { return remove(tensors(), h); }
aclScalar* add_scalar(std::unique_ptr<Scalar> s) { return add<aclScalar>(scalars(), std::move(s)); }
bool find_scalar(const aclScalar* h, Scalar* copy) { return find(scalars(), h, copy); }
bool remove_scalar(const aclScalar* h) { return remove(scalars(), h); }
aclIntArray* add_int_array(std::unique_ptr<IntArray> a) { return add<aclIntArray>(int_arrays(), std::move(a)); }
bool remove_int_array(const aclIntArray* h) { return remove(int_arrays(), h); }

aclOpExecutor* add_executor(std::unique_ptr<Executor> e) { return add<aclOpExecutor>(executors(), std::move(e)); }
std::unique_lock<std::mutex> lock_executors() { return std::unique_lock<std::mutex>(executors().mu); }
Executor* find_executor(const aclOpExecutor* h) { return executors().find(h); }
std::unique_ptr<Executor> take_executor(const aclOpExecutor* h) { return executors().take(h); }
bool executor_issued(const aclOpExecutor* h) { return executors().issued(h); }

}  // namespace simrt_aclnn
