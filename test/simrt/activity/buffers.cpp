#include "buffers.h"

#include <cstring>

#include "rule.h"

namespace simrt::activity {

void Buffers::set_callbacks(RequestFn request, CompleteFn complete, std::string symbol) {
  std::lock_guard<std::mutex> lock(mu_);
  request_ = request;
  complete_ = complete;
  symbol_ = std::move(symbol);
}

bool Buffers::registered() {
  std::lock_guard<std::mutex> lock(mu_);
  return request_ != nullptr;
}

// Asks the client for a buffer for an n-byte record. One it cannot use
// (misaligned, too small) goes back to it empty through `back`, so it is freed.
Buffers::Buf Buffers::request(size_t n, std::vector<Buf>* back) {
  Buf b;
  request_(&b.data, &b.size, &b.max);
  if (b.data == nullptr) return Buf{};
  if (reinterpret_cast<uintptr_t>(b.data) % 8 != 0) {
    rule(symbol_, "the requested-buffer callback returned %p, not 8-byte aligned (activity records are, "
                  "cupti_activity.h PACKED_ALIGNMENT): the buffer is returned unused and records are dropped",
         static_cast<void*>(b.data));
    back->push_back(b);
    return Buf{};
  }
  if (!fits(b, n)) {
    back->push_back(b);
    return Buf{};
  }
  return b;
}

void Buffers::write(const void* record, size_t n) {
  std::vector<Buf> out;
  {
    // The request callback runs under the lock: it only hands out memory.
    std::lock_guard<std::mutex> lock(mu_);
    if (request_ == nullptr) {
      ++dropped_;
      return;
    }
    if (cur_.data != nullptr && !fits(cur_, n)) {
      out.push_back(cur_);
      cur_ = Buf{};
    }
    if (cur_.data == nullptr) cur_ = request(n, &out);
    if (cur_.data == nullptr) {
      ++dropped_;
    } else {
      std::memcpy(cur_.data + cur_.used, record, n);
      cur_.used += n;
      ++cur_.count;
      if (cur_.max != 0 && cur_.count >= cur_.max) {  // full by count: returned at once
        out.push_back(cur_);
        cur_ = Buf{};
      }
    }
  }
  deliver(out);
}

void Buffers::flush() {
  std::vector<Buf> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cur_.used != 0) {  // an empty buffer stays for the next record
      out.push_back(cur_);
      cur_ = Buf{};
    }
  }
  deliver(out);
}

size_t Buffers::take_dropped() { return dropped_.exchange(0); }

void Buffers::deliver(const std::vector<Buf>& bufs) {
  if (bufs.empty()) return;
  CompleteFn complete;
  {
    std::lock_guard<std::mutex> lock(mu_);
    complete = complete_;
  }
  for (const Buf& b : bufs) complete(nullptr, 0, b.data, b.size, b.used);
}

}  // namespace simrt::activity
