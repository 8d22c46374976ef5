// What `r3 report`, `r3 status`, `r3 export` and `r3 run` share: the
// report's model and its summaries, which live in src/report
// (report/Model.h, report/Summary.h); the commands here read the history
// and print.
#pragma once

#include "report/Model.h"

namespace r3::cli {

using report::Estimate;
using report::KernelSummary;
using report::ReportedFailures;
using report::summarizeKernels;
using report::LlmOutcomes;
using report::workersJson;
using report::workersText;
using report::reportJson;
using report::llmSummary;
using report::storedCampaign;
using report::findKernelSpec;
using report::variantKnobs;
using report::endToEndOf;
using report::endToEndJson;
using report::endToEndText;
using report::formatMs;
using report::formatSpeedup;

} // namespace r3::cli
