// Element-wise reference kernels: add, mul, relu, neg, abs, fill, copy.
// Inputs broadcast to out's shape; out must already have the result's shape
// (ATen would resize it: that is left to the next route).
#include <cmath>

#include "kernel_call.h"
#include "kernels.h"
#include "kit.h"

namespace flagos_host {
namespace {

constexpr ParamSpec kSelf{Param::kTensor, "self"};
constexpr ParamSpec kOut{Param::kTensor, "out"};

// An element-wise kernel's tensors, inputs seen at out's shape.
struct Operands {
  Elem elem{};  // out's element type
  View out;
  std::vector<View> in;
  bool stage = false;  // out shares memory with an input in another layout
};

flagos_status_t prepare(const char* fn, const KernelCall& c, size_t out, const Dims& result_shape,
                        std::initializer_list<size_t> inputs, Operands* o) {
  o->out = c.tensor(out);
  if (o->out.shape != result_shape) return unsupported(fn, "out does not have the result's shape");
  if (has_internal_overlap(o->out)) return unsupported(fn, "out has overlapping elements");
  for (size_t i : inputs) {
    View b;
    if (!broadcast_view(c.tensor(i), result_shape, &b))
      return unsupported(fn, "input %zu does not broadcast to out's shape", i);
    o->stage = o->stage || (overlaps(o->out, b) && !same_layout(o->out, b));
    o->in.push_back(std::move(b));
  }
  return FLAGOS_SUCCESS;
}

// out = op(in[0]), T the out type, S the input type.
template <class T, class S, class Op>
void map1(const Operands& o, Op op) {
  with_output(o.out, o.stage, [&](const View& dst) {
    for_each_offset<2>(dst.shape, {&dst.strides, &o.in[0].strides}, [&](const auto& off) {
      *dst.at<T>(off[0]) = op(*o.in[0].at<S>(off[1]));
    });
  });
}

// out = op(in[0], in[1]).
template <class T, class Op>
void map2(const Operands& o, Op op) {
  with_output(o.out, o.stage, [&](const View& dst) {
    const std::array<const Dims*, 3> strides{&dst.strides, &o.in[0].strides, &o.in[1].strides};
    for_each_offset<3>(dst.shape, strides, [&](const auto& off) {
      *dst.at<T>(off[0]) = op(*o.in[0].at<T>(off[1]), *o.in[1].at<T>(off[2]));
    });
  });
}

// self, other[, alpha], out: one dtype, out at the broadcast shape. Returns
// body(T{}, call, operands) for out's element type T.
template <class Body>
flagos_status_t run_binary(const char* fn, const flagos_kernel_call_t* call, bool has_alpha,
                           Body body) {
  return guarded(fn, [&] {
    KernelCall c;
    Operands o;
    const ParamSpec other{Param::kTensor, "other"};
    flagos_status_t st = has_alpha
        ? c.open(fn, call, {kSelf, other, {Param::kScalar, "alpha"}, kOut})
        : c.open(fn, call, {kSelf, other, kOut});
    const size_t out = has_alpha ? 3 : 2;
    if (st == FLAGOS_SUCCESS)
      st = common_elem(fn, {&c.tensor(0), &c.tensor(1), &c.tensor(out)}, &o.elem);
    Dims shape;
    if (st == FLAGOS_SUCCESS && !broadcast_shapes(c.tensor(0).shape, c.tensor(1).shape, &shape))
      st = unsupported(fn, "self and other do not broadcast");
    if (st == FLAGOS_SUCCESS) st = prepare(fn, c, out, shape, {0, 1}, &o);
    if (st != FLAGOS_SUCCESS) return st;
    return dispatch(o.elem, [&](auto tag) { return body(tag, c, o); });
  });
}

// self, out of one dtype and shape; op is generic over the element type.
template <class Op>
flagos_status_t run_unary(const char* fn, const flagos_kernel_call_t* call, Op op) {
  return guarded(fn, [&] {
    KernelCall c;
    Operands o;
    flagos_status_t st = c.open(fn, call, {kSelf, kOut});
    if (st == FLAGOS_SUCCESS) st = common_elem(fn, {&c.tensor(0), &c.tensor(1)}, &o.elem);
    if (st == FLAGOS_SUCCESS) st = prepare(fn, c, 1, c.tensor(0).shape, {0}, &o);
    if (st != FLAGOS_SUCCESS) return st;
    return dispatch(o.elem, [&](auto tag) {
      using T = decltype(tag);
      return c.enqueue(fn, [o, op] { map1<T, T>(o, [&](T x) { return T(op(x)); }); });
    });
  });
}

}  // namespace

flagos_status_t run_add_out(const flagos_kernel_call_t* call) {
  static const char* fn = "aten::add.out";
  return run_binary(fn, call, /*has_alpha=*/true,
                    [](auto tag, const KernelCall& c, const Operands& o) {
    using T = decltype(tag);
    if (c.arg(2).kind == FLAGOS_ARG_BOOL)  // ATen allows it for bool results only
      return unsupported(fn, "a boolean alpha");
    T alpha{};
    flagos_status_t st = scalar_arg(fn, c.arg(2), "alpha", &alpha);
    if (st != FLAGOS_SUCCESS) return st;
    return c.enqueue(fn, [o, alpha] {
      map2<T>(o, [alpha](T x, T y) { return add_wrap(x, mul_wrap(alpha, y)); });
    });
  });
}

flagos_status_t run_mul_out(const flagos_kernel_call_t* call) {
  static const char* fn = "aten::mul.out";
  return run_binary(fn, call, /*has_alpha=*/false,
                    [](auto tag, const KernelCall& c, const Operands& o) {
    using T = decltype(tag);
    return c.enqueue(fn, [o] { map2<T>(o, [](T x, T y) { return mul_wrap(x, y); }); });
  });
}

flagos_status_t run_relu_out(const flagos_kernel_call_t* call) {
  // clamp_min(x, 0): NaN stays NaN.
  return run_unary("aten::relu.out", call, [](auto x) { return x > 0 || x != x ? x : 0; });
}

flagos_status_t run_neg_out(const flagos_kernel_call_t* call) {
  return run_unary("aten::neg.out", call, [](auto x) { return neg_wrap(x); });
}

flagos_status_t run_abs_out(const flagos_kernel_call_t* call) {
  return run_unary("aten::abs.out", call, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) return std::fabs(x);
    else return x < 0 ? neg_wrap(x) : x;
  });
}

flagos_status_t run_fill_scalar_out(const flagos_kernel_call_t* call) {
  static const char* fn = "aten::fill.Scalar_out";
  return guarded(fn, [&] {
    KernelCall c;
    Operands o;
    flagos_status_t st = c.open(fn, call, {kSelf, {Param::kScalar, "value"}, kOut});
    if (st == FLAGOS_SUCCESS) st = common_elem(fn, {&c.tensor(0), &c.tensor(2)}, &o.elem);
    if (st == FLAGOS_SUCCESS) st = prepare(fn, c, 2, c.tensor(0).shape, {}, &o);
    if (st != FLAGOS_SUCCESS) return st;
    return dispatch(o.elem, [&](auto tag) {
      using T = decltype(tag);
      T value{};
      flagos_status_t s = scalar_arg(fn, c.arg(1), "value", &value);
      return s != FLAGOS_SUCCESS ? s : c.enqueue(fn, [out = o.out, value] {
        for_each_offset<1>(out.shape, {&out.strides},
                           [&](const auto& off) { *out.at<T>(off[0]) = value; });
      });
    });
  });
}

flagos_status_t run_copy_out(const flagos_kernel_call_t* call) {
  static const char* fn = "aten::copy.out";
  return guarded(fn, [&] {
    KernelCall c;
    Operands o;
    Elem src_elem{};
    flagos_status_t st =
        c.open(fn, call, {kSelf, {Param::kTensor, "src"}, {Param::kBool, "non_blocking"}, kOut});
    if (st == FLAGOS_SUCCESS) st = common_elem(fn, {&c.tensor(0), &c.tensor(3)}, &o.elem);
    if (st == FLAGOS_SUCCESS) st = common_elem(fn, {&c.tensor(1)}, &src_elem);
    // A float outside int64's range has no defined conversion in C++.
    if (st == FLAGOS_SUCCESS && o.elem == Elem::kInt64 && src_elem != Elem::kInt64)
      st = unsupported(fn, "a floating src into an integer out");
    if (st == FLAGOS_SUCCESS) st = prepare(fn, c, 3, c.tensor(0).shape, {1}, &o);
    if (st != FLAGOS_SUCCESS) return st;
    return dispatch(o.elem, [&](auto t) {
      return dispatch(src_elem, [&](auto s) {
        using T = decltype(t);
        using S = decltype(s);
        return c.enqueue(fn, [o] { map1<T, S>(o, [](S x) { return static_cast<T>(x); }); });
      });
    });
  });
}

}  // namespace flagos_host
