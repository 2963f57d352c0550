# Third-party dependencies, all from the system (Debian packages) or the
# Python environment (pybind11). Nothing is vendored into the repository.
find_package(Threads REQUIRED)
find_package(Boost 1.70 REQUIRED)            # Boost.DLL is header-only with std::filesystem
find_package(PkgConfig QUIET)

# spdlog, fmt and toml++ are compiled in header-only, whatever the system
# packages' CMake targets say (Debian's link libspdlog/libfmt/libtomlplusplus),
# so that the core wheel needs no shared library of the build machine. Only
# runtime/diag/log.cpp and the two TOML readers include them.
find_path(SPDLOG_INCLUDE_DIR spdlog/spdlog.h)
if(NOT SPDLOG_INCLUDE_DIR)
  message(FATAL_ERROR "[flagos] spdlog not found: install libspdlog-dev")
endif()
add_library(flagos_spdlog INTERFACE)
target_include_directories(flagos_spdlog SYSTEM INTERFACE ${SPDLOG_INCLUDE_DIR})
target_compile_definitions(flagos_spdlog INTERFACE SPDLOG_HEADER_ONLY)
target_link_libraries(flagos_spdlog INTERFACE Threads::Threads)
# Distributions that unbundle fmt from spdlog (Debian, Ubuntu) need it external.
find_path(FMT_INCLUDE_DIR fmt/format.h)
if(FMT_INCLUDE_DIR AND NOT EXISTS ${SPDLOG_INCLUDE_DIR}/spdlog/fmt/bundled/format.h)
  target_include_directories(flagos_spdlog SYSTEM INTERFACE ${FMT_INCLUDE_DIR})
  target_compile_definitions(flagos_spdlog INTERFACE SPDLOG_FMT_EXTERNAL FMT_HEADER_ONLY)
endif()

find_path(TOMLPP_INCLUDE_DIR toml++/toml.h)   # Debian's libtomlplusplus-dev, or headers put beside
if(NOT TOMLPP_INCLUDE_DIR)
  message(FATAL_ERROR "[flagos] toml++ not found: install libtomlplusplus-dev")
endif()
add_library(flagos_tomlpp INTERFACE)
target_include_directories(flagos_tomlpp SYSTEM INTERFACE ${TOMLPP_INCLUDE_DIR})
target_compile_definitions(flagos_tomlpp INTERFACE TOML_HEADER_ONLY=1)

if(FLAGOS_BUILD_TESTS)
  # Catch2 3.x (Debian 13) ships Catch2::Catch2WithMain; 2.x (Debian 12) a
  # single header. test/cpp/catch.hpp hides the difference.
  find_package(Catch2 QUIET)
  if(NOT Catch2_FOUND)
    message(FATAL_ERROR "[flagos] Catch2 not found: install catch2")
  endif()
  set(FLAGOS_CATCH2_MAJOR ${Catch2_VERSION_MAJOR})
endif()
