// flagos dtypes and reductions as the NCCL-shaped library's enums
// (ncclDataType_t, ncclRedOp_t of nccl.h; RCCL and MCCL keep the values).
#pragma once

#include <cstdint>

#include "flagos/ext/collectives.h"

namespace flagos_cudalike {

struct CommType {
  int nccl;       // ncclDataType_t
  uint32_t size;  // bytes per element
  bool is_float;
  bool is_bool;   // carried as ncclUint8, 0 or 1
};

// False for a dtype the library has no type for (int16, uint16, complex,
// lanes > 1), and for bfloat16 on a library older than NCCL 2.10 (`version`:
// an NCCL_VERSION code; 0 when not known yet).
bool comm_type_of(flagos_dtype_t dtype, int version, CommType* out);

// FLAGOS_REDUCE_* on `type` as an ncclRedOp_t. Booleans reduce as their
// logic (SUM and MAX: or; PROD and MIN: and). False for AVG on a non-floating
// type, or on a library older than NCCL 2.10 (no ncclAvg).
bool comm_op_of(int32_t op, const CommType& type, int version, int* out);

}  // namespace flagos_cudalike
