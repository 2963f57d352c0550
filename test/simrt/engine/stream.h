// A stream is one worker thread running a FIFO of operations, each numbered
// by a per-stream sequence. "Has op N finished" is then one comparison, and an
// event or a cross-stream wait is just (stream, sequence number).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace simrt {

class Stream;
using Clock = std::chrono::steady_clock;

// A point in a stream: "after op `seq`". `when` is written by the worker as it
// reaches the op, before the op counts as complete.
struct Point {
  std::shared_ptr<Stream> stream;
  uint64_t seq = 0;
  Clock::time_point when{};
};

// Another stream's point this op must wait for before it runs.
struct Dep {
  std::shared_ptr<Stream> stream;
  uint64_t seq = 0;
};

class Stream : public std::enable_shared_from_this<Stream> {
 public:
  // Starts the worker; it holds a reference until close() and the queue drains.
  static std::shared_ptr<Stream> create(int device, int priority, unsigned flags, bool legacy,
                                        bool non_blocking);

  // Appends an op; returns its sequence number. `mark`, when set, gets the
  // time the worker reached the op (events).
  uint64_t enqueue(std::function<void()> fn, std::vector<Dep> deps = {},
                   std::shared_ptr<Point> mark = nullptr);
  void wait(uint64_t seq);      // until op `seq` has completed
  bool done(uint64_t seq);      // op `seq` has completed
  uint64_t last();              // sequence number of the newest op
  void wait_all() { wait(last()); }
  bool idle() { return done(last()); }
  void close();                 // no more ops; the worker exits once drained

  const uint32_t id;        // process-unique, never reused: CUPTI's streamId (observer.h)
  const int device;
  const int priority;
  const unsigned flags;
  const bool legacy;        // the device's NULL stream
  const bool non_blocking;  // opted out of implicit sync with the legacy stream

 private:
  struct Op {
    uint64_t seq;
    std::function<void()> fn;
    std::vector<Dep> deps;
    std::shared_ptr<Point> mark;
  };
  Stream(int device, int priority, unsigned flags, bool legacy, bool non_blocking);
  void run(std::shared_ptr<Stream> self);

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::deque<Op> queue_;
  uint64_t enqueued_ = 0;
  uint64_t completed_ = 0;
  bool closed_ = false;
};

// True on a stream worker while it runs a host function (callbacks may not
// call the runtime).
bool in_host_callback();
void set_in_host_callback(bool on);

}  // namespace simrt
