#include "routes/boxing_plan.h"

#include "routes/boxed_args.h"

namespace flagos::routes {

BoxingPlan::BoxingPlan(const c10::OperatorHandle& op) : traits(op) {
  const c10::FunctionSchema& schema = op.schema();
  const auto& args = schema.arguments();
  const std::vector<bool>& writes = written_arguments(op);
  for (size_t i = 0; i < args.size(); ++i) {
    generator_arg.push_back(is_generator_arg(args[i]));
    if (writes[i]) written.push_back(static_cast<int16_t>(i));
  }
  for (size_t r = 0; r < schema.returns().size(); ++r) {
    const int written_arg = written_argument(schema, r);
    return_of.push_back(static_cast<int16_t>(written_arg));
    keeps_originals |= written_arg >= 0;
  }
}

}  // namespace flagos::routes
