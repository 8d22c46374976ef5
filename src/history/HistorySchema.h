// Internal to the history: the schema of a campaign history, one migration
// step per version. docs/history-schema.md documents the tables.
#pragma once

#include "history/History.h"

#include <cstdint>
#include <iterator>

namespace r3::detail {

/// "r3db": what `PRAGMA application_id` holds in every r3 history.
constexpr int64_t HistoryApplicationId = 0x72336462;

/// One step of the schema: the SQL that takes a database from version To-1
/// to version To. Future versions append steps; a step never changes.
struct Migration {
  int To;
  const char *Sql;
};

constexpr const char *SchemaV1 = R"sql(
CREATE TABLE campaign (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  path TEXT NOT NULL,
  text TEXT NOT NULL,
  backend TEXT NOT NULL,
  seed INTEGER NOT NULL,
  created REAL NOT NULL,
  state TEXT NOT NULL
);
CREATE TABLE kernels (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  capture TEXT NOT NULL,
  capture_hash TEXT NOT NULL
);
CREATE TABLE sources (
  hash TEXT PRIMARY KEY,
  text TEXT NOT NULL
);
CREATE TABLE variants (
  id INTEGER PRIMARY KEY,
  kernel_id INTEGER NOT NULL REFERENCES kernels(id),
  genome_key TEXT NOT NULL,
  genome_json TEXT NOT NULL,
  source_hash TEXT REFERENCES sources(hash),
  parents_json TEXT NOT NULL,
  operator TEXT NOT NULL,
  island INTEGER NOT NULL,
  created REAL NOT NULL,
  UNIQUE (kernel_id, genome_key)
);
CREATE TABLE candidates (
  id INTEGER PRIMARY KEY,
  identity TEXT UNIQUE NOT NULL,
  kernel_id INTEGER NOT NULL REFERENCES kernels(id),
  variant_id INTEGER NOT NULL REFERENCES variants(id),
  level TEXT NOT NULL,
  operator TEXT NOT NULL,
  parent_id INTEGER REFERENCES candidates(id),
  point TEXT NOT NULL,
  point_json TEXT NOT NULL,
  settings_json TEXT NOT NULL,
  state TEXT NOT NULL
    CHECK (state IN ('queued', 'running', 'done', 'dropped')),
  worker INTEGER,
  created REAL NOT NULL
);
CREATE INDEX candidates_by_kernel ON candidates(kernel_id);
CREATE INDEX candidates_by_state ON candidates(state);
CREATE TABLE evaluations (
  id INTEGER PRIMARY KEY,
  candidate_id INTEGER UNIQUE NOT NULL REFERENCES candidates(id),
  verified INTEGER NOT NULL,
  failure TEXT CHECK (failure IN ('compile_error', 'invalid_launch',
                                  'crashed', 'timeout', 'wrong_result')),
  message TEXT NOT NULL,
  times_ms TEXT NOT NULL,
  repetitions INTEGER NOT NULL,
  compile_ms REAL NOT NULL,
  registers INTEGER,
  spills INTEGER,
  shared_bytes INTEGER,
  pipeline TEXT NOT NULL,
  codegen_opt INTEGER NOT NULL,
  poisoned INTEGER NOT NULL,
  sandbox TEXT NOT NULL,
  median_ms REAL,
  ci_lo_ms REAL,
  ci_hi_ms REAL,
  min_ms REAL,
  eval_ms REAL NOT NULL,
  worker INTEGER NOT NULL,
  device TEXT NOT NULL,
  started REAL NOT NULL,
  finished REAL NOT NULL
);
CREATE INDEX evaluations_by_finished ON evaluations(finished);
CREATE TABLE baselines (
  id INTEGER PRIMARY KEY,
  kernel_id INTEGER NOT NULL REFERENCES kernels(id),
  worker INTEGER NOT NULL,
  device TEXT NOT NULL,
  median_ms REAL NOT NULL,
  ci_lo_ms REAL NOT NULL,
  ci_hi_ms REAL NOT NULL,
  measured REAL NOT NULL,
  after_evaluations INTEGER NOT NULL
);
CREATE INDEX baselines_by_kernel ON baselines(kernel_id);
CREATE TABLE archive (
  kernel_id INTEGER NOT NULL REFERENCES kernels(id),
  island INTEGER NOT NULL,
  cell INTEGER NOT NULL,
  variant_id INTEGER NOT NULL REFERENCES variants(id),
  fitness REAL NOT NULL,
  descriptor_json TEXT NOT NULL,
  PRIMARY KEY (kernel_id, island, cell)
);
CREATE TABLE events (
  id INTEGER PRIMARY KEY,
  at REAL NOT NULL,
  kind TEXT NOT NULL,
  message TEXT NOT NULL
);
CREATE INDEX events_by_kind ON events(kind, id);
)sql";

/// Version 2: the calls of the LLM operator, and the prompts they sent.
constexpr const char *SchemaV2 = R"sql(
CREATE TABLE prompts (
  hash TEXT PRIMARY KEY,
  text TEXT NOT NULL
);
CREATE TABLE llm_calls (
  id INTEGER PRIMARY KEY,
  kernel_id INTEGER NOT NULL REFERENCES kernels(id),
  parent_variant_id INTEGER REFERENCES variants(id),
  variant_id INTEGER REFERENCES variants(id),
  model TEXT NOT NULL,
  prompt_hash TEXT NOT NULL REFERENCES prompts(hash),
  tokens_in INTEGER NOT NULL,
  tokens_out INTEGER NOT NULL,
  latency_ms REAL NOT NULL,
  attempts INTEGER NOT NULL,
  http_status INTEGER,
  outcome TEXT NOT NULL
    CHECK (outcome IN ('ok', 'llm_invalid', 'http_error', 'timeout',
                       'bad_response', 'cancelled')),
  reason TEXT NOT NULL,
  reply TEXT NOT NULL,
  started REAL NOT NULL,
  finished REAL NOT NULL
);
CREATE INDEX llm_calls_by_kernel ON llm_calls(kernel_id);
)sql";

/// Version 3: how each evaluation was timed and how long it kept its device
/// busy (the GPU busy fraction of `r3 status`), and the event-timed
/// repetitions beside the kernel-timed ones on the CUDA backend. Older rows
/// read as untimed ('' and 0).
constexpr const char *SchemaV3 = R"sql(
ALTER TABLE evaluations ADD COLUMN timer TEXT NOT NULL DEFAULT '';
ALTER TABLE evaluations ADD COLUMN event_times_ms TEXT NOT NULL DEFAULT '[]';
ALTER TABLE evaluations ADD COLUMN busy_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE baselines ADD COLUMN busy_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE baselines ADD COLUMN started REAL NOT NULL DEFAULT 0;
)sql";

/// Version 4: the application's own runs, end to end, with its kernels as
/// the campaign tuned them ("tuned") and with its own code ("original"),
/// measured by `r3 tune --app` after the campaign.
constexpr const char *SchemaV4 = R"sql(
CREATE TABLE app_runs (
  id INTEGER PRIMARY KEY,
  at REAL NOT NULL,
  variant TEXT NOT NULL CHECK (variant IN ('original', 'tuned')),
  wall_s REAL NOT NULL,
  exit_code INTEGER NOT NULL,
  command TEXT NOT NULL
);
)sql";

/// Version 5: where an evaluation's device time went besides its kernels:
/// loading its module and restoring its inputs before each run (the rest of
/// busy_ms is verification and copies). Older rows read as 0.
constexpr const char *SchemaV5 = R"sql(
ALTER TABLE evaluations ADD COLUMN load_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE evaluations ADD COLUMN restore_ms REAL NOT NULL DEFAULT 0;
)sql";

/// Version 6: comparing the runs' memory with the recording (the checked
/// runs together), out of what busy_ms called the rest. Older rows read as 0.
constexpr const char *SchemaV6 = R"sql(
ALTER TABLE evaluations ADD COLUMN verify_ms REAL NOT NULL DEFAULT 0;
)sql";

constexpr Migration Migrations[] = {{1, SchemaV1}, {2, SchemaV2},
                                    {3, SchemaV3}, {4, SchemaV4},
                                    {5, SchemaV5}, {6, SchemaV6}};
static_assert(std::size(Migrations) == HistorySchemaVersion,
              "one migration step per schema version");

} // namespace r3::detail
