#include "distributed/comm_work.h"

#include "device/streams.h"
#include "error.h"

namespace flagos::distributed {

CommWork::CommWork(std::shared_ptr<Communicator> comm, std::shared_ptr<c10::Event> done,
                   c10::intrusive_ptr<c10::ivalue::Future> future, std::vector<at::Tensor> outputs, int rank,
                   c10d::OpType type, bool blocking)
    : c10d::Work(rank, type),
      comm_(std::move(comm)),
      done_(std::move(done)),
      future_(std::move(future)),
      outputs_(std::move(outputs)),
      blocking_(blocking) {}

bool CommWork::isCompleted() { return done_->query(); }

bool CommWork::isSuccess() const { return !exception(); }

std::exception_ptr CommWork::exception() const {
  if (!done_->query()) return nullptr;
  const std::string why = comm_->error();
  return why.empty() ? nullptr : std::make_exception_ptr(Error("distributed: collective failed: " + why));
}

void CommWork::raise_if_failed() const {
  if (auto e = exception()) std::rethrow_exception(e);
}

void CommWork::synchronize() {
  done_->synchronize();
  raise_if_failed();
}

bool CommWork::wait(std::chrono::milliseconds /*timeout: the group's watchdog enforces it*/) {
  if (blocking_) {
    synchronize();
    return true;
  }
  raise_if_failed();
  done_->block(device::current_stream(comm_->device()));
  return true;
}

}  // namespace flagos::distributed
