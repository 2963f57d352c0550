#include "routes/native.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/frontend/function_schema_parser.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>

#include "device/runtime.h"
#include "device/streams.h"
#include "diag/channels.h"
#include "diag/log.h"
#include "routes/aten_op.h"
#include "routes/boxed_args.h"
#include "routes/native_args.h"
#include "routes/schema_fit.h"

namespace flagos::routes {
namespace {

// Why a plugin kernel's schema cannot serve this torch ("" when it can).
std::string schema_mismatch(const c10::FunctionSchema& declared) {
  switch (schema_fit(declared)) {
    case SchemaFit::kNoOperator: return "this torch has no such operator";
    case SchemaFit::kDeclaredDifferently: return "this torch declares the operator differently";
    case SchemaFit::kSame: break;
  }
  return "";
}

bool reports_cache(const flagos_kernel_t* k) { return FLAGOS_HAS_FN(flagos_kernel_t, k, cache_stats); }

// FLAGOS_LOG=op_cache: one line per kernel that served a call, then the total.
void print_cache_stats() {
  uint64_t hits = 0, misses = 0;
  for (const KernelCacheStats& s : kernel_cache_stats()) {
    if (s.hits + s.misses == 0) continue;
    diag::info("op_cache: " + s.op + ": " + std::to_string(s.hits) + " hits, " + std::to_string(s.misses) +
               " misses");
    hits += s.hits;
    misses += s.misses;
  }
  diag::info("op_cache: all kernels: " + std::to_string(hits) + " hits, " + std::to_string(misses) + " misses");
}

// Registers the exit report, or says at once why there will be none.
void announce_cache_stats(const std::string& plugin, size_t reporting) {
  if (!diag::channel_enabled("op_cache")) return;
  if (reporting == 0) {
    diag::info("op_cache: plugin " + plugin + " has no native kernel that keeps an operator cache");
    return;
  }
  std::atexit(print_cache_stats);
}

// operator name -> kernel, for the active plugin's extension. Schemas are
// compared parsed, not printed: printing every operator's schema to look it
// up costs time and, under torch 2.11 (CUDA build), crashes on
// aten::diff.out. A kernel whose schema does not parse or does not match
// this torch's is skipped with one warning (include/flagos/ext/kernels.h).
const std::unordered_map<c10::OperatorName, const flagos_kernel_t*>& plugin_kernels() {
  static std::unordered_map<c10::OperatorName, const flagos_kernel_t*> table;
  static std::once_flag once;
  std::call_once(once, [] {
    auto plugin = plugin::active();
    if (!plugin) return;
    auto* ext = reinterpret_cast<const flagos_kernels_ext_t*>(
        plugin->find_extension(FLAGOS_EXTENSION_KERNELS));
    if (!ext) {
      announce_cache_stats(plugin->name(), 0);
      return;
    }
    for (size_t i = 0; i < ext->num_kernels; ++i) {
      const flagos_kernel_t* k = ext->kernels[i];
      if (!k || !k->schema || !k->run) continue;
      std::string why;
      std::optional<c10::OperatorName> name;
      try {
        const c10::FunctionSchema declared = torch::jit::parseSchema(k->schema);
        why = schema_mismatch(declared);
        name = declared.operator_name();
      } catch (const std::exception& e) {
        std::string what = e.what();  // the parser's report: its first line, without "here:"
        what = what.substr(0, what.find('\n'));
        if (const auto at = what.rfind(" here:"); at != std::string::npos && at + 6 == what.size()) what.resize(at);
        why = "it does not parse (" + what + ")";
      }
      if (!why.empty()) {
        diag::warn("plugin " + plugin->name() + ": native kernel '" + k->schema + "' skipped: " + why);
        continue;
      }
      table.emplace(std::move(*name), k);
    }
    announce_cache_stats(plugin->name(), static_cast<size_t>(std::count_if(
                                             table.begin(), table.end(),
                                             [](const auto& entry) { return reports_cache(entry.second); })));
  });
  return table;
}

const flagos_kernel_t* kernel_for(const c10::OperatorHandle& op) {
  const auto& table = plugin_kernels();
  auto it = table.find(op.operator_name());
  return it == table.end() ? nullptr : it->second;
}

bool is_out_variant(const c10::FunctionSchema& s) {
  return !s.arguments().empty() && s.arguments().back().is_out();
}

bool same_arguments(const c10::FunctionSchema& out, const c10::FunctionSchema& base, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const auto& a = out.arguments()[i];
    const auto& b = base.arguments()[i];
    if (a.name() != b.name() || a.type()->str() != b.type()->str()) return false;
  }
  return true;
}

// Whether `out` is `base` plus trailing out= arguments.
bool extends(const c10::FunctionSchema& out, const c10::FunctionSchema& base) {
  size_t n = base.arguments().size();
  if (out.arguments().size() <= n || !same_arguments(out, base, n)) return false;
  for (size_t i = n; i < out.arguments().size(); ++i)
    if (!out.arguments()[i].is_out()) return false;
  return true;
}

}  // namespace

std::vector<std::string> plugin_kernel_schemas() {
  std::vector<std::string> out;
  for (const auto& [name, kernel] : plugin_kernels()) out.emplace_back(kernel->schema);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<KernelCacheStats> kernel_cache_stats() {
  std::vector<KernelCacheStats> out;
  for (const auto& [name, kernel] : plugin_kernels()) {
    if (!reports_cache(kernel)) continue;
    KernelCacheStats s;
    s.op = name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
    kernel->cache_stats(&s.hits, &s.misses);
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.op < b.op; });
  return out;
}

std::optional<NativeKernel> find_native(const std::string& op_name) {
  if (plugin_kernels().empty()) return std::nullopt;
  auto op = find_aten_op(op_name);
  if (!op) return std::nullopt;
  const c10::FunctionSchema& schema = op->schema();
  if (is_out_variant(schema)) {
    if (auto* k = kernel_for(*op)) return NativeKernel{k, *op, NativeKernel::Form::Out};
    return std::nullopt;
  }
  // add_.Tensor -> the out overload of "add" extending add.Tensor's arguments.
  std::string base = schema.name().substr(6);  // drop "aten::"
  const bool inplace = base.size() > 1 && base.back() == '_' && base.compare(0, 2, "__") != 0;
  if (inplace) base.pop_back();
  const std::string out_name = "aten::" + base;
  for (const auto& [candidate, k] : plugin_kernels()) {  // a few kernels, not every operator
    if (candidate.name != out_name) continue;
    auto handle = c10::Dispatcher::singleton().findSchema(candidate);
    if (!handle || !is_out_variant(handle->schema())) continue;
    if (inplace) {
      // self plays out: the in-place arguments are the out op's non-out ones.
      const auto& out_args = handle->schema().arguments();
      if (out_args.size() == schema.arguments().size() + 1 && out_args.back().is_out() &&
          same_arguments(handle->schema(), schema, schema.arguments().size()))
        return NativeKernel{k, *handle, NativeKernel::Form::Inplace};
    } else if (extends(handle->schema(), schema) && schema.returns().size() ==
                                                       handle->schema().returns().size()) {
      return NativeKernel{k, *handle, NativeKernel::Form::Functional};
    }
  }
  return std::nullopt;
}

bool run_native(const NativeKernel& k, const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const size_t n = schema.arguments().size();
  std::vector<c10::IValue> args(stack->end() - n, stack->end());
  auto device_opt = find_device(args.data(), n);
  if (!device_opt) return false;
  const auto device = *device_opt;
  // Every tensor on flagos, or the kernel cannot take the call: declined
  // before the Meta step, so that the next route answers a CPU tensor beside
  // a flagos one with torch's own words.
  bool foreign = false;
  for (const auto& v : args)
    for_each_tensor(v, [&](const at::Tensor& t) { foreign = foreign || (t.defined() && !is_flagos(t)); });
  if (foreign) return false;

  std::vector<c10::IValue> full = args;  // the out op's arguments, outs included
  std::vector<at::Tensor> outputs;
  if (k.form == NativeKernel::Form::Inplace) {
    full.push_back(args[0]);
  } else if (k.form == NativeKernel::Form::Functional) {
    // Shapes and dtypes from the Meta kernel; memory from the flagos allocator.
    torch::jit::Stack meta;
    for (const auto& v : args)
      meta.push_back(map_tensors(v, [](const at::Tensor& t) {
        return is_flagos(t) ? at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta)) : t;
      }));
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &meta);
    for (const auto& v : meta) {
      if (!v.isTensor()) return false;
      const at::Tensor& m = v.toTensor();
      outputs.push_back(at::empty_strided(m.sizes(), m.strides(),
                                          m.options().device(c10::Device(c10::DeviceType::PrivateUse1, device))));
      full.push_back(outputs.back());
    }
  }

  KernelArgs builder;
  const auto& out_args = k.out_op.schema().arguments();
  for (size_t i = 0; i < full.size(); ++i)
    if (!builder.add(full[i], out_args[i], device)) return false;

  flagos_kernel_call_t call{};
  call.struct_size = sizeof(call);
  call.device = device;
  call.stream = device::current_native(device);
  call.num_args = builder.args().size();
  call.args = builder.args().data();
  const auto& plugin = device::active_plugin();
  flagos_status_t status = k.kernel->run(&call);
  if (status == FLAGOS_ERROR_UNSUPPORTED) return false;
  plugin.check(status, k.kernel->schema);

  torch::jit::drop(*stack, n);
  switch (k.form) {
    case NativeKernel::Form::Out:
      for (size_t r = 0; r < schema.returns().size(); ++r)
        stack->push_back(args[n - schema.returns().size() + r]);
      break;
    case NativeKernel::Form::Inplace:
      stack->push_back(args[0]);
      break;
    case NativeKernel::Form::Functional:
      for (auto& t : outputs) stack->push_back(std::move(t));
      break;
  }
  return true;
}

}  // namespace flagos::routes
