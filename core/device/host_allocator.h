// Pinned host memory for flagos: an at::HostAllocator over the plugin's
// host_alloc, cached by memory::HostCache. Its DataPtrs are CPU tensors'
// storage; non_blocking copies record the stream that uses them.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/Stream.h>

namespace flagos::device {

at::Allocator* host_allocator();
// True when `ptr` lies in pinned memory handed out by this allocator, or
// (CUDA-ABI plugins under a CUDA torch) by torch's CUDA pinned allocator.
bool is_pinned(const void* ptr);
// Keeps the pinned block holding `ptr` from reuse until `stream`'s current
// work completed. False when nothing could be recorded: unpinned memory, or
// a pointer inside (not at the start of) a torch CUDA pinned block; the
// caller must then wait for its copy before the host memory is reused.
bool record_host_use(const void* ptr, const c10::Stream& stream);

}  // namespace flagos::device
