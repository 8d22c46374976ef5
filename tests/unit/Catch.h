// Includes Catch2, version 2 (Debian 12) or 3 (Ubuntu 24.04), behind one name.
#pragma once

#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_test_macros.hpp>
#else
#include <catch2/catch.hpp>
#endif
