#include "event.h"

#include "capture.h"
#include "flagos/plugin_api.h"

namespace flagos_host {

void Marker::complete(flagos_status_t stream_status) {
  Clock::time_point now = Clock::now();  // before the lock: timing measures the stream
  std::lock_guard<std::mutex> lock(mu_);
  when_ = now;
  status_ = stream_status;
  done_ = true;
  cv_.notify_all();
}

bool Marker::done() {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

flagos_status_t Marker::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return done_; });
  return status_;
}

Clock::time_point Marker::when() {
  std::lock_guard<std::mutex> lock(mu_);
  return when_;
}

flagos_status_t Marker::status() {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

bool Event::timing() const { return (flags_ & FLAGOS_EVENT_TIMING) != 0; }

std::shared_ptr<Marker> Event::next_marker() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::make_shared<Marker>(++generation_);
}

void Event::publish(std::shared_ptr<Marker> m) {
  std::lock_guard<std::mutex> lock(mu_);
  // Two threads recording at once: the later record (higher generation) wins.
  if (!latest_ || latest_->generation() < m->generation()) {
    latest_ = std::move(m);
    captured_.reset();
  }
}

void Event::record_in_capture(const std::shared_ptr<Capture>& capture) {
  std::lock_guard<std::mutex> lock(mu_);
  ++generation_;  // a record made before the capture must not win over this one
  latest_ = nullptr;
  captured_ = capture;
}

std::shared_ptr<Capture> Event::capture_underway() {
  std::shared_ptr<Capture> c;
  {
    std::lock_guard<std::mutex> lock(mu_);
    c = captured_.lock();
  }
  return c && c->underway() ? c : nullptr;
}

std::shared_ptr<Marker> Event::latest() {
  std::lock_guard<std::mutex> lock(mu_);
  return latest_;
}

}  // namespace flagos_host
