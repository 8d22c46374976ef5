// `-o` pattern expansion for r3 record.
#include "record/OutputPath.h"

#include "support/StringUtil.h"

namespace r3 {

std::optional<std::string> mpiRank(const EnvLookup &Env) {
  for (const char *Var :
       {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (auto V = Env(Var); V && !V->empty())
      return V;
  return std::nullopt;
}

Expected<std::string> expandOutputPath(const std::string &Pattern, long Pid,
                                       const EnvLookup &Env) {
  std::string Out;
  auto Bad = [&](const std::string &Why) {
    return Error::make("-o '" + Pattern + "': " + Why);
  };
  for (size_t I = 0; I < Pattern.size(); ++I) {
    if (Pattern[I] != '%') {
      Out += Pattern[I];
      continue;
    }
    if (++I == Pattern.size())
      return Bad("a lone '%' at the end (write %% for a percent sign)");
    char C = Pattern[I];
    if (C == '%') {
      Out += '%';
    } else if (C == 'p') {
      Out += std::to_string(Pid);
    } else if (C == 'r') {
      auto Rank = mpiRank(Env);
      if (!Rank)
        return Bad("%r needs an MPI rank, but none of OMPI_COMM_WORLD_RANK, "
                   "PMI_RANK, PMIX_RANK or SLURM_PROCID is set");
      if (!parseUnsigned(*Rank))
        return Bad("%r: the MPI rank '" + *Rank + "' is not a number");
      Out += *Rank;
    } else {
      return Bad(std::string("unknown '%") + C + "' (expected %p, %r or %%)");
    }
  }
  return Out;
}

} // namespace r3
