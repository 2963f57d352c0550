// The "flagos" backend's gloo tiers: a c10d::Backend that serves flagos (and
// CPU) tensors by running each collective on a ProcessGroupGloo over host
// tensors (HostBridge: zero-copy views or staged copies).
//
// Created by torch_fl.distributed for one group; owns its gloo backend.
// ReduceOp.AVG, which gloo lacks, is SUM followed by a division on floating
// tensors. Threading and errors are gloo's: a collective a peer never joins
// fails with gloo's timeout error, after the group's timeout.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "distributed/host_bridge.h"

namespace flagos::distributed {

class GlooTierBackend : public c10d::Backend {
 public:
  GlooTierBackend(c10::intrusive_ptr<c10d::Backend> gloo, Bridge mode);

  const std::string getBackendName() const override { return "flagos"; }
  Bridge bridge_mode() const { return mode_; }
  const c10::intrusive_ptr<c10d::Backend>& inner() const { return gloo_; }

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

  void setTimeout(std::chrono::milliseconds timeout) override { gloo_->setTimeout(timeout); }
  void setSequenceNumberForGroup() override { gloo_->setSequenceNumberForGroup(); }
  uint64_t getSequenceNumberForGroup() override { return gloo_->getSequenceNumberForGroup(); }
  void abort() override { gloo_->abort(); }
  void shutdown() override { gloo_->shutdown(); }

 private:
  std::shared_ptr<HostBridge> bridge() const { return std::make_shared<HostBridge>(mode_); }
  // Orders the bridge after the operands' streams, issues, and wraps gloo's Work.
  template <typename Issue>
  c10::intrusive_ptr<c10d::Work> run(c10d::OpType type, const std::shared_ptr<HostBridge>& bridge,
                                     std::vector<at::Tensor> result, Issue&& issue);

  c10::intrusive_ptr<c10d::Backend> gloo_;
  Bridge mode_;
};

}  // namespace flagos::distributed
