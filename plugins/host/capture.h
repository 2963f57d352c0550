// Stream capture (FLAGOS_EXTENSION_GRAPHS): a capture is the list of work a
// stream recorded instead of running; a graph and an executable are that
// list, frozen. Launching enqueues the recorded tasks again, in order, so
// recorded work must be re-runnable: every Task already is (it holds its
// resolved pointers and values, and the blocks they live in).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "event.h"
#include "flagos/abi.h"
#include "stream.h"

namespace flagos_host {

// One recorded step: a task, or (record set) an event_record to redo on the
// launch stream at this point.
struct Node {
  Task task;
  std::shared_ptr<Event> record;
};

class Capture {
 public:
  explicit Capture(int32_t device);
  uint64_t id() const { return id_; }
  int32_t device() const { return device_; }

  // Appends a step. FLAGOS_ERROR_STREAM_CAPTURE once invalidated.
  flagos_status_t append(const char* fn, Node node);
  // Breaks the capture because `fn` did `what`; returns the status to give
  // the caller (FLAGOS_ERROR_STREAM_CAPTURE, with the message set).
  flagos_status_t invalidate(const char* fn, const char* what);
  // Whether still capturing (not yet ended), and whether broken.
  bool underway();
  bool invalidated();
  // Ends the capture: the recorded steps, or FLAGOS_ERROR_STREAM_CAPTURE
  // naming what broke it.
  flagos_status_t finish(const char* fn, std::vector<Node>* out);

 private:
  flagos_status_t broken(const char* fn);  // with mu_ held

  const uint64_t id_;
  const int32_t device_;
  std::mutex mu_;
  std::vector<Node> nodes_;
  bool ended_ = false;
  std::string broken_by_;  // non-empty once invalidated
};

// A captured graph, and an executable made of one: both immutable.
struct Recording {
  int32_t device;
  std::vector<Node> nodes;
};

// Enqueues `rec` on `stream` as one batch; records' markers are published
// once the batch is in. UNSUPPORTED when `stream` is itself capturing.
flagos_status_t launch(const char* fn, const Recording& rec, Stream& stream);

}  // namespace flagos_host
