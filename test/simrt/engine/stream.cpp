#include "stream.h"

#include <atomic>
#include <thread>

#include "config.h"

namespace simrt {
namespace {
thread_local bool t_in_callback = false;
std::atomic<uint32_t> g_next_id{1};  // 0 is no stream in CUPTI's records
}  // namespace

bool in_host_callback() { return t_in_callback; }
void set_in_host_callback(bool on) { t_in_callback = on; }

Stream::Stream(int device, int priority, unsigned flags, bool legacy, bool non_blocking)
    : id(g_next_id++), device(device), priority(priority), flags(flags), legacy(legacy), non_blocking(non_blocking) {}

std::shared_ptr<Stream> Stream::create(int device, int priority, unsigned flags, bool legacy,
                                       bool non_blocking) {
  std::shared_ptr<Stream> s(new Stream(device, priority, flags, legacy, non_blocking));
  // Detached: at process exit a worker may still be parked on its condition
  // variable; it only touches heap state that is never destroyed while it holds
  // a reference, so exit never joins or crashes on it.
  std::thread(&Stream::run, s.get(), s).detach();
  return s;
}

uint64_t Stream::enqueue(std::function<void()> fn, std::vector<Dep> deps,
                         std::shared_ptr<Point> mark) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t seq = ++enqueued_;
  queue_.push_back(Op{seq, std::move(fn), std::move(deps), std::move(mark)});
  work_cv_.notify_one();
  return seq;
}

void Stream::wait(uint64_t seq) {
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return completed_ >= seq; });
}

bool Stream::done(uint64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  return completed_ >= seq;
}

uint64_t Stream::last() {
  std::lock_guard<std::mutex> lock(mu_);
  return enqueued_;
}

void Stream::close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  work_cv_.notify_one();
}

void Stream::run(std::shared_ptr<Stream> self) {
  const unsigned delay_us = config().delay_us;
  for (;;) {
    Op op;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return !queue_.empty() || closed_; });
      if (queue_.empty()) break;  // closed and drained
      op = std::move(queue_.front());
      queue_.pop_front();
    }
    // Cross-stream waits never cycle: a dependency is always an op that was
    // already enqueued when this op was.
    for (Dep& d : op.deps) d.stream->wait(d.seq);
    op.deps.clear();
    if (delay_us != 0) std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    if (op.mark) op.mark->when = Clock::now();
    if (op.fn) op.fn();
    op.fn = nullptr;  // release captures (staging buffers) before completing
    op.mark.reset();
    std::lock_guard<std::mutex> lock(mu_);
    completed_ = op.seq;
    done_cv_.notify_all();
  }
  self.reset();  // the last reference may go here; nothing touches *this after
}

}  // namespace simrt
