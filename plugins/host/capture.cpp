#include "capture.h"

#include <atomic>
#include <utility>

#include "kit.h"

namespace flagos_host {
namespace {

std::atomic<uint64_t> g_next_capture_id{1};

}  // namespace

Capture::Capture(int32_t device) : id_(g_next_capture_id.fetch_add(1)), device_(device) {}

flagos_status_t Capture::append(const char* fn, Node node) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!broken_by_.empty()) return broken(fn);
  nodes_.push_back(std::move(node));
  return FLAGOS_SUCCESS;
}

flagos_status_t Capture::invalidate(const char* fn, const char* what) {
  std::lock_guard<std::mutex> lock(mu_);
  if (broken_by_.empty()) broken_by_ = std::string(fn) + " (" + what + ")";
  nodes_.clear();  // never launched: let go of the blocks it holds
  return fail(FLAGOS_ERROR_STREAM_CAPTURE,
              "%s: %s is not permitted while a stream captures; capture %llu is invalidated "
              "(capture_end reports it and ends capture mode)",
              fn, what, (unsigned long long)id_);
}

bool Capture::underway() {
  std::lock_guard<std::mutex> lock(mu_);
  return !ended_;
}

bool Capture::invalidated() {
  std::lock_guard<std::mutex> lock(mu_);
  return !broken_by_.empty();
}

flagos_status_t Capture::finish(const char* fn, std::vector<Node>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  ended_ = true;
  if (!broken_by_.empty()) return broken(fn);
  *out = std::move(nodes_);
  nodes_.clear();
  return FLAGOS_SUCCESS;
}

flagos_status_t Capture::broken(const char* fn) {
  return fail(FLAGOS_ERROR_STREAM_CAPTURE, "%s: capture %llu was invalidated by %s", fn,
              (unsigned long long)id_, broken_by_.c_str());
}

flagos_status_t launch(const char* fn, const Recording& rec, Stream& stream) {
  std::vector<Task> tasks;
  std::vector<std::pair<std::shared_ptr<Event>, std::shared_ptr<Marker>>> records;
  tasks.reserve(rec.nodes.size());
  Stream* raw = &stream;  // the worker running the task keeps the stream alive
  for (const Node& n : rec.nodes) {
    if (!n.record) {
      tasks.push_back(n.task);
      continue;
    }
    std::shared_ptr<Marker> m = n.record->next_marker();
    tasks.push_back([m, raw] {
      m->complete(raw->error_status());
      return FLAGOS_SUCCESS;
    });
    records.emplace_back(n.record, std::move(m));
  }
  flagos_status_t st = stream.enqueue_batch(fn, std::move(tasks));
  if (st != FLAGOS_SUCCESS) return st;
  for (auto& [event, marker] : records) event->publish(std::move(marker));
  return FLAGOS_SUCCESS;
}

}  // namespace flagos_host
