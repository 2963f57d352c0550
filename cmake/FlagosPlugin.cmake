# flagos_add_plugin(<vendor> SOURCES ... [LIBS ...] [OUTPUT_DIR dir]
#                   [ABI_INCLUDE_DIR dir] [TEST_ONLY])
# Builds plugins/<vendor>/libflagos_<vendor>.so against include/ only, with
# exactly one exported symbol (flagos_plugin_get_api).
set(FLAGOS_PLUGIN_VERSION_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/flagos_plugin.map)

# flagos_plugin_destination(<vendor> <dir_var> <site_packages_var>)
# Where a plugin's files install, and site-packages as seen from there (for
# an RUNPATH into another wheel, e.g. $ORIGIN/../../../nvidia/cu13/lib):
# torch_fl/plugins/<vendor> in torch_fl's own wheel, or the plugin wheel's
# package torch_fl_plugin_<vendor> when FLAGOS_PLUGIN_WHEEL is ON
# (tools/plugin_wheel).
function(flagos_plugin_destination vendor dir_var site_var)
  if(FLAGOS_PLUGIN_WHEEL)
    set(${dir_var} torch_fl_plugin_${vendor} PARENT_SCOPE)
    set(${site_var} "$ORIGIN/.." PARENT_SCOPE)
  else()
    set(${dir_var} torch_fl/plugins/${vendor} PARENT_SCOPE)
    set(${site_var} "$ORIGIN/../../.." PARENT_SCOPE)
  endif()
endfunction()

function(flagos_add_plugin vendor)
  cmake_parse_arguments(ARG "TEST_ONLY" "OUTPUT_DIR;ABI_INCLUDE_DIR" "SOURCES;LIBS" ${ARGN})
  set(target flagos_${vendor})
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR ${FLAGOS_OUT}/plugins/${vendor})
  endif()
  add_library(${target} SHARED ${ARG_SOURCES})
  if(ARG_ABI_INCLUDE_DIR)  # an older, frozen copy of include/ (ABI tests)
    target_include_directories(${target} PRIVATE ${ARG_ABI_INCLUDE_DIR})
  else()
    target_link_libraries(${target} PRIVATE flagos_abi)
  endif()
  target_link_libraries(${target} PRIVATE ${ARG_LIBS})
  target_compile_definitions(${target} PRIVATE FLAGOS_BUILDING_PLUGIN=1)
  set_target_properties(${target} PROPERTIES
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIR})
  target_link_options(${target} PRIVATE
    "LINKER:--version-script=${FLAGOS_PLUGIN_VERSION_SCRIPT}"
    "LINKER:-z,defs"
    "-static-libstdc++" "-static-libgcc")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${FLAGOS_PLUGIN_VERSION_SCRIPT})
  if(NOT ARG_TEST_ONLY)
    flagos_plugin_destination(${vendor} destination _site)
    install(TARGETS ${target} LIBRARY DESTINATION ${destination})
  endif()
endfunction()
