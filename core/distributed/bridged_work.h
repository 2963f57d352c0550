// The Work a gloo-tier collective returns: gloo's own Work, plus the
// HostBridge whose results go back to the flagos tensors once gloo is done.
//
// wait() returns when the results are in the flagos tensors and the host may
// read them; getFuture() completes with the flagos output tensors and, as
// any Future over device tensors, orders the flagos current stream of
// whoever waits on it after the collective (events, not a host sync).
// Threading: as c10d::Work — wait() and getFuture() from any thread.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <memory>
#include <mutex>
#include <vector>

#include "distributed/host_bridge.h"

namespace flagos::distributed {

class BridgedWork : public c10d::Work {
 public:
  // `result`: the tensors the collective wrote, as the caller passed them.
  BridgedWork(c10::intrusive_ptr<c10d::Work> inner, std::shared_ptr<HostBridge> bridge,
              std::vector<at::Tensor> result, int rank, c10d::OpType type);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  int sourceRank() const override;
  std::vector<at::Tensor> result() override;
  void synchronize() override;
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  void abort() override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

 private:
  c10::intrusive_ptr<c10d::Work> inner_;
  std::shared_ptr<HostBridge> bridge_;
  std::vector<at::Tensor> result_;
  std::mutex future_mutex_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace flagos::distributed
