// ATen operators by their routing name: "add.Tensor", "mm" (the name a conf,
// FLAGOS_OP_<op> and torch_fl.routes() use: the schema name without "aten::").
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>
#include <string>

namespace flagos::routes {

// The operator, if this torch declares it. Any thread; no registration.
inline std::optional<c10::OperatorHandle> find_aten_op(const std::string& op) {
  const auto dot = op.find('.');
  return c10::Dispatcher::singleton().findSchema(
      {"aten::" + op.substr(0, dot), dot == std::string::npos ? "" : op.substr(dot + 1)});
}

}  // namespace flagos::routes
