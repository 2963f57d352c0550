#include "aclnn_kernels.h"

#include <cmath>
#include <cstring>

namespace simrt_aclnn {
namespace {

// By memcpy: a storage base need not be aligned to its element size.
template <class T>
T load(const View& v, int64_t off) {
  T x;
  std::memcpy(&x, v.rw + off * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return x;
}

template <class T>
void store(const View& v, int64_t off, T x) {
  std::memcpy(v.rw + off * static_cast<int64_t>(sizeof(T)), &x, sizeof(T));
}

// In's strides against out's dims: right-aligned, 0 where in has no such
// dimension or a size-1 one (numpy broadcasting; the launch checked shapes).
std::vector<int64_t> broadcast_strides(const View& in, const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 0);
  const size_t lead = dims.size() - in.dims.size();
  for (size_t i = 0; i < in.dims.size(); ++i)
    s[lead + i] = in.dims[i] == 1 && dims[lead + i] != 1 ? 0 : in.strides[i];
  return s;
}

// f(args) for every element of out, args read from the inputs at the same
// (broadcast) index; the offsets walk an odometer over out's dims.
template <class T, class F>
void each(const std::vector<View>& in, const View& out, F f) {
  const std::vector<int64_t>& dims = out.dims;
  const int64_t total = numel(dims);
  if (total == 0) return;
  const size_t n = in.size(), r = dims.size();
  std::vector<std::vector<int64_t>> strides{out.strides};
  std::vector<int64_t> off{out.first};
  for (const View& v : in) {
    strides.push_back(broadcast_strides(v, dims));
    off.push_back(v.first);
  }
  std::vector<int64_t> idx(r, 0);
  T args[2] = {};
  for (int64_t e = 0; e < total; ++e) {
    for (size_t i = 0; i < n; ++i) args[i] = load<T>(in[i], off[i + 1]);
    store<T>(out, off[0], f(args));
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < dims[d]) {
        for (size_t k = 0; k <= n; ++k) off[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k <= n; ++k) off[k] -= strides[k][d] * (dims[d] - 1);
      idx[d] = 0;
    }
  }
}

// int64 arithmetic wraps (two's complement), as the hardware's does, never UB.
int64_t wrap(uint64_t x) { return static_cast<int64_t>(x); }
uint64_t u(int64_t x) { return static_cast<uint64_t>(x); }

void elementwise_float(Op op, const std::vector<View>& in, const View& out, const Scalars& s) {
  const float alpha = static_cast<float>(s.alpha_f);
  switch (op) {
    case Op::Add: return each<float>(in, out, [alpha](const float* a) { return a[0] + alpha * a[1]; });
    case Op::Sub: return each<float>(in, out, [alpha](const float* a) { return a[0] - alpha * a[1]; });
    case Op::Mul: return each<float>(in, out, [](const float* a) { return a[0] * a[1]; });
    case Op::Div: return each<float>(in, out, [](const float* a) { return a[0] / a[1]; });
    case Op::Neg: return each<float>(in, out, [](const float* a) { return -a[0]; });
    case Op::Abs: return each<float>(in, out, [](const float* a) { return std::fabs(a[0]); });
    case Op::Exp: return each<float>(in, out, [](const float* a) { return std::exp(a[0]); });
    case Op::Mm: break;
  }
}

void elementwise_int64(Op op, const std::vector<View>& in, const View& out, const Scalars& s) {
  const uint64_t alpha = u(s.alpha_i);
  switch (op) {
    case Op::Add: return each<int64_t>(in, out, [alpha](const int64_t* a) { return wrap(u(a[0]) + alpha * u(a[1])); });
    case Op::Sub: return each<int64_t>(in, out, [alpha](const int64_t* a) { return wrap(u(a[0]) - alpha * u(a[1])); });
    case Op::Mul: return each<int64_t>(in, out, [](const int64_t* a) { return wrap(u(a[0]) * u(a[1])); });
    case Op::Neg: return each<int64_t>(in, out, [](const int64_t* a) { return wrap(0 - u(a[0])); });
    case Op::Abs: return each<int64_t>(in, out, [](const int64_t* a) { return a[0] < 0 ? wrap(0 - u(a[0])) : a[0]; });
    default: break;  // GetWorkspaceSize refused the rest for int64
  }
}

void mm(const std::vector<View>& in, const View& out, char* workspace) {
  const View& a = in[0];
  const View& b = in[1];
  const int64_t n = a.dims[0], k = a.dims[1], m = b.dims[1];
  View ws;
  ws.rw = workspace;
  ws.dims = {n, m};
  ws.strides = {m, 1};
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      store<float>(ws, i * m + j, 0.0f);
      for (int64_t p = 0; p < k; ++p) {
        const float x = load<float>(a, a.first + i * a.strides[0] + p * a.strides[1]);
        const float y = load<float>(b, b.first + p * b.strides[0] + j * b.strides[1]);
        store<float>(ws, i * m + j, load<float>(ws, i * m + j) + x * y);
      }
    }
  }
  each<float>({ws}, out, [](const float* x) { return x[0]; });
}

}  // namespace

void compute(Op op, int dtype, const std::vector<View>& in, const View& out, const Scalars& s, char* workspace) {
  if (op == Op::Mm) return mm(in, out, workspace);
  if (dtype == kFloat) return elementwise_float(op, in, out, s);
  elementwise_int64(op, in, out, s);
}

}  // namespace simrt_aclnn
