// Catch2 2.x needs a translation unit that defines main; 3.x links Catch2WithMain.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
