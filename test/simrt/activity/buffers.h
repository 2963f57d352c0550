// The client's activity buffers: requested through its callback when a record
// needs room, handed back through the other when full or flushed. All
// buffers are global (CUDA 6+): completed gets context NULL, stream id 0.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace simrt::activity {

// CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc.
using RequestFn = void (*)(uint8_t** buffer, size_t* size, size_t* max_records);
using CompleteFn = void (*)(void* context, uint32_t stream_id, uint8_t* buffer, size_t size, size_t valid);

class Buffers {
 public:
  // `symbol` names the registering call in the rule line of a misaligned buffer.
  void set_callbacks(RequestFn request, CompleteFn complete, std::string symbol);
  bool registered();
  // Copies one record (a multiple of 8 bytes) in. Dropped, and counted, when
  // no callback is registered or the client gives no buffer that holds it.
  void write(const void* record, size_t n);
  // Hands every buffer holding records to `completed` on the calling thread.
  void flush();
  size_t take_dropped();  // since the last call (cupti_activity.h resets it)

 private:
  struct Buf {
    uint8_t* data = nullptr;
    size_t size = 0, used = 0, max = 0, count = 0;
  };
  bool fits(const Buf& b, size_t n) const { return b.used + n <= b.size && (b.max == 0 || b.count < b.max); }
  Buf request(size_t n, std::vector<Buf>* back);  // under mu_
  void deliver(const std::vector<Buf>& bufs);     // outside mu_: completed may call back in

  std::mutex mu_;
  RequestFn request_ = nullptr;
  CompleteFn complete_ = nullptr;
  std::string symbol_;
  Buf cur_;
  std::atomic<size_t> dropped_{0};
};

}  // namespace simrt::activity
