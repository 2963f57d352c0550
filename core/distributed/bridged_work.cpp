#include "distributed/bridged_work.h"

#include <ATen/core/jit_type.h>

#include <algorithm>

namespace flagos::distributed {
namespace {

std::vector<c10::Device> flagos_devices(const std::vector<at::Tensor>& ts) {
  std::vector<c10::Device> devices;
  for (const auto& t : ts) {
    if (!t.defined() || t.device().type() != c10::DeviceType::PrivateUse1) continue;
    if (std::find(devices.begin(), devices.end(), t.device()) == devices.end()) devices.push_back(t.device());
  }
  return devices;
}

}  // namespace

BridgedWork::BridgedWork(c10::intrusive_ptr<c10d::Work> inner, std::shared_ptr<HostBridge> bridge,
                         std::vector<at::Tensor> result, int rank, c10d::OpType type)
    : c10d::Work(rank, type), inner_(std::move(inner)), bridge_(std::move(bridge)), result_(std::move(result)) {}

bool BridgedWork::isCompleted() {
  if (!inner_->isCompleted()) return false;
  if (!inner_->exception()) bridge_->finish();
  return true;
}

bool BridgedWork::isSuccess() const { return inner_->isSuccess(); }
std::exception_ptr BridgedWork::exception() const { return inner_->exception(); }
int BridgedWork::sourceRank() const { return inner_->sourceRank(); }
std::vector<at::Tensor> BridgedWork::result() { return result_; }

void BridgedWork::synchronize() {
  inner_->synchronize();
  bridge_->finish();
}

bool BridgedWork::wait(std::chrono::milliseconds timeout) {
  const bool done = inner_->wait(timeout);  // throws what gloo throws (a timeout, a peer's error)
  bridge_->finish();
  return done;
}

void BridgedWork::abort() { inner_->abort(); }

c10::intrusive_ptr<c10::ivalue::Future> BridgedWork::getFuture() {
  std::lock_guard<std::mutex> lock(future_mutex_);
  if (future_) return future_;
  future_ = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::ofTensors(), flagos_devices(result_));
  // Completed from gloo's thread: the results go back first, then the
  // future records its events on that thread's current flagos streams.
  inner_->getFuture()->addCallback(
      [future = future_, bridge = bridge_, result = result_](c10::ivalue::Future& done) mutable {
        if (done.hasError()) {
          future->setError(done.exception_ptr());
          return;
        }
        try {
          bridge->finish();
        } catch (...) {
          future->setError(std::current_exception());
          return;
        }
        future->markCompleted(c10::IValue(result));
      });
  return future_;
}

}  // namespace flagos::distributed
