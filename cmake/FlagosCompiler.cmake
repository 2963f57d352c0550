# Compiler settings every torch_fl build shares: the main project and a
# plugin built alone for its wheel (tools/plugin_wheel/CMakeLists.txt).
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_C_STANDARD 99)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)

# Frame pointers, as torch's own libraries keep them: Linux perf can then walk
# a sample's stack through the core and plugins into torch (perf record -g;
# tools/bench/perf_profile.py --callers). Costs about a register.
add_compile_options(-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer)

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_C_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()
