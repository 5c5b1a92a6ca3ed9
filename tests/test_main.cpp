// The test executables' main: Catch2 v2 generates it here; with v3 it comes
// from the Catch2::Catch2WithMain library (tests/CMakeLists.txt).
#if ZB_CATCH2_MAJOR != 3
#define CATCH_CONFIG_MAIN
#include "support/catch.hpp"
#endif
