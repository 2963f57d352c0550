/* The public headers compile as strict C99 (no C11, no GNU extensions). */
#define FLAGOS_BUILDING_PLUGIN 1
#include "flagos/flagos.h"

int flagos_header_c99_probe(void) {
  flagos_plugin_api_t api = {0};
  api.struct_size = sizeof(api);
  return FLAGOS_HAS_FN(flagos_plugin_api_t, &api, event_elapsed_ms) ? 1 : 0;
}
