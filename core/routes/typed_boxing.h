// The boxing route without the Stack, for the operators a model calls most.
//
// The boxed route (boxing.h) serves any operator, at the price of boxing the
// call into a Stack on the way in (torch's BoxedKernelWrapper), unboxing it
// again for the target's kernel and back (0.13 µs of a tiny add's 0.8 µs
// over native on the host plugin).
// TypedBoxing<Op, target>::call has the operator's own C++ signature
// (at::_ops::<op>::schema), so torch calls it unboxed and it calls the
// target's kernel unboxed, with the same BoxingCall in between.
//
// Parameter types are mapped one by one (Param below): tensors, optional
// tensors, tensor lists, flagos Devices and Generators are boxed, anything
// else passes through. Returns: tensors (alone, in tuples, in vectors) are
// unboxed; a Tensor& return is the caller's own written argument.
#pragma once

#include <ATen/core/IListRef.h>
#include <ATen/core/Tensor.h>
#include <c10/util/SmallVector.h>

#include <atomic>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "device/runtime.h"
#include "routes/boxing_call.h"

namespace flagos::routes::typed {

// How one parameter of type A is held for the call (Held) and handed to the
// target's kernel (pass). The default passes the argument through.
template <class A>
struct Param {
  static_assert(!std::is_same_v<std::decay_t<A>, c10::List<std::optional<at::Tensor>>>,
                "a list of optional tensors has no typed boxing yet: leave the operator to the boxed route");
  using Held = A;
  static A box(BoxingCall&, A a) { return static_cast<A>(a); }
  static A pass(Held& h) { return static_cast<A>(h); }
};

template <>
struct Param<const at::Tensor&> {
  using Held = at::Tensor;
  static Held box(BoxingCall& c, const at::Tensor& t) { return c.box(t); }
  static const at::Tensor& pass(Held& h) { return h; }
};

// In-place self and out= arguments: the kernel may resize them.
template <>
struct Param<at::Tensor&> {
  using Held = at::Tensor;
  static Held box(BoxingCall& c, at::Tensor& t) { return c.box(t, /*written=*/true); }
  static at::Tensor& pass(Held& h) { return h; }
};

template <>
struct Param<const std::optional<at::Tensor>&> {
  using Held = std::optional<at::Tensor>;
  static Held box(BoxingCall& c, const std::optional<at::Tensor>& t) {
    return t && t->defined() ? Held(c.box(*t)) : t;
  }
  static const Held& pass(Held& h) { return h; }
};

// Tensor lists (foreach operators' operands, written in place without
// resizing: no sync back is needed).
template <>
struct Param<at::TensorList> {
  using Held = c10::SmallVector<at::Tensor, 8>;
  static Held box(BoxingCall& c, at::TensorList list) {
    Held held;
    held.reserve(list.size());
    c.reserve(list.size());
    for (const at::Tensor& t : list) held.push_back(c.box(t, /*written=*/false, /*in_list=*/true));
    return held;
  }
  static at::TensorList pass(Held& h) { return h; }
};

template <>
struct Param<const at::ITensorListRef&> {
  using Held = c10::SmallVector<at::Tensor, 8>;
  static Held box(BoxingCall& c, const at::ITensorListRef& list) {
    Held held;
    held.reserve(list.size());
    c.reserve(list.size());
    for (const at::Tensor& t : list) held.push_back(c.box(t, /*written=*/false, /*in_list=*/true));
    return held;
  }
  static at::ITensorListRef pass(Held& h) { return at::ITensorListRef(at::ArrayRef<at::Tensor>(h)); }
};

template <>
struct Param<std::optional<at::Device>> {
  using Held = std::optional<at::Device>;
  static Held box(BoxingCall& c, std::optional<at::Device> d) { return d ? Held(c.box(*d)) : d; }
  static Held pass(Held& h) { return h; }
};

template <>
struct Param<at::Device> {
  using Held = at::Device;
  static Held box(BoxingCall& c, at::Device d) { return c.box(d); }
  static Held pass(Held& h) { return h; }
};

template <>
struct Param<std::optional<at::Generator>> {
  using Held = std::optional<at::Generator>;
  static Held box(BoxingCall& c, std::optional<at::Generator> g) { return c.box_generator(g); }
  static Held pass(Held& h) { return h; }
};

// The flagos device of the first flagos tensor among the arguments.
template <class A>
void find_device(std::optional<c10::DeviceIndex>& found, const A& a) {
  using D = std::decay_t<A>;
  auto note = [&](const at::Tensor& t) {
    if (!found && aten::is_flagos(t)) found = t.device().index();
  };
  if constexpr (std::is_same_v<D, at::Tensor>) {
    note(a);
  } else if constexpr (std::is_same_v<D, std::optional<at::Tensor>>) {
    if (a) note(*a);
  } else if constexpr (std::is_same_v<D, at::TensorList> || std::is_same_v<D, at::ITensorListRef>) {
    for (const at::Tensor& t : a) note(t);
  } else if constexpr (std::is_same_v<D, std::optional<at::Device>> || std::is_same_v<D, at::Device>) {
    const std::optional<at::Device> d = a;
    if (!found && d && d->type() == c10::DeviceType::PrivateUse1 && d->has_index()) found = d->index();
  }
}

// Results: each tensor unboxed.
inline at::Tensor unbox_result(const BoxingCall& c, at::Tensor r) { return c.unbox(r); }
inline std::vector<at::Tensor> unbox_result(const BoxingCall& c, std::vector<at::Tensor> r) {
  for (at::Tensor& t : r) t = c.unbox(t);
  return r;
}
template <class T>
void unbox_element(const BoxingCall& c, T& x) {
  if constexpr (std::is_same_v<T, at::Tensor>) x = c.unbox(x);  // SymInts and the like stay
}
template <class... T>
std::tuple<T...> unbox_result(const BoxingCall& c, std::tuple<T...> r) {
  std::apply([&](auto&... x) { (unbox_element(c, x), ...); }, r);
  return r;
}

// Written once, at the first call, when FLAGOS_LOG has "dispatch".
struct FirstCallLog {
  std::string line;
  std::atomic<bool> done{false};
};
void log_first_call(FirstCallLog& log);

template <class Op, BoxingTarget Target, class Schema = typename Op::schema>
struct TypedBoxing;

template <class Op, BoxingTarget Target, class R, class... A>
struct TypedBoxing<Op, Target, R(A...)> {
  using Held = std::tuple<typename Param<A>::Held...>;
  using Indices = std::index_sequence_for<A...>;
  static constexpr c10::DispatchKey kKey = dispatch_key(Target);

  static inline FirstCallLog* log = nullptr;  // set at install, when logging
  static inline const OpTraits* traits = nullptr;  // set at install; else worked out at the first call

  static const OpTraits& op_traits() {
    if (traits) [[likely]] return *traits;
    static const OpTraits first_call(c10::Dispatcher::singleton().findSchemaOrThrow(Op::name, Op::overload_name));
    return first_call;
  }

  static R call(A... args) {
    if (log) [[unlikely]] log_first_call(*log);
    std::optional<c10::DeviceIndex> found;
    (find_device(found, args), ...);
    BoxingCall boxing(Target, found ? *found : static_cast<c10::DeviceIndex>(device::current_device()));
    Held held{Param<A>::box(boxing, args)...};  // braces: boxed left to right
    if (op_traits().dropout_arg >= 0) note_dropout(boxing, std::tuple<A&...>(args...), Indices{});
    if constexpr (std::is_void_v<R>) {
      boxing.run(op_traits(), [&] { invoke(held, Indices{}); });
    } else if constexpr (std::is_lvalue_reference_v<R>) {
      const at::Tensor* out = nullptr;
      boxing.run(op_traits(), [&] { out = &invoke(held, Indices{}); });
      return original_of(*out, held, std::tuple<A&...>(args...), Indices{});
    } else {
      R out;
      boxing.run(op_traits(), [&] { out = invoke(held, Indices{}); });
      return unbox_result(boxing, std::move(out));
    }
  }

 private:
  // The fused attention ops draw only for a nonzero dropout_p (OpTraits::dropout_arg).
  template <size_t... I>
  static void note_dropout(BoxingCall& boxing, const std::tuple<A&...>& args, std::index_sequence<I...>) {
    const int at = op_traits().dropout_arg;
    (note_dropout_at(boxing, static_cast<int>(I) == at, std::get<I>(args)), ...);
  }
  template <class T>
  static void note_dropout_at(BoxingCall& boxing, bool here, const T& value) {
    if constexpr (std::is_same_v<std::decay_t<T>, double>)
      if (here) boxing.note_dropout(value);
  }

  template <size_t... I>
  static decltype(auto) invoke(Held& held, std::index_sequence<I...>) {
    return Op::redispatch(c10::DispatchKeySet(kKey), Param<A>::pass(std::get<I>(held))...);
  }

  // The caller's argument whose alias the kernel returned (in-place self, out=).
  template <size_t... I>
  static R original_of(const at::Tensor& ret, Held& held, std::tuple<A&...> args, std::index_sequence<I...>) {
    at::Tensor* found = nullptr;
    auto check = [&](auto& h, auto& arg) {
      if constexpr (std::is_same_v<std::decay_t<decltype(arg)>, at::Tensor> &&
                    !std::is_const_v<std::remove_reference_t<decltype(arg)>>) {
        if (&h == &ret) found = &arg;
      }
    };
    (check(std::get<I>(held), std::get<I>(args)), ...);
    TORCH_INTERNAL_ASSERT(found, "[flagos] ", Op::name, ".", Op::overload_name,
                          ": the kernel returned none of its written arguments");
    return *found;
  }
};

}  // namespace flagos::routes::typed
