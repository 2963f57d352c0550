#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/function_schema.h>

namespace flagos::routes {

// How a kernel's declared schema compares with the one this torch registers
// under the same operator name. A kernel serves an operator only when they
// are the same: otherwise it would read its arguments wrongly. Callers word
// the mismatch for their own kernels (native.cpp, typed_boxing_ops.cpp).
enum class SchemaFit { kSame, kNoOperator, kDeclaredDifferently };

inline SchemaFit schema_fit(const c10::FunctionSchema& declared) {
  auto op = c10::Dispatcher::singleton().findSchema(declared.operator_name());
  if (!op) return SchemaFit::kNoOperator;
  return op->schema() == declared ? SchemaFit::kSame : SchemaFit::kDeclaredDifferently;
}

}  // namespace flagos::routes
