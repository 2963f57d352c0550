// The calling thread's stream-capture mode made relaxed for one scope, as
// torch's CUDA allocator does around cudaMalloc: allocating is legal during
// a capture (the graph keeps the address; replays allocate nothing), but
// the thread-local mode a capturing thread is in refuses it otherwise.
// A runtime without ThreadExchangeStreamCaptureMode is left as it is.
#pragma once

#include "errors.h"

namespace flagos_cudalike {

class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() {
    const Runtime& r = rt();
    if (r.thread_exchange_stream_capture_mode != nullptr &&
        r.thread_exchange_stream_capture_mode(&mode_) == 0)
      active_ = true;
  }
  ~RelaxedCaptureMode() {
    if (active_) rt().thread_exchange_stream_capture_mode(&mode_);
  }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  int mode_ = 2;  // cudaStreamCaptureModeRelaxed in, the thread's previous mode out
  bool active_ = false;
};

}  // namespace flagos_cudalike
