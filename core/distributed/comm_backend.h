// The "flagos" backend's communicator tier: collectives of flagos tensors run
// on the plugin's own communicator (FLAGOS_EXTENSION_COLLECTIVES), on a
// stream of the device, ordered after the caller's current stream by an
// event; no host staging, no device-wide sync.
//
// What the communicator does not serve (CPU tensors, a dtype or reduction
// the plugin lacks, non-contiguous tensors, recv from any source) goes to
// `fallback`, the gloo tier the plugin would otherwise get. A watchdog
// aborts the communicator when a collective outlives the group's timeout,
// so a lost peer fails the operation instead of hanging it.
#pragma once

#include <c10/core/Event.h>
#include <c10/core/Stream.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "distributed/communicator.h"
#include "distributed/gloo_tier_backend.h"

namespace flagos::distributed {

class CommBackend : public c10d::Backend {
 public:
  CommBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout,
              c10::intrusive_ptr<GlooTierBackend> fallback, int32_t device);
  ~CommBackend() override;

  const std::string getBackendName() const override { return "flagos"; }
  const c10::intrusive_ptr<GlooTierBackend>& fallback() const { return fallback_; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_splits,
                                               std::vector<int64_t>& input_splits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;
  void monitoredBarrier(const c10d::BarrierOptions& opts, bool wait_all_ranks) override;

  void setTimeout(std::chrono::milliseconds timeout) override;
  void setSequenceNumberForGroup() override { fallback_->setSequenceNumberForGroup(); }
  uint64_t getSequenceNumberForGroup() override { return fallback_->getSequenceNumberForGroup(); }
  void abort() override;
  void shutdown() override;

 private:
  // Whether the communicator serves these tensors (all flagos, on its
  // device, dense, a dtype it takes) and, for a reduction, `op`.
  bool serves(const std::vector<at::Tensor>& tensors) const;
  bool serves_op(const c10d::ReduceOp& op, const std::vector<at::Tensor>& tensors) const;
  // Orders the communicator's stream after the current one, runs `issue`
  // there, keeps every tensor's memory for that stream, and returns the Work.
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType type, const char* name, const std::vector<at::Tensor>& used,
                                         std::vector<at::Tensor> outputs,
                                         const std::function<void(flagos_stream_t)>& issue, bool blocking = false);
  void grouped(const std::function<void()>& calls) const;
  void watch(const std::shared_ptr<c10::Event>& done, const char* name);
  void watchdog_loop();

  std::shared_ptr<Communicator> comm_;
  c10::intrusive_ptr<GlooTierBackend> fallback_;
  c10::Stream stream_;
  std::chrono::milliseconds timeout_;

  struct Pending {
    std::shared_ptr<c10::Event> done;
    std::chrono::steady_clock::time_point deadline;
    const char* name;
  };
  std::mutex watch_mu_;
  std::condition_variable watch_cv_;
  std::vector<Pending> pending_;
  bool stopping_ = false;
  std::thread watchdog_;
};

}  // namespace flagos::distributed
