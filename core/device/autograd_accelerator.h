// Which device type torch's autograd engine treats as "the accelerator".
//
// torch (2.9 and later, pytorch#161129) asks at::accelerator::getAccelerator()
// for the one device type whose streams the engine orders, and answers
// PrivateUse1 as soon as a PrivateUse1 backend is named. A backward over
// native CUDA tensors in a process that imported torch_fl then finds no
// stream on its nodes and fails `opt_ready_stream && opt_parent_stream`
// (engine.cpp). The core redirects torch's calls to getAccelerator through
// the import tables of the loaded libraries, so that for the length of a
// backward whose roots are on another accelerator (torch_fl.autograd opens
// that window) the engine sees that device type; at every other moment the
// answer is torch's own.
#pragma once

#include <c10/core/DeviceType.h>

#include <optional>
#include <string>

namespace flagos::device {

// Points every loaded library's import of getAccelerator at the core's
// answer. Idempotent; returns "" when installed (now or before), else why not
// (the process keeps torch's behaviour). Call with the GIL held, at import.
std::string install_accelerator_redirect();

// Number of import slots redirected (0 before installing or when it failed).
int accelerator_redirect_slots();

// The device type getAccelerator answers until reset; std::nullopt restores
// torch's own answer. Process-wide: torch_fl.autograd serialises windows of
// different device types.
void set_autograd_accelerator(std::optional<c10::DeviceType> type);
std::optional<c10::DeviceType> autograd_accelerator();

}  // namespace flagos::device
