// flagos-cuda-probe: prints the CUDA device table (device_table.h) and exits,
// so that the plugin can learn the devices without initialising CUDA in the
// process that loaded it. Run it by hand to see what the plugin will see.
#include <cstdio>

#include "device_table.h"

int main() {
  std::string text = flagos_cuda::serialize(flagos_cuda::enumerate());
  return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0
             ? 0
             : 1;
}
