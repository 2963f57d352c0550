#include "correlation.h"

#include <atomic>
#include <vector>

#include "constants.h"

namespace simrt::activity {
namespace {

std::atomic<uint32_t> g_next{1};
thread_local std::vector<uint64_t> t_stacks[kExternalKindCount];

bool valid(int kind) { return kind >= kExternalKindFirst && kind < kExternalKindCount; }

}  // namespace

uint32_t next_correlation_id() {
  uint32_t id = g_next++;
  return id != 0 ? id : g_next++;  // after 2^32 ops the counter wraps past 0
}

int push_external_id(int kind, uint64_t id) {
  if (!valid(kind)) return kInvalidParameter;
  t_stacks[kind].push_back(id);
  return kSuccess;
}

int pop_external_id(int kind, uint64_t* last) {
  if (!valid(kind)) return kInvalidParameter;
  std::vector<uint64_t>& s = t_stacks[kind];
  if (s.empty()) return kQueueEmpty;
  if (last != nullptr) *last = s.back();
  s.pop_back();
  return kSuccess;
}

bool innermost_external_id(int kind, uint64_t* id) {
  const std::vector<uint64_t>& s = t_stacks[kind];
  if (s.empty()) return false;
  *id = s.back();
  return true;
}

}  // namespace simrt::activity
