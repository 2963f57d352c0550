"""Build configuration for torch_fl (docs/environment-variables.md, "Build
switches"; docs/architecture.md, "Build record"). Importable without torch and without a
build: CMake runs ``python -m tools.build_config write`` at configure time."""

from tools.build_config.resolve import (ACCELERATORS, BUILD_SWITCHES, KERNEL_SWITCHES,
                                        PRERELEASE_RE, BuildConfigError, Resolved,
                                        load_platforms, parse_bool, resolve, switch_on)

__all__ = ["ACCELERATORS", "BUILD_SWITCHES", "KERNEL_SWITCHES", "PRERELEASE_RE",
           "BuildConfigError", "Resolved", "load_platforms", "parse_bool", "resolve", "switch_on"]
