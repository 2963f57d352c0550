# The installed torch, as two imported targets:
#   flagos::torch         libc10 + libtorch_cpu + libtorch (what libtorch_fl_core needs)
#   flagos::torch_python  + libtorch_python (only the _C extension links it)
# Found through the Python interpreter rather than find_package(Torch): the
# Caffe2 config drags in CUDA/kineto discovery that a CPU wheel lacks, and we
# need nothing from it but paths and the C++ ABI flag.
execute_process(
  COMMAND ${Python_EXECUTABLE} -c
    "import os, torch; print(os.path.dirname(torch.__file__)); print(int(torch._C._GLIBCXX_USE_CXX11_ABI)); print(torch.__version__)"
  OUTPUT_VARIABLE _flagos_torch OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE _flagos_torch_rc ERROR_VARIABLE _flagos_torch_err)
if(NOT _flagos_torch_rc EQUAL 0)
  message(FATAL_ERROR " [flagos] the core links libtorch, but `import torch` failed in ${Python_EXECUTABLE}:\n${_flagos_torch_err}")
endif()
string(REPLACE "\n" ";" _flagos_torch "${_flagos_torch}")
list(GET _flagos_torch 0 FLAGOS_TORCH_DIR)
list(GET _flagos_torch 1 FLAGOS_TORCH_CXX11_ABI)
list(GET _flagos_torch 2 FLAGOS_TORCH_VERSION)
message(STATUS "torch ${FLAGOS_TORCH_VERSION} at ${FLAGOS_TORCH_DIR}")

set(_lib ${FLAGOS_TORCH_DIR}/lib)
add_library(flagos_torch INTERFACE)
target_include_directories(flagos_torch SYSTEM INTERFACE
  ${FLAGOS_TORCH_DIR}/include ${FLAGOS_TORCH_DIR}/include/torch/csrc/api/include)
target_compile_definitions(flagos_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=${FLAGOS_TORCH_CXX11_ABI})
# torch >= 2.10 headers are written for C++20.
target_compile_features(flagos_torch INTERFACE cxx_std_20)
target_link_libraries(flagos_torch INTERFACE ${_lib}/libc10.so ${_lib}/libtorch_cpu.so ${_lib}/libtorch.so)
add_library(flagos::torch ALIAS flagos_torch)

add_library(flagos_torch_python INTERFACE)
target_link_libraries(flagos_torch_python INTERFACE flagos_torch ${_lib}/libtorch_python.so)
add_library(flagos::torch_python ALIAS flagos_torch_python)

# torch's libraries use the process's shared libstdc++. A core linked with a
# static one (e.g. by a /opt/gcc some CUDA images set as CC/CXX) carries
# a second copy, and the two copies' iostreams and locales do not mix: the
# first number streamed into a c10 error message crashes. A g++ without a
# shared libstdc++ can only do that, so it is refused here, before the build;
# every linked core is checked as well (FlagosCheckOneLibstdcxx.cmake).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so
                  OUTPUT_VARIABLE _flagos_libstdcxx OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${_flagos_libstdcxx}")
    message(FATAL_ERROR " [flagos] ${CMAKE_CXX_COMPILER} has no shared libstdc++ "
            "(-print-file-name=libstdc++.so finds none): the core would carry a static copy beside "
            "the one torch uses, and the two crash together. Build with a g++ that has one, "
            "e.g. the system's: CC=gcc CXX=g++.")
  endif()
endif()
