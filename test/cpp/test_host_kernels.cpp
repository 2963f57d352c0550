// The host plugin's reference kernels (FLAGOS_EXTENSION_KERNELS): each runs on
// device memory filled through memcpy and is compared with values computed
// here from the same inputs, in plain and strict mode (strict: device memory
// is PROT_NONE outside the plugin, so a kernel must use the plugin's alias).
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

#include "catch.hpp"
#include "plugin/loader.h"
#include "test_support.h"

using flagos::plugin::Plugin;
namespace fs = std::filesystem;

namespace flagos::test {
// The host plugin with strict=1 (test_caching_allocator.cpp).
std::shared_ptr<const plugin::Plugin> memory_test_plugin();
}  // namespace flagos::test

namespace {

using Dims = std::vector<int64_t>;

// The host plugin in plain mode. Loaded from its own copy of the library:
// the plugin fixes its options at the first load of a file in a process.
std::shared_ptr<const Plugin> plain_plugin() {
  static const std::shared_ptr<const Plugin> loaded = [] {
    const fs::path dir =
        fs::temp_directory_path() / ("flagos_kernels_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path copy = dir / "libflagos_host.so";
    fs::copy_file(flagos::test::host_plugin(), copy, fs::copy_options::overwrite_existing);
    auto p = flagos::plugin::load({"host", copy.string(), flagos::plugin::Origin::BuildDir},
                                  {{"memory_mb", "64"}});
    fs::remove_all(dir);  // the mapping outlives the file
    return p;
  }();
  return loaded;
}

// Runs `body` against the plain and the strict plugin.
void each_mode(const std::function<void(const Plugin&)>& body) {
  for (bool strict : {false, true}) {
    INFO((strict ? "strict mode" : "plain mode"));
    body(strict ? *flagos::test::memory_test_plugin() : *plain_plugin());
  }
}

template <class T>
flagos_dtype_t dtype_of() {
  if constexpr (std::is_floating_point_v<T>) return {FLAGOS_DTYPE_FLOAT, sizeof(T) * 8, 1};
  else return {FLAGOS_DTYPE_INT, sizeof(T) * 8, 1};
}

Dims row_major(const Dims& shape) {
  Dims s(shape.size());
  int64_t step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    s[d] = step;
    step *= shape[d];
  }
  return s;
}

// Calls f(index) for every index of `shape` (once for a 0-dim shape).
void each_index(const Dims& shape, const std::function<void(const Dims&)>& f) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  for (int64_t k = 0; k < n; ++k) {
    Dims idx(shape.size());
    int64_t rest = k;
    for (size_t d = shape.size(); d-- > 0;) {
      idx[d] = rest % shape[d];
      rest /= shape[d];
    }
    f(idx);
  }
}

// A device allocation holding `storage` and a strided view of it.
template <class T>
struct DevTensor {
  const Plugin& p;
  std::vector<T> host;  // what was uploaded
  Dims shape, strides;
  int64_t offset;
  void* data = nullptr;
  flagos_tensor_desc_t desc{};

  DevTensor(const Plugin& plugin, std::vector<T> storage, Dims shape_, Dims strides_ = {},
            int64_t offset_ = 0, int32_t device = 0)
      : p(plugin), host(std::move(storage)), shape(std::move(shape_)),
        strides(strides_.empty() && !shape.empty() ? row_major(shape) : std::move(strides_)),
        offset(offset_) {
    const size_t bytes = host.size() * sizeof(T);
    p.check(p.api().mem_alloc(device, bytes, &data), "mem_alloc");
    p.check(p.api().memcpy_sync(data, host.data(), bytes, FLAGOS_MEMCPY_HOST_TO_DEVICE), "h2d");
    desc.struct_size = sizeof desc;
    desc.data = data;
    desc.byte_offset = uint64_t(offset) * sizeof(T);
    desc.dtype = dtype_of<T>();
    desc.device = device;
    desc.ndim = int32_t(shape.size());
    desc.shape = shape.data();
    desc.strides = strides.data();
  }
  ~DevTensor() { p.api().mem_free(desc.device, data); }

  // Storage position of a logical index.
  int64_t pos(const Dims& idx) const {
    int64_t at = offset;
    for (size_t d = 0; d < idx.size(); ++d) at += idx[d] * strides[d];
    return at;
  }
  T operator()(const Dims& idx) const { return host[size_t(pos(idx))]; }
  // The device storage now (after the default stream's work).
  std::vector<T> download() const {
    std::vector<T> out(host.size());
    p.check(p.api().memcpy_sync(out.data(), data, out.size() * sizeof(T),
                                FLAGOS_MEMCPY_DEVICE_TO_HOST),
            "d2h");
    return out;
  }
};

// Some distinct values of both signs, not all representable in float exactly.
template <class T>
std::vector<T> values(size_t n, int seed = 1) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t k = int64_t((i * 7 + size_t(seed) * 13) % 23) - 11;
    v[i] = std::is_floating_point_v<T> ? T(k) / T(3) : T(k);
  }
  return v;
}

template <class T>
bool close(T got, T want) {
  if constexpr (std::is_integral_v<T>) return got == want;
  else if (std::isnan(want)) return std::isnan(got);
  else return std::fabs(got - want) <= 1e-5 * std::max<T>(1, std::fabs(want));
}

// Every element of `out`'s view equals want(index); the rest of its storage
// keeps what was uploaded.
template <class T>
void check_out(const DevTensor<T>& out, const std::function<T(const Dims&)>& want) {
  std::vector<T> got = out.download();
  std::vector<T> expected = out.host;
  each_index(out.shape, [&](const Dims& idx) { expected[size_t(out.pos(idx))] = want(idx); });
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("storage element " << i);
    CHECK(close(got[i], expected[i]));
  }
}

flagos_kernel_arg_t tensor(const flagos_tensor_desc_t& d) {
  flagos_kernel_arg_t a{};
  a.kind = FLAGOS_ARG_TENSOR;
  a.v.tensor = &d;
  return a;
}
template <class T>
flagos_kernel_arg_t tensor(const DevTensor<T>& t) { return tensor(t.desc); }
flagos_kernel_arg_t integer(int64_t i, int32_t kind = FLAGOS_ARG_INT) {
  flagos_kernel_arg_t a{};
  a.kind = kind;
  a.v.i = i;
  return a;
}
flagos_kernel_arg_t boolean(bool b) { return integer(b, FLAGOS_ARG_BOOL); }
flagos_kernel_arg_t real(double f) {
  flagos_kernel_arg_t a{};
  a.kind = FLAGOS_ARG_DOUBLE;
  a.v.f = f;
  return a;
}
flagos_kernel_arg_t none() { return integer(0, FLAGOS_ARG_NONE); }
flagos_kernel_arg_t ints(const Dims& v) {
  flagos_kernel_arg_t a{};
  a.kind = FLAGOS_ARG_INT_LIST;
  a.v.ints = {v.data(), v.size()};
  return a;
}

const flagos_kernels_ext_t& kernels(const Plugin& p) {
  auto* ext = reinterpret_cast<const flagos_kernels_ext_t*>(
      p.find_extension(FLAGOS_EXTENSION_KERNELS));
  REQUIRE(ext != nullptr);
  return *ext;
}

// The kernel whose schema starts with `name` + "(", e.g. "aten::add.out".
const flagos_kernel_t& kernel(const Plugin& p, const std::string& name) {
  const flagos_kernels_ext_t& ext = kernels(p);
  for (size_t i = 0; i < ext.num_kernels; ++i)
    if (std::string(ext.kernels[i]->schema).rfind(name + "(", 0) == 0) return *ext.kernels[i];
  FAIL("no kernel " << name);
  throw;  // unreachable
}

flagos_stream_t default_stream(const Plugin& p, int32_t device = 0) {
  flagos_stream_t s = nullptr;
  p.check(p.api().get_default_stream(device, &s), "get_default_stream");
  return s;
}

// Calls the kernel on device 0's default stream (unless `stream` is given).
flagos_status_t call(const Plugin& p, const std::string& name,
                     std::vector<flagos_kernel_arg_t> args, flagos_stream_t stream = nullptr) {
  flagos_kernel_call_t c{};
  c.struct_size = sizeof c;
  c.device = 0;
  c.stream = stream ? stream : default_stream(p);
  c.num_args = args.size();
  c.args = args.data();
  return kernel(p, name).run(&c);
}

void run_ok(const Plugin& p, const std::string& name, std::vector<flagos_kernel_arg_t> args) {
  flagos_status_t st = call(p, name, std::move(args));
  INFO(name << ": " << p.api().last_error_message());
  REQUIRE(st == FLAGOS_SUCCESS);
}

}  // namespace

TEST_CASE("the kernels extension lists well-formed out= kernels", "[host_kernels]") {
  const flagos_kernels_ext_t& ext = kernels(*plain_plugin());
  CHECK(ext.base.struct_size == sizeof(flagos_kernels_ext_t));
  CHECK(ext.base.version == FLAGOS_KERNELS_EXT_VERSION);
  std::set<std::string> names;
  for (size_t i = 0; i < ext.num_kernels; ++i) {
    const flagos_kernel_t* k = ext.kernels[i];
    REQUIRE(k != nullptr);
    const std::string schema = k->schema;
    INFO(schema);
    CHECK(k->struct_size == sizeof(flagos_kernel_t));
    CHECK(k->run != nullptr);
    CHECK(schema.rfind("aten::", 0) == 0);
    CHECK(schema.find("Tensor(a!) out) -> Tensor(a!)") != std::string::npos);
    names.insert(schema.substr(0, schema.find('(')));
  }
  CHECK(names == std::set<std::string>{"aten::add.out", "aten::mul.out", "aten::relu.out",
                                       "aten::neg.out", "aten::abs.out", "aten::fill.Scalar_out",
                                       "aten::copy.out", "aten::sum.IntList_out", "aten::mm.out"});
  // The testing extension is still reachable behind it.
  CHECK(plain_plugin()->find_extension(FLAGOS_EXTENSION_TESTING) != nullptr);
}

TEST_CASE("add.out computes self + alpha * other for every dtype", "[host_kernels]") {
  each_mode([](const Plugin& p) {
    auto check = [&](auto tag, flagos_kernel_arg_t alpha, auto alpha_value) {
      using T = decltype(tag);
      DevTensor<T> a(p, values<T>(6, 1), {2, 3}), b(p, values<T>(6, 2), {2, 3});
      DevTensor<T> out(p, std::vector<T>(6, T(99)), {2, 3});
      run_ok(p, "aten::add.out", {tensor(a), tensor(b), alpha, tensor(out)});
      check_out<T>(out, [&](const Dims& i) { return T(a(i) + T(alpha_value) * b(i)); });
    };
    check(float{}, integer(2), 2);
    check(double{}, real(-0.5), -0.5);
    check(int64_t{}, integer(3), 3);
  });
}

TEST_CASE("add.out and mul.out broadcast their inputs to out's shape", "[host_kernels]") {
  each_mode([](const Plugin& p) {
    DevTensor<double> col(p, values<double>(3, 1), {3, 1}), row(p, values<double>(4, 2), {4});
    DevTensor<double> scalar(p, {2.5}, {});
    DevTensor<double> sum(p, std::vector<double>(12), {3, 4}), prod(p, std::vector<double>(3), {3, 1});
    run_ok(p, "aten::add.out", {tensor(col), tensor(row), integer(1), tensor(sum)});
    check_out<double>(sum, [&](const Dims& i) { return col({i[0], 0}) + row({i[1]}); });
    run_ok(p, "aten::mul.out", {tensor(col), tensor(scalar), tensor(prod)});
    check_out<double>(prod, [&](const Dims& i) { return col(i) * scalar({}); });
  });
}

TEST_CASE("mul.out reads and writes transposed tensors through their strides",
          "[host_kernels]") {
  each_mode([](const Plugin& p) {
    // [3, 2] views of [2, 3] storages (strides 1, 3), and an out of another layout.
    DevTensor<float> a(p, values<float>(6, 1), {3, 2}, {1, 3});
    DevTensor<float> b(p, values<float>(8, 2), {3, 2}, {1, 3}, /*offset=*/2);
    DevTensor<float> out(p, std::vector<float>(12, -1.f), {3, 2}, {4, 1}, /*offset=*/1);
    run_ok(p, "aten::mul.out", {tensor(a), tensor(b), tensor(out)});
    check_out<float>(out, [&](const Dims& i) { return a(i) * b(i); });
  });
}

TEST_CASE("0-dim tensors are one element", "[host_kernels]") {
  each_mode([](const Plugin& p) {
    DevTensor<float> a(p, {1.25f}, {}), b(p, {-4.f}, {}), out(p, {0.f}, {});
    run_ok(p, "aten::add.out", {tensor(a), tensor(b), real(2.0), tensor(out)});
    check_out<float>(out, [&](const Dims&) { return a({}) + 2.f * b({}); });
    DevTensor<float> total(p, {0.f}, {});
    run_ok(p, "aten::sum.IntList_out", {tensor(b), none(), boolean(false), none(), tensor(total)});
    check_out<float>(total, [&](const Dims&) { return b({}); });
    run_ok(p, "aten::fill.Scalar_out", {tensor(out), integer(7), tensor(out)});
    check_out<float>(out, [](const Dims&) { return 7.f; });
  });
}

TEST_CASE("relu, neg and abs map every element of a strided input", "[host_kernels]") {
  each_mode([](const Plugin& p) {
    std::vector<double> in = values<double>(12, 3);
    in[4] = std::numeric_limits<double>::quiet_NaN();
    DevTensor<double> x(p, in, {3, 2}, {4, 2}, 1);  // every other element of a [3, 4] grid
    for (const char* op : {"aten::relu.out", "aten::neg.out", "aten::abs.out"}) {
      INFO(op);
      DevTensor<double> out(p, std::vector<double>(6), {3, 2});
      run_ok(p, op, {tensor(x), tensor(out)});
      check_out<double>(out, [&](const Dims& i) {
        double v = x(i);
        if (std::string(op) == "aten::neg.out") return -v;
        if (std::string(op) == "aten::abs.out") return std::fabs(v);
        return std::isnan(v) || v > 0 ? v : 0.0;
      });
    }
    const int64_t lowest = std::numeric_limits<int64_t>::min();
    DevTensor<int64_t> ix(p, {-3, lowest, 5}, {3}), iout(p, std::vector<int64_t>(3), {3});
    run_ok(p, "aten::abs.out", {tensor(ix), tensor(iout)});
    check_out<int64_t>(iout, [&](const Dims& i) { return ix(i) == lowest ? lowest : std::abs(ix(i)); });
  });
}

TEST_CASE("fill.Scalar_out writes only the elements of a strided out", "[host_kernels]") {
  each_mode([](const Plugin& p) {
    DevTensor<int64_t> out(p, values<int64_t>(10), {2, 2}, {5, 2}, 1);
    run_ok(p, "aten::fill.Scalar_out", {tensor(out), integer(-9), tensor(out)});
    check_out<int64_t>(out, [](const Dims&) { return int64_t{-9}; });
    DevTensor<double> d(p, std::vector<double>(4), {4});
    run_ok(p, "aten::fill.Scalar_out", {tensor(d), boolean(true), tensor(d)});
    check_out<double>(d, [](const Dims&) { return 1.0; });
  });
}

TEST_CASE("copy.out broadcasts src and converts its dtype", "[host_kernels]") {
  each_mode([](const Plugin& p) {
    DevTensor<float> self(p, std::vector<float>(6), {2, 3}), out(p, std::vector<float>(6), {2, 3});
    DevTensor<double> src(p, values<double>(3), {3});
    run_ok(p, "aten::copy.out", {tensor(self), tensor(src), boolean(false), tensor(out)});
    check_out<float>(out, [&](const Dims& i) { return float(src({i[1]})); });
    DevTensor<int64_t> isrc(p, values<int64_t>(6), {3, 2}, {1, 3});
    DevTensor<double> dself(p, std::vector<double>(6), {3, 2}), dout(p, std::vector<double>(6), {3, 2});
    run_ok(p, "aten::copy.out", {tensor(dself), tensor(isrc), boolean(true), tensor(dout)});
    check_out<double>(dout, [&](const Dims& i) { return double(isrc(i)); });
  });
}

TEST_CASE("sum.IntList_out reduces listed, negative or all dims, with keepdim",
          "[host_kernels]") {
  each_mode([](const Plugin& p) {
    DevTensor<double> x(p, values<double>(24), {2, 3, 4}, {1, 8, 2});  // permuted strides
    auto sum_over = [&](const std::set<size_t>& dims, const Dims& keep_idx) {
      double s = 0;
      each_index(x.shape, [&](const Dims& i) {
        for (size_t d = 0; d < 3; ++d)
          if (!dims.count(d) && i[d] != keep_idx[d]) return;
        s += x(i);
      });
      return s;
    };
    Dims dim1{1}, neg{-1, 0}, empty;
    DevTensor<double> o1(p, std::vector<double>(8), {2, 4});
    run_ok(p, "aten::sum.IntList_out", {tensor(x), ints(dim1), boolean(false), none(), tensor(o1)});
    check_out<double>(o1, [&](const Dims& i) { return sum_over({1}, {i[0], 0, i[1]}); });
    DevTensor<double> o2(p, std::vector<double>(3), {1, 3, 1});
    run_ok(p, "aten::sum.IntList_out", {tensor(x), ints(neg), boolean(true), none(), tensor(o2)});
    check_out<double>(o2, [&](const Dims& i) { return sum_over({0, 2}, {0, i[1], 0}); });
    DevTensor<double> all(p, {0.0}, {});
    run_ok(p, "aten::sum.IntList_out", {tensor(x), ints(empty), boolean(false), none(), tensor(all)});
    check_out<double>(all, [&](const Dims&) { return sum_over({0, 1, 2}, {0, 0, 0}); });
    DevTensor<int64_t> ix(p, values<int64_t>(6), {2, 3}), isum(p, {0, 0}, {2});
    run_ok(p, "aten::sum.IntList_out", {tensor(ix), integer(1), boolean(false), none(), tensor(isum)});
    check_out<int64_t>(isum, [&](const Dims& i) { return ix({i[0], 0}) + ix({i[0], 1}) + ix({i[0], 2}); });
  });
}

TEST_CASE("mm.out multiplies matrices of any strides", "[host_kernels]") {
  each_mode([](const Plugin& p) {
    auto check = [&](auto tag) {
      using T = decltype(tag);
      DevTensor<T> a(p, values<T>(6, 1), {2, 3});
      DevTensor<T> b(p, values<T>(12, 2), {3, 4}, {1, 3});  // transposed [4, 3]
      DevTensor<T> out(p, std::vector<T>(8), {2, 4}, {1, 2});
      run_ok(p, "aten::mm.out", {tensor(a), tensor(b), tensor(out)});
      check_out<T>(out, [&](const Dims& i) {
        T s = 0;
        for (int64_t k = 0; k < 3; ++k) s += a({i[0], k}) * b({k, i[1]});
        return s;
      });
    };
    check(float{});
    check(double{});
    check(int64_t{});
  });
}

TEST_CASE("an out that overlaps its inputs gets the result of the inputs as they were",
          "[host_kernels]") {
  each_mode([](const Plugin& p) {
    // In place: out is self.
    DevTensor<float> x(p, values<float>(4), {4});
    DevTensor<float> y(p, values<float>(4, 5), {4});
    run_ok(p, "aten::add.out", {tensor(x), tensor(y), integer(1), tensor(x)});
    check_out<float>(x, [&](const Dims& i) { return x(i) + y(i); });
    // Shifted: out is storage [1, 5), self storage [0, 4) of the same allocation.
    DevTensor<double> s(p, values<double>(5), {4});
    flagos_tensor_desc_t shifted = s.desc;
    shifted.byte_offset = sizeof(double);
    run_ok(p, "aten::mul.out", {tensor(s), tensor(s), tensor(shifted)});
    std::vector<double> got = s.download();
    for (size_t i = 0; i < 4; ++i) CHECK(close(got[i + 1], s.host[i] * s.host[i]));
    // A matrix product into one of its operands.
    DevTensor<double> m(p, values<double>(4), {2, 2}), n(p, values<double>(4, 3), {2, 2});
    run_ok(p, "aten::mm.out", {tensor(m), tensor(n), tensor(m)});
    check_out<double>(m, [&](const Dims& i) {
      return m({i[0], 0}) * n({0, i[1]}) + m({i[0], 1}) * n({1, i[1]});
    });
  });
}

TEST_CASE("inputs a kernel does not handle are UNSUPPORTED and leave out untouched",
          "[host_kernels]") {
  each_mode([](const Plugin& p) {
    DevTensor<int8_t> i8(p, values<int8_t>(4), {4}), i8out(p, std::vector<int8_t>(4, 5), {4});
    DevTensor<float> f(p, values<float>(4), {4}), fout(p, std::vector<float>(4, 5), {4});
    DevTensor<double> d(p, values<double>(4), {4});
    DevTensor<int64_t> l(p, values<int64_t>(4), {4}), lout(p, std::vector<int64_t>(4, 5), {4});
    DevTensor<float> wrong_shape(p, std::vector<float>(5, 5), {5});
    DevTensor<float> expanded(p, {5.f}, {4}, {0});  // every element at one address
    Dims dim0{0}, twice{0, -1};
    auto unsupported = [&](const std::string& name, std::vector<flagos_kernel_arg_t> args) {
      INFO(name);
      CHECK(call(p, name, std::move(args)) == FLAGOS_ERROR_UNSUPPORTED);
      CHECK(std::string(p.api().last_error_message()).find(name) != std::string::npos);
    };
    unsupported("aten::add.out", {tensor(i8), tensor(i8), integer(1), tensor(i8out)});
    unsupported("aten::add.out", {tensor(f), tensor(d), integer(1), tensor(fout)});
    unsupported("aten::add.out", {tensor(f), tensor(f), integer(1), tensor(wrong_shape)});
    unsupported("aten::add.out", {tensor(l), tensor(l), real(0.5), tensor(lout)});
    unsupported("aten::add.out", {tensor(f), tensor(f), boolean(true), tensor(fout)});
    unsupported("aten::mul.out", {tensor(f), tensor(f), tensor(expanded)});
    unsupported("aten::relu.out", {tensor(i8), tensor(i8out)});
    unsupported("aten::fill.Scalar_out", {tensor(lout), real(1.5), tensor(lout)});
    unsupported("aten::copy.out", {tensor(lout), tensor(f), boolean(false), tensor(lout)});
    unsupported("aten::sum.IntList_out", {tensor(f), ints(dim0), boolean(false), integer(7), tensor(fout)});
    unsupported("aten::sum.IntList_out", {tensor(f), ints(twice), boolean(false), none(), tensor(fout)});
    unsupported("aten::mm.out", {tensor(f), tensor(f), tensor(fout)});
    p.check(p.api().device_synchronize(0), "device_synchronize");
    check_out<int8_t>(i8out, [](const Dims&) { return int8_t{5}; });
    check_out<float>(fout, [](const Dims&) { return 5.f; });
    check_out<int64_t>(lout, [](const Dims&) { return int64_t{5}; });
  });
}

TEST_CASE("malformed calls are INVALID_ARGUMENT with a message", "[host_kernels]") {
  each_mode([](const Plugin& p) {
    DevTensor<float> a(p, values<float>(4), {4}), out(p, std::vector<float>(4), {4});
    DevTensor<float> on_device1(p, values<float>(4), {4}, {}, 0, /*device=*/1);
    flagos_tensor_desc_t other_device = on_device1.desc;
    other_device.device = 0;  // claims device 0, but the memory is device 1's
    auto invalid = [&](const char* why, std::vector<flagos_kernel_arg_t> args,
                       flagos_stream_t stream = nullptr) {
      INFO(why);
      CHECK(call(p, "aten::neg.out", std::move(args), stream) == FLAGOS_ERROR_INVALID_ARGUMENT);
      CHECK(std::string(p.api().last_error_message()).rfind("aten::neg.out:", 0) == 0);
    };
    flagos_tensor_desc_t small = a.desc;
    small.struct_size = 8;
    flagos_tensor_desc_t wrong_device = a.desc;
    wrong_device.device = 1;
    std::vector<float> host_memory(4);
    flagos_tensor_desc_t on_host = a.desc;
    on_host.data = host_memory.data();
    flagos_tensor_desc_t past_end = a.desc;
    past_end.byte_offset = sizeof(float);
    invalid("descriptor struct_size", {tensor(small), tensor(out)});
    invalid("descriptor device", {tensor(wrong_device), tensor(out)});
    invalid("memory of another device", {tensor(other_device), tensor(out)});
    invalid("host memory", {tensor(on_host), tensor(out)});
    invalid("past the allocation", {tensor(past_end), tensor(out)});
    invalid("argument count", {tensor(a)});
    invalid("argument kind", {tensor(a), integer(1)});
    invalid("stream of another device", {tensor(a), tensor(out)}, default_stream(p, 1));
    flagos_kernel_call_t c{};
    c.struct_size = 8;
    CHECK(kernel(p, "aten::neg.out").run(&c) == FLAGOS_ERROR_INVALID_ARGUMENT);
    CHECK(kernel(p, "aten::neg.out").run(nullptr) == FLAGOS_ERROR_INVALID_ARGUMENT);
  });
}

TEST_CASE("kernels are enqueued on the call's stream and run in order", "[host_kernels]") {
  each_mode([](const Plugin& p) {
    auto* testing = reinterpret_cast<const flagos_testing_ext_t*>(
        p.find_extension(FLAGOS_EXTENSION_TESTING));
    REQUIRE(testing != nullptr);
    flagos_stream_t stream = nullptr;
    p.check(p.api().stream_create(0, 0, &stream), "stream_create");
    DevTensor<double> x(p, std::vector<double>(8), {8});
    p.check(testing->stream_enqueue_delay(stream, 200 * 1000), "delay");
    CHECK(call(p, "aten::fill.Scalar_out", {tensor(x), real(1.5), tensor(x)}, stream) ==
          FLAGOS_SUCCESS);
    CHECK(call(p, "aten::add.out", {tensor(x), tensor(x), integer(2), tensor(x)}, stream) ==
          FLAGOS_SUCCESS);
    CHECK(p.api().stream_query(stream) == FLAGOS_NOT_READY);  // returned before running
    p.check(p.api().stream_synchronize(stream), "stream_synchronize");
    check_out<double>(x, [](const Dims&) { return 1.5 + 2 * 1.5; });
    p.api().stream_destroy(stream);
  });
}
