// Host mirrors of flagos storages for running a CPU kernel on flagos
// operands (the cpu_fallback route). Tensors that share a device storage
// share one host buffer covering the union of their byte spans, so views,
// in-place updates through aliases and view results keep their meaning:
// a CPU view of a mirror maps back to the same offsets of the device storage.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace flagos::aten {

class HostMirrors {
 public:
  // Pass 1: every flagos tensor the kernel will see.
  void note(const at::Tensor& device_tensor);
  // One device-to-host copy per storage.
  void download();
  // Pass 2: the host tensor standing for `device_tensor` (same dtype, sizes,
  // strides; its bytes alias the mirror buffer).
  at::Tensor host_view(const at::Tensor& device_tensor);

  // After the kernel: `host` (from host_view, possibly re-viewed or resized
  // by the kernel) holds the new value and geometry of `device_tensor`.
  void mark_written(const at::Tensor& device_tensor, const at::Tensor& host);
  // Writes back: unchanged-geometry tensors as their storage spans, then
  // tensors the kernel resized (device tensor resized, values copied).
  void upload();

  // When `host` aliases a mirror buffer, the flagos tensor viewing the same
  // bytes of the device storage; else an undefined tensor.
  at::Tensor device_view_of(const at::Tensor& host) const;

 private:
  struct Entry {
    at::Tensor device_ref;  // keeps the device storage alive
    int64_t begin = 0, end = 0;
    at::Tensor buffer;      // uint8 host bytes of [begin, end)
    bool written = false;
  };
  Entry* find(const at::Tensor& device_tensor);
  std::vector<Entry> entries_;
  std::vector<std::pair<at::Tensor, at::Tensor>> resized_;  // (device, host)
};

}  // namespace flagos::aten
