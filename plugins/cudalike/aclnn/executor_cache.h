// Prepared aclnn executors, reused across calls: preparing one
// (aclnn<Name>GetWorkspaceSize) costs far more than launching it, and a
// training step calls the same operators on the same shapes every time. An
// entry is keyed by the operator and everything the preparation saw but a
// tensor's address (dtypes, shapes, strides, scalar values); a hit only
// points the executor at the call's memory (aclSet{Input,Output}TensorAddr)
// and launches. Executors are marked repeatable when stored.
// Threading: callers hold mutex() around find/insert and the launch.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "aclnn/library.h"

namespace flagos_cudalike::aclnn {

// One preparation's result. A declined one (executor nullptr) is kept too,
// so that operands aclnn refused are refused again without asking.
struct Prepared {
  aclOpExecutor* executor = nullptr;
  std::vector<aclTensor*> inputs;  // in the operator's input order
  std::vector<aclTensor*> outputs;
  aclScalar* scalar = nullptr;
  uint64_t workspace = 0;  // bytes each launch needs
  std::string declined;    // why aclnn refused, when executor is nullptr
};

class ExecutorCache {
 public:
  // Entries per device; past it the device's entries are dropped together.
  static constexpr size_t kCapacity = 512;

  std::mutex& mutex() { return mutex_; }
  // The entry for `key` on `device`, or nullptr.
  Prepared* find(int32_t device, const std::string& key);
  // Stores `p`. A device already holding kCapacity entries first runs
  // `drain` (its queued launches may still read their executors) and then
  // destroys them all.
  Prepared* insert(const Library& lib, int32_t device, std::string key, Prepared p,
                   const std::function<void()>& drain);

 private:
  std::mutex mutex_;
  std::map<int32_t, std::unordered_map<std::string, std::unique_ptr<Prepared>>> entries_;
};

// Destroys what a preparation created (the executor only when repeatable:
// a launch frees a one-shot executor itself).
void release(const Library& lib, Prepared* p, bool repeatable);

// The process's cache (leaked: kernels may run during static destruction).
ExecutorCache& executor_cache();

}  // namespace flagos_cudalike::aclnn
