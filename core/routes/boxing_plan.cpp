#include "routes/boxing_plan.h"

#include "routes/boxed_args.h"

namespace flagos::routes {

BoxingPlan::BoxingPlan(const c10::OperatorHandle& op) : traits(op) {
  const c10::FunctionSchema& schema = op.schema();
  const auto& args = schema.arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    generator_arg.push_back(is_generator_arg(args[i]));
    if (args[i].alias_info() && args[i].alias_info()->isWrite()) written.push_back(static_cast<int16_t>(i));
  }
  for (size_t r = 0; r < schema.returns().size(); ++r) {
    const int alias = aliased_argument(schema, r);
    const bool writes = alias >= 0 && args[alias].alias_info()->isWrite();
    return_of.push_back(static_cast<int16_t>(writes ? alias : -1));
    keeps_originals |= writes;
  }
}

}  // namespace flagos::routes
