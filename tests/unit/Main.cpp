// Catch2 v2's main; Catch2 v3 links its own (Catch2::Catch2WithMain).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
