// The Work of a collective on the plugin's communicator: an event recorded on
// the communicator's stream after the operation.
//
// wait() makes the caller's current flagos stream wait for that event (the
// host does not block) and raises when the collective is known to have
// failed; getFuture() completes with the outputs, in stream order. A
// blocking Work (barrier) waits on the host instead. Failures surface when
// the operation completed: is_completed(), exception(), and the next wait()
// or collective on the group.
#pragma once

#include <ATen/core/ivalue.h>
#include <c10/core/Event.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <memory>
#include <vector>

#include "distributed/communicator.h"

namespace flagos::distributed {

class CommWork : public c10d::Work {
 public:
  CommWork(std::shared_ptr<Communicator> comm, std::shared_ptr<c10::Event> done,
           c10::intrusive_ptr<c10::ivalue::Future> future, std::vector<at::Tensor> outputs, int rank,
           c10d::OpType type, bool blocking);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  std::vector<at::Tensor> result() override { return outputs_; }
  void synchronize() override;
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  void raise_if_failed() const;

  std::shared_ptr<Communicator> comm_;
  std::shared_ptr<c10::Event> done_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::vector<at::Tensor> outputs_;
  bool blocking_;
};

}  // namespace flagos::distributed
