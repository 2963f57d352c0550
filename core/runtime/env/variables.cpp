// The declaration table. Order and wording follow docs/environment-variables.md;
// test/python/test_env_registry.py fails when the two disagree.
#include "env/registry.h"

namespace flagos::env {

const std::vector<Variable>& variables() {
  static const std::vector<Variable> table = {
      {"FLAGOS_PLUGIN", Scope::Runtime, Type::String, "", "Auto-discovered", "",
       "Plugin to activate: a plugin name (host, cuda, ...) or a path to a "
       "libflagos_<name>.so. A named plugin that cannot be loaded fails the import "
       "with the real cause instead of falling back"},
      {"FLAGOS_PLUGIN_OPTIONS", Scope::Runtime, Type::List, "", "No default", "",
       "Comma-separated key=value options handed to the plugin at load (the host "
       "plugin reads devices, strict and memory_mb)"},
  };
  return table;
}

}  // namespace flagos::env
