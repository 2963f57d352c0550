// flagos-<vendor>-probe <runtime library>: prints the device table
// (device_table.h) and exits, so that the plugin learns the devices without
// initialising the runtime in the process that loaded it. Run it by hand
// (with no argument it searches as the plugin does) to see what the plugin
// will see.
#include <cstdio>
#include <string>

#include "device_table.h"

int main(int argc, char** argv) {
  using namespace flagos_cudalike;
  if (argc > 1 && argv[1][0] != '\0') set_runtime_override(argv[1]);
  std::string why;
  const Runtime* rt = try_load(&why);
  DeviceTable table;
  if (rt != nullptr)
    table = enumerate(*rt);
  else
    table.note = why;
  std::string text = serialize(table);
  return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0 ? 0 : 1;
}
