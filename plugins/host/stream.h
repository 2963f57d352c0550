// A stream: an in-order FIFO of tasks run by its own worker thread. The worker
// starts at the first enqueue (never at the handshake, so a process can load
// the plugin and fork), is detached, and holds a reference to its stream, so a
// destroyed stream finishes its pending work before it is released.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "flagos/abi.h"
#include "flagos/ext/profiler.h"

namespace flagos_host {

class Capture;  // capture.h
class Event;    // event.h

// A unit of stream work. A failing task reports through `fail()` (kit.h);
// its status becomes the stream's sticky error.
using Task = std::function<flagos_status_t()>;

// What a stream task is, for its profiler record (profiler.h). kind < 0:
// never recorded (event markers, which are not work).
struct TaskTrace {
  int32_t kind = FLAGOS_ACTIVITY_KERNEL;
  int64_t bytes = 0;
  int32_t copy_kind = -1;
};
inline constexpr int32_t kUntraced = -1;

class Stream : public std::enable_shared_from_this<Stream> {
 public:
  Stream(int32_t device, int32_t priority, bool is_default)
      : device_(device), priority_(priority), is_default_(is_default) {}

  int32_t device() const { return device_; }
  int32_t priority() const { return priority_; }
  bool is_default() const { return is_default_; }

  // Appends `task`; *ticket (if given) identifies it for wait(). Never blocks
  // on the work itself. While the stream captures, the task is recorded
  // instead (capture.h) and *ticket is 0. While a profiler records, the task
  // is timed and recorded as `trace` says, named `fn` (a string literal).
  flagos_status_t enqueue(const char* fn, Task task, uint64_t* ticket = nullptr,
                          const TaskTrace& trace = {});
  // event_record: enqueues `task`, or while capturing records a record of
  // `event` (then *captured is true and `task` is dropped).
  flagos_status_t enqueue_record(const char* fn, const std::shared_ptr<Event>& event, Task task,
                                 bool* captured);
  // Appends `tasks` with no other work in between (a graph launch).
  // UNSUPPORTED while the stream captures.
  flagos_status_t enqueue_batch(const char* fn, std::vector<Task> tasks);

  // Capture mode (graphs.cpp). begin fails when already capturing.
  flagos_status_t begin_capture(const char* fn, std::shared_ptr<Capture> capture);
  // Leaves capture mode; the capture that was underway, or null.
  std::shared_ptr<Capture> end_capture();
  // The capture underway, or null.
  std::shared_ptr<Capture> capture();
  // Blocks until the task `ticket` and everything before it finished; then
  // reports the sticky error, if any. While the stream captures, this
  // invalidates the capture instead (as query() does).
  flagos_status_t wait(const char* fn, uint64_t ticket);
  // wait() for everything enqueued so far.
  flagos_status_t synchronize(const char* fn);
  // NOT_READY while work is pending, else the sticky error or SUCCESS.
  flagos_status_t query(const char* fn);
  // The sticky error status without touching the last-error message.
  flagos_status_t error_status();
  // No more work will come: the worker drains the queue and lets go.
  void close();

 private:
  flagos_status_t start_worker(const char* fn);  // with mu_ held
  flagos_status_t report(const char* fn);        // with mu_ held
  void run();                                    // the worker loop

  const int32_t device_;
  const int32_t priority_;  // stored; the host has no way to prefer a stream
  const bool is_default_;

  std::mutex mu_;
  std::condition_variable work_cv_;  // worker: queue changed or closing
  std::condition_variable done_cv_;  // waiters: completed_ grew
  std::deque<Task> queue_;
  uint64_t enqueued_ = 0;
  uint64_t completed_ = 0;
  bool worker_started_ = false;
  bool closing_ = false;
  flagos_status_t error_ = FLAGOS_SUCCESS;  // first failure, sticky
  std::string error_message_;
  std::shared_ptr<Capture> capture_;  // set while capturing
};

}  // namespace flagos_host
