#include "comm_types.h"

namespace flagos_cudalike {
namespace {

// ncclDataType_t and ncclRedOp_t values (nccl.h).
enum : int { kInt8 = 0, kUint8 = 1, kInt32 = 2, kUint32 = 3, kInt64 = 4, kUint64 = 5 };
enum : int { kFloat16 = 6, kFloat32 = 7, kFloat64 = 8, kBfloat16 = 9 };
enum : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };

constexpr int kNccl2_10 = 21000;  // NCCL_VERSION(2, 10, 0): ncclBfloat16 and ncclAvg

bool before_2_10(int version) { return version != 0 && version < kNccl2_10; }

}  // namespace

bool comm_type_of(flagos_dtype_t dtype, int version, CommType* out) {
  if (dtype.lanes != 1) return false;
  const uint32_t bits = dtype.bits;
  auto is = [&](int nccl, bool is_float, bool is_bool = false) {
    *out = CommType{nccl, bits / 8, is_float, is_bool};
    return true;
  };
  switch (dtype.code) {
    case FLAGOS_DTYPE_INT:
      if (bits == 8) return is(kInt8, false);
      if (bits == 32) return is(kInt32, false);
      if (bits == 64) return is(kInt64, false);
      return false;
    case FLAGOS_DTYPE_UINT:
      if (bits == 8) return is(kUint8, false);
      if (bits == 32) return is(kUint32, false);
      if (bits == 64) return is(kUint64, false);
      return false;
    case FLAGOS_DTYPE_FLOAT:
      if (bits == 16) return is(kFloat16, true);
      if (bits == 32) return is(kFloat32, true);
      if (bits == 64) return is(kFloat64, true);
      return false;
    case FLAGOS_DTYPE_BFLOAT:
      return bits == 16 && !before_2_10(version) && is(kBfloat16, true);
    case FLAGOS_DTYPE_BOOL:
      return bits == 8 && is(kUint8, false, true);
    default:
      return false;
  }
}

bool comm_op_of(int32_t op, const CommType& type, int version, int* out) {
  switch (op) {
    case FLAGOS_REDUCE_SUM: *out = type.is_bool ? kMax : kSum; return true;
    case FLAGOS_REDUCE_PROD: *out = type.is_bool ? kMin : kProd; return true;
    case FLAGOS_REDUCE_MIN: *out = kMin; return true;
    case FLAGOS_REDUCE_MAX: *out = kMax; return true;
    case FLAGOS_REDUCE_AVG: *out = kAvg; return type.is_float && !before_2_10(version);
    default: return false;
  }
}

}  // namespace flagos_cudalike
