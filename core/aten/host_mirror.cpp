#include "aten/host_mirror.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "aten/transfer.h"

namespace flagos::aten {

HostMirrors::Entry* HostMirrors::find(const at::Tensor& t) {
  for (auto& e : entries_)
    if (e.device_ref.storage().is_alias_of(t.storage())) return &e;
  return nullptr;
}

void HostMirrors::note(const at::Tensor& t) {
  const Span span = span_of(t);
  if (Entry* e = find(t)) {
    e->begin = std::min(e->begin, span.begin);
    e->end = std::max(e->end, span.end);
    return;
  }
  entries_.push_back(Entry{t, span.begin, span.end, {}, false});
}

void HostMirrors::download() {
  for (auto& e : entries_) {
    e.buffer = at::empty({e.end - e.begin}, at::TensorOptions().dtype(at::kByte));
    device_to_host(e.buffer.data_ptr(), e.device_ref, e.begin, e.end - e.begin);
  }
}

at::Tensor HostMirrors::host_view(const at::Tensor& t) {
  Entry* e = find(t);
  TORCH_INTERNAL_ASSERT(e && e->buffer.defined(), "[flagos] host_view of a tensor not noted");
  const int64_t item = static_cast<int64_t>(t.element_size());
  const int64_t offset = t.storage_offset() * item - e->begin;
  if (offset % item != 0) return aten::download(t);  // mixed dtypes, misaligned: private copy
  return at::empty({0}, t.options().device(at::kCPU))
      .set_(e->buffer.storage(), offset / item, t.sizes(), t.strides());
}

void HostMirrors::mark_written(const at::Tensor& device_tensor, const at::Tensor& host) {
  Entry* e = find(device_tensor);
  const bool same_place = e && host.storage().is_alias_of(e->buffer.storage()) &&
                          host.sizes() == device_tensor.sizes() &&
                          host.strides() == device_tensor.strides() &&
                          host.storage_offset() * static_cast<int64_t>(host.element_size()) + e->begin ==
                              device_tensor.storage_offset() *
                                  static_cast<int64_t>(device_tensor.element_size());
  if (same_place) {
    e->written = true;
  } else {
    resized_.emplace_back(device_tensor, host);
  }
}

void HostMirrors::upload() {
  for (auto& e : entries_)
    if (e.written) host_to_device(e.device_ref, e.begin, e.buffer.data_ptr(), e.end - e.begin);
  for (auto& [device_tensor, host] : resized_) {
    if (device_tensor.sizes() != host.sizes()) device_tensor.resize_(host.sizes());
    write_into(device_tensor, host);
  }
}

at::Tensor HostMirrors::device_view_of(const at::Tensor& host) const {
  for (const auto& e : entries_) {
    if (!e.buffer.defined() || !host.storage().is_alias_of(e.buffer.storage())) continue;
    const int64_t item = static_cast<int64_t>(host.element_size());
    const int64_t byte_offset = host.storage_offset() * item + e.begin;
    if (byte_offset % item != 0) return {};
    return at::empty({0}, e.device_ref.options().dtype(host.dtype()))
        .set_(e.device_ref.storage(), byte_offset / item, host.sizes(), host.strides());
  }
  return {};
}

}  // namespace flagos::aten
