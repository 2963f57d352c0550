// Correlation ids: one per enqueued op, and the calling thread's stacks of
// external ids (cuptiActivityPush/PopExternalCorrelationId), one per kind.
#pragma once

#include <cstdint>

namespace simrt::activity {

uint32_t next_correlation_id();  // process-wide counter, never 0

// Result codes (constants.h): InvalidParameter for a kind outside 1..5,
// QueueEmpty for a pop of an empty stack (lastId may be NULL).
int push_external_id(int kind, uint64_t id);
int pop_external_id(int kind, uint64_t* last);
// The innermost id of `kind` on this thread; false when its stack is empty.
bool innermost_external_id(int kind, uint64_t* id);

}  // namespace simrt::activity
