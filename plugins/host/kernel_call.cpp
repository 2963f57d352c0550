#include "kernel_call.h"

#include <cstdarg>
#include <cstdio>

#include "copy.h"
#include "devices.h"
#include "flagos/abi_sizes.h"
#include "handles.h"
#include "kit.h"

namespace flagos_host {
namespace {

const char* expected_kinds(Param p) {
  switch (p) {
    case Param::kTensor: return "TENSOR";
    case Param::kScalar: return "INT, DOUBLE or BOOL";
    case Param::kBool: return "BOOL";
    case Param::kOptIntList: return "NONE, INT_LIST or INT";
    case Param::kOptDtype: return "NONE, DTYPE or INT";
  }
  return "?";
}

bool kind_fits(Param p, const flagos_kernel_arg_t& a) {
  const int32_t k = a.kind;
  switch (p) {
    case Param::kTensor: return k == FLAGOS_ARG_TENSOR;
    case Param::kScalar:
      return k == FLAGOS_ARG_INT || k == FLAGOS_ARG_DOUBLE || k == FLAGOS_ARG_BOOL;
    case Param::kBool: return k == FLAGOS_ARG_BOOL;
    case Param::kOptIntList:
      return k == FLAGOS_ARG_NONE || k == FLAGOS_ARG_INT ||
             (k == FLAGOS_ARG_INT_LIST && (a.v.ints.size == 0 || a.v.ints.data != nullptr));
    case Param::kOptDtype:
      return k == FLAGOS_ARG_NONE || k == FLAGOS_ARG_DTYPE || k == FLAGOS_ARG_INT;
  }
  return false;
}

// Shape, strides and dtype of a descriptor, checked for sanity; `data` unset.
flagos_status_t read_layout(const char* fn, const char* name, const flagos_tensor_desc_t& d,
                            View* v) {
  if (d.ndim < 0 || (d.ndim > 0 && (d.shape == nullptr || d.strides == nullptr)))
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: '%s': ndim %d with shape %p, strides %p", fn,
                name, d.ndim, (const void*)d.shape, (const void*)d.strides);
  if (d.dtype.bits == 0 || d.dtype.bits % 8 != 0 || d.dtype.lanes == 0)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: '%s': malformed dtype (code %u, bits %u, "
                "lanes %u)", fn, name, d.dtype.code, d.dtype.bits, d.dtype.lanes);
  v->dtype = d.dtype;
  v->elem_size = size_t(d.dtype.bits / 8) * d.dtype.lanes;
  v->shape.assign(d.shape, d.shape + d.ndim);
  v->strides.assign(d.strides, d.strides + d.ndim);
  int64_t n = 1;
  for (int64_t s : v->shape)
    if (s < 0 || __builtin_mul_overflow(n, s, &n))
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: '%s': bad shape (size %lld)", fn, name,
                  (long long)s);
  return FLAGOS_SUCCESS;
}

// Byte range [*lo, *hi) relative to d.data that a non-empty view touches.
bool byte_range(const flagos_tensor_desc_t& d, const View& v, __int128* lo, __int128* hi) {
  __int128 first = 0, last = 0;
  for (size_t i = 0; i < v.shape.size(); ++i) {
    __int128 reach = __int128(v.shape[i] - 1) * v.strides[i];
    (reach < 0 ? first : last) += reach;
  }
  const __int128 es = __int128(v.elem_size);
  *lo = __int128(d.byte_offset) + first * es;
  *hi = __int128(d.byte_offset) + (last + 1) * es;
  return *lo >= INT64_MIN && *hi <= INT64_MAX;
}

}  // namespace

flagos_status_t unsupported(const char* fn, const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: unsupported by the host reference kernels: %s", fn,
              buf);
}

flagos_status_t common_elem(const char* fn, std::initializer_list<const View*> views, Elem* out) {
  Elem first{};
  bool have = false;
  for (const View* v : views) {
    Elem e{};
    if (!elem_of(v->dtype, &e))
      return unsupported(fn, "dtype (code %u, bits %u, lanes %u)", v->dtype.code, v->dtype.bits,
                         v->dtype.lanes);
    if (have && e != first) return unsupported(fn, "tensors of different dtypes");
    first = e;
    have = true;
  }
  *out = first;
  return FLAGOS_SUCCESS;
}

flagos_status_t KernelCall::open(const char* fn, const flagos_kernel_call_t* call,
                                 std::initializer_list<ParamSpec> params) {
  if (call == nullptr || call->struct_size < FLAGOS_KERNEL_CALL_SIZE_1_0)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: call is NULL or its struct_size is too small",
                fn);
  flagos_status_t st = check_device(fn, call->device);
  if (st == FLAGOS_SUCCESS) st = find_stream(fn, call->stream, &stream_);
  if (st != FLAGOS_SUCCESS) return st;
  if (stream_->device() != call->device)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: stream %p is on device %d, the call on %d", fn,
                (void*)call->stream, stream_->device(), call->device);
  if (call->num_args != params.size() || call->args == nullptr)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %zu arguments (args %p), the schema has %zu",
                fn, call->num_args, (const void*)call->args, params.size());
  call_ = call;
  args_ = call->args;
  views_.assign(params.size(), View{});
  size_t i = 0;
  for (const ParamSpec& p : params) {
    if (!kind_fits(p.kind, args_[i]))
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: argument %zu ('%s') has kind %d, expected %s",
                  fn, i, p.name, args_[i].kind, expected_kinds(p.kind));
    if (p.kind == Param::kTensor && (st = bind_tensor(fn, p, i)) != FLAGOS_SUCCESS) return st;
    ++i;
  }
  return FLAGOS_SUCCESS;
}

flagos_status_t KernelCall::bind_tensor(const char* fn, const ParamSpec& p, size_t i) {
  const flagos_tensor_desc_t* d = args_[i].v.tensor;
  if (d == nullptr || d->struct_size < FLAGOS_TENSOR_DESC_SIZE_1_0)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                "%s: '%s': descriptor is NULL or its struct_size is too small", fn, p.name);
  if (d->device != call_->device)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: '%s' is on device %d, the call on device %d",
                fn, p.name, d->device, call_->device);
  View& v = views_[i];
  flagos_status_t st = read_layout(fn, p.name, *d, &v);
  if (st != FLAGOS_SUCCESS || v.numel() == 0) return st;  // empty: no memory to check
  __int128 lo, hi;
  if (!byte_range(*d, v, &lo, &hi))
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: '%s': its extent overflows", fn, p.name);
  const uint8_t* first = static_cast<const uint8_t*>(d->data) + d->byte_offset;
  if (reinterpret_cast<uintptr_t>(first) % v.elem_size != 0)
    return unsupported(fn, "'%s' is not aligned to its element size", p.name);
  Endpoint e;
  st = resolve_device(fn, p.name, static_cast<const uint8_t*>(d->data) + int64_t(lo),
                      uint64_t(hi - lo), call_->device, &e);
  if (st != FLAGOS_SUCCESS) return st;
  v.data = e.addr + (int64_t(d->byte_offset) - int64_t(lo));
  blocks_.push_back(std::move(e.block));
  return FLAGOS_SUCCESS;
}

flagos_status_t KernelCall::workspace(const char* fn, uint64_t bytes, uint8_t** scratch) {
  *scratch = nullptr;
  const flagos_host_services_t* s = kit::host_services();
  if (s == nullptr || !FLAGOS_HAS_FN(flagos_host_services_t, s, workspace_alloc) ||
      !FLAGOS_HAS_FN(flagos_host_services_t, s, workspace_free) || bytes == 0)
    return FLAGOS_SUCCESS;
  void* ptr = nullptr;
  if (flagos_status_t st = s->workspace_alloc(s->context, call_->device, call_->stream, bytes, &ptr);
      st != FLAGOS_SUCCESS) {
    // Out of memory for the workspace is this kernel's limit, not the call's:
    // declined, the next route (which may need less memory) serves the call.
    if (st == FLAGOS_ERROR_OUT_OF_MEMORY)
      return unsupported(fn, "the core could not lend %llu bytes of workspace (out of memory)",
                         (unsigned long long)bytes);
    return fail(st, "%s: the core's workspace_alloc of %llu bytes failed", fn, (unsigned long long)bytes);
  }
  workspaces_.push_back(ptr);
  std::shared_ptr<Block> block = find_block(ptr);
  if (!block || block->device != call_->device)
    return fail(FLAGOS_ERROR_INTERNAL, "%s: the core's workspace %p is not memory of device %d", fn, ptr,
                call_->device);
  *scratch = block->translate(ptr);
  blocks_.push_back(std::move(block));  // mapped until the work ran
  return FLAGOS_SUCCESS;
}

KernelCall::~KernelCall() {
  if (workspaces_.empty()) return;
  const flagos_host_services_t* s = kit::host_services();
  for (void* ptr : workspaces_) s->workspace_free(s->context, ptr);
}

flagos_status_t KernelCall::enqueue(const char* fn, std::function<void()> work) const {
  return stream_->enqueue(fn, [blocks = blocks_, work = std::move(work)] {
    work();
    return FLAGOS_SUCCESS;
  });
}

}  // namespace flagos_host
