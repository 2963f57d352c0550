// The gloo tiers of the "flagos" backend run every collective on host
// tensors. A HostBridge gives gloo a host tensor for each flagos operand of
// one collective, and puts the results back:
//   - zero-copy (host-addressable plugins): a CPU tensor over the same bytes;
//     nothing to put back, gloo writes the flagos memory itself;
//   - staged (every other plugin): a CPU copy in, a copy back to the device
//     when the collective completed (finish()).
// CPU operands (a "flagos" group also serves CPU tensors) pass through as they are.
//
// Threading: built and filled on the thread that issues the collective;
// finish() may run on gloo's completion thread, once (later calls return at once).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <mutex>
#include <vector>

namespace flagos::distributed {

enum class Bridge {
  ZeroCopy,  // host-addressable device memory: CPU views, no copies
  Staged,    // device -> host -> device per collective
};

class HostBridge {
 public:
  explicit HostBridge(Bridge mode) : mode_(mode) {}

  // A host tensor with `t`'s contents, that gloo only reads.
  at::Tensor in(const at::Tensor& t);
  // A host tensor gloo writes; its contents go to `t` at finish().
  at::Tensor out(const at::Tensor& t);
  // Both: read, then written back (in-place collectives).
  at::Tensor inout(const at::Tensor& t);

  std::vector<at::Tensor> in(const std::vector<at::Tensor>& ts);
  std::vector<at::Tensor> out(const std::vector<at::Tensor>& ts);
  std::vector<at::Tensor> inout(const std::vector<at::Tensor>& ts);
  std::vector<std::vector<at::Tensor>> in(const std::vector<std::vector<at::Tensor>>& ts);
  std::vector<std::vector<at::Tensor>> out(const std::vector<std::vector<at::Tensor>>& ts);

  // Divides the written host tensors by `divisor` at finish(), before they
  // go back: ReduceOp.AVG as SUM then a division (gloo has no AVG).
  void average_by(int64_t divisor) { divisor_ = divisor; }

  // Before gloo touches a zero-copy view, the flagos work queued on each
  // operand's current stream must have finished: synchronizes those streams
  // (never the whole device). Staged copies are ordered by the copies themselves.
  void order_after_current_streams() const;

  // Runs `step` at finish(), before anything goes back: a collective
  // composed of several (all_to_all over one flat exchange) lays out its
  // host outputs there.
  void on_complete(std::function<void()> step) { on_complete_ = std::move(step); }

  // Puts written host tensors back into their flagos tensors. Idempotent.
  void finish();

  Bridge mode() const { return mode_; }

 private:
  at::Tensor host_of(const at::Tensor& t, bool copy_in);

  Bridge mode_;
  int64_t divisor_ = 0;
  std::vector<at::Tensor> devices_touched_;  // flagos operands, for stream ordering
  std::vector<std::pair<at::Tensor, at::Tensor>> written_;  // (host, flagos target or undefined)
  std::function<void()> on_complete_;
  std::once_flag finished_;
};

}  // namespace flagos::distributed
