# Third-party dependencies, all from the system (Debian packages) or the
# Python environment (pybind11). Nothing is vendored into the repository.
find_package(Threads REQUIRED)
find_package(spdlog REQUIRED)
find_package(Boost 1.70 REQUIRED)            # Boost.DLL is header-only with std::filesystem
find_package(PkgConfig QUIET)

# toml++: CMake config on Debian 13, pkg-config or bare header on Debian 12.
find_package(tomlplusplus QUIET)
if(NOT TARGET tomlplusplus::tomlplusplus)
  find_path(TOMLPP_INCLUDE_DIR toml++/toml.h)
  if(NOT TOMLPP_INCLUDE_DIR)
    message(FATAL_ERROR "[flagos] toml++ not found: install libtomlplusplus-dev")
  endif()
  add_library(tomlplusplus::tomlplusplus INTERFACE IMPORTED)
  target_include_directories(tomlplusplus::tomlplusplus INTERFACE ${TOMLPP_INCLUDE_DIR})
endif()

if(FLAGOS_BUILD_TESTS)
  # Catch2 3.x (Debian 13) ships Catch2::Catch2WithMain; 2.x (Debian 12) a
  # single header. test/cpp/catch.hpp hides the difference.
  find_package(Catch2 QUIET)
  if(NOT Catch2_FOUND)
    message(FATAL_ERROR "[flagos] Catch2 not found: install catch2")
  endif()
  set(FLAGOS_CATCH2_MAJOR ${Catch2_VERSION_MAJOR})
endif()
