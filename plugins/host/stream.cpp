#include "stream.h"

#include <pthread.h>
#include <signal.h>

#include <system_error>
#include <thread>

#include "capture.h"
#include "flagos/kit/fork_guard.hpp"
#include "kit.h"
#include "profiler.h"

namespace flagos_host {
namespace {

// Runs one task; an exception becomes a failure like any other.
flagos_status_t run_task(const Task& task) {
  return guarded("stream task", [&] { return task(); });
}

}  // namespace

flagos_status_t Stream::enqueue(const char* fn, Task task, uint64_t* ticket,
                                const TaskTrace& trace) {
  flagos_status_t st = kit::fork_guard().check(fn);
  if (st != FLAGOS_SUCCESS) return st;
  std::lock_guard<std::mutex> lock(mu_);
  if (closing_)
    return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: stream %p was destroyed", fn, (void*)this);
  if (capture_) {
    if (ticket != nullptr) *ticket = 0;
    return capture_->append(fn, Node{std::move(task), nullptr});
  }
  if (!worker_started_ && (st = start_worker(fn)) != FLAGOS_SUCCESS) return st;
  if (tracing_stream_work()) task = traced_task(fn, this, trace, std::move(task));
  queue_.push_back(std::move(task));
  ++enqueued_;
  if (ticket != nullptr) *ticket = enqueued_;
  work_cv_.notify_one();
  return FLAGOS_SUCCESS;
}

flagos_status_t Stream::enqueue_record(const char* fn, const std::shared_ptr<Event>& event,
                                       Task task, bool* captured) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    *captured = capture_ != nullptr;
    if (*captured) {
      flagos_status_t st = capture_->append(fn, Node{nullptr, event});
      if (st == FLAGOS_SUCCESS) event->record_in_capture(capture_);
      return st;
    }
  }
  // Not capturing now; a capture begun meanwhile records the plain task,
  // which is what a record made just before it would have done.
  return enqueue(fn, std::move(task), nullptr, TaskTrace{kUntraced});
}

flagos_status_t Stream::enqueue_batch(const char* fn, std::vector<Task> tasks) {
  flagos_status_t st = kit::fork_guard().check(fn);
  if (st != FLAGOS_SUCCESS) return st;
  std::lock_guard<std::mutex> lock(mu_);
  if (closing_)
    return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: stream %p was destroyed", fn, (void*)this);
  if (capture_)
    return fail(FLAGOS_ERROR_UNSUPPORTED,
                "%s: stream %p is capturing; the host plugin does not launch a graph into a "
                "capture",
                fn, (void*)this);
  if (tasks.empty()) return FLAGOS_SUCCESS;
  if (!worker_started_ && (st = start_worker(fn)) != FLAGOS_SUCCESS) return st;
  const bool traced = tracing_stream_work();
  for (Task& t : tasks) queue_.push_back(traced ? traced_task(fn, this, {}, std::move(t)) : std::move(t));
  enqueued_ += tasks.size();
  work_cv_.notify_one();
  return FLAGOS_SUCCESS;
}

flagos_status_t Stream::begin_capture(const char* fn, std::shared_ptr<Capture> capture) {
  std::lock_guard<std::mutex> lock(mu_);
  if (capture_)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: stream %p is already capturing (capture %llu)",
                fn, (void*)this, (unsigned long long)capture_->id());
  capture_ = std::move(capture);
  return FLAGOS_SUCCESS;
}

std::shared_ptr<Capture> Stream::end_capture() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(capture_);
}

std::shared_ptr<Capture> Stream::capture() {
  std::lock_guard<std::mutex> lock(mu_);
  return capture_;
}

flagos_status_t Stream::start_worker(const char* fn) {
  // From here on a child forked by this process has lost the worker.
  flagos_status_t st = kit::fork_guard().use(fn);
  if (st != FLAGOS_SUCCESS) return st;
  // Workers inherit a fully blocked signal mask: asynchronous signals (SIGINT
  // for Python, SIGCHLD...) keep going to the application's own threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    std::thread([self = shared_from_this()] { self->run(); }).detach();
  } catch (const std::system_error& e) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return fail(FLAGOS_ERROR_OUT_OF_HOST_MEMORY, "%s: cannot start a stream worker thread: %s", fn,
                e.what());
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  worker_started_ = true;
  return FLAGOS_SUCCESS;
}

flagos_status_t Stream::wait(const char* fn, uint64_t ticket) {
  flagos_status_t st = kit::fork_guard().check(fn);
  if (st != FLAGOS_SUCCESS) return st;
  std::unique_lock<std::mutex> lock(mu_);
  if (capture_) return capture_->invalidate(fn, "synchronizing the capturing stream");
  done_cv_.wait(lock, [&] { return completed_ >= ticket; });
  return report(fn);
}

flagos_status_t Stream::synchronize(const char* fn) {
  uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ticket = enqueued_;  // work enqueued later by other threads is not waited for
  }
  return wait(fn, ticket);
}

flagos_status_t Stream::query(const char* fn) {
  flagos_status_t st = kit::fork_guard().check(fn);
  if (st != FLAGOS_SUCCESS) return st;
  std::lock_guard<std::mutex> lock(mu_);
  if (capture_) return capture_->invalidate(fn, "querying the capturing stream");
  if (completed_ < enqueued_) return FLAGOS_NOT_READY;
  return report(fn);
}

flagos_status_t Stream::error_status() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

flagos_status_t Stream::report(const char* fn) {
  if (error_ == FLAGOS_SUCCESS) return FLAGOS_SUCCESS;
  return fail(error_, "%s: stream %p failed earlier: %s", fn, (void*)this, error_message_.c_str());
}

void Stream::close() {
  std::lock_guard<std::mutex> lock(mu_);
  closing_ = true;
  work_cv_.notify_one();
}

void Stream::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return !queue_.empty() || closing_; });
    if (queue_.empty()) return;  // closing and drained: drop our reference
    Task task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    flagos_status_t st = run_task(task);
    // Release captured blocks and staging buffers before anyone may observe
    // completion, so a synchronized stream holds no memory.
    task = nullptr;
    lock.lock();
    if (st != FLAGOS_SUCCESS && st != FLAGOS_NOT_READY && error_ == FLAGOS_SUCCESS) {
      error_ = st;
      try {
        error_message_ = last_error();
      } catch (...) {  // the status alone still tells the story
      }
    }
    ++completed_;
    done_cv_.notify_all();
  }
}

}  // namespace flagos_host
