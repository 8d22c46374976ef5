// `r3 record -o` pattern expansion: %p, %r from each launcher's variable, %%.
#include "Catch.h"

#include "record/OutputPath.h"

#include <map>

using namespace r3;

namespace {
EnvLookup envOf(std::map<std::string, std::string> Vars) {
  return [Vars](const std::string &Name) -> std::optional<std::string> {
    auto It = Vars.find(Name);
    if (It == Vars.end())
      return std::nullopt;
    return It->second;
  };
}
} // namespace

TEST_CASE("%p and %% expand without a launcher", "[record]") {
  auto P = expandOutputPath("cap-%p-100%%.h5", 4242, envOf({}));
  REQUIRE(P);
  CHECK(*P == "cap-4242-100%.h5");
}

TEST_CASE("%r takes the rank from each launcher's variable", "[record]") {
  CHECK(*expandOutputPath("c%r.h5", 1,
                          envOf({{"OMPI_COMM_WORLD_RANK", "3"}})) == "c3.h5");
  CHECK(*expandOutputPath("c%r.h5", 1, envOf({{"PMI_RANK", "5"}})) == "c5.h5");
  CHECK(*expandOutputPath("c%r.h5", 1, envOf({{"SLURM_PROCID", "7"}})) ==
        "c7.h5");
  // Open MPI's own variable wins over Slurm's when both are set (mpirun in
  // srun).
  CHECK(*expandOutputPath("c%r.h5", 1,
                          envOf({{"SLURM_PROCID", "0"},
                                 {"OMPI_COMM_WORLD_RANK", "2"}})) == "c2.h5");
}

TEST_CASE("bad -o patterns are errors that name the pattern", "[record]") {
  auto NoRank = expandOutputPath("c%r.h5", 1, envOf({}));
  REQUIRE_FALSE(NoRank);
  CHECK(NoRank.error().message().rfind("-o 'c%r.h5': %r needs an MPI rank",
                                       0) == 0);
  auto Unknown = expandOutputPath("c%q.h5", 1, envOf({}));
  REQUIRE_FALSE(Unknown);
  CHECK(Unknown.error().message() ==
        "-o 'c%q.h5': unknown '%q' (expected %p, %r or %%)");
  CHECK_FALSE(expandOutputPath("c%", 1, envOf({})));
  CHECK_FALSE(expandOutputPath("c%r", 1, envOf({{"PMI_RANK", "x"}})));
}
