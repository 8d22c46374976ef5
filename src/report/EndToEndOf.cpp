// The end-to-end part of the report (Model.h): the kernels'
// shares come from the campaign stored in the history, their speedups from
// the summaries, the measured runs from the history's app_runs.
#include "report/Model.h"

#include "report/EndToEnd.h"
#include "support/StringUtil.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace r3::report {

using nlohmann::json;

Expected<EndToEnd> endToEndOf(History &H,
                                      const std::vector<KernelSummary> &Ks) {
  std::optional<CampaignRow> Row;
  R3_TRY(moveInto(H.campaign(), Row));
  std::vector<std::pair<std::string, double>> Shares;
  if (Row)
    if (auto C = storedCampaign(*Row, H.path()))
      for (const KernelSpec &K : C->Kernels)
        if (K.Share)
          Shares.emplace_back(K.Name, *K.Share);
  std::vector<AppRunRow> Runs;
  R3_TRY(moveInto(H.appRuns(), Runs));
  return report::endToEnd(Ks, Shares, Runs);
}

json endToEndJson(const report::EndToEnd &E) {
  if (!E.known())
    return nullptr;
  json Kernels = json::array();
  for (const report::KernelPart &K : E.Kernels)
    Kernels.push_back(
        {{"name", K.Name}, {"share", K.Share}, {"speedup", K.Speedup}});
  auto Finite = [](double V) { return std::isfinite(V) ? json(V) : json(); };
  auto Opt = [](std::optional<double> V) { return V ? json(*V) : json(); };
  return {{"kernels", Kernels},
          {"share_of_run", E.Shares},
          {"predicted", Finite(E.Predicted)},
          {"ceiling", Finite(E.Ceiling)},
          {"original_wall_s", E.Original},
          {"tuned_wall_s", E.Tuned},
          {"measured", Opt(E.Measured)},
          {"measured_lo", Opt(E.MeasuredLo)},
          {"measured_hi", Opt(E.MeasuredHi)},
          {"summary", report::describeEndToEnd(E)}};
}

std::string endToEndText(const json &E) {
  if (!E.is_object())
    return "";
  std::string Out = "end to end:  " + E["summary"].get<std::string>() + "\n";
  std::vector<std::string> Parts;
  for (const json &K : E["kernels"])
    Parts.push_back(K["name"].get<std::string>() + " " +
                    formatShare(K["share"].get<double>()) + " of the run at " +
                    formatFactor(K["speedup"].get<double>()));
  return Out + "             " + join(Parts, ", ") + "\n";
}

} // namespace r3::report
