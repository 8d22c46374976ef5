// How a candidate's grid follows a changed block size. Changing the block of
// a kernel keeps its meaning only if the grid still covers the work, and only
// the user knows how the work maps to threads, so the user states the rule:
//   keep-threads  every dimension keeps its total threads:
//                 grid_d = ceil(rec_grid_d * rec_block_d / block_d) (default)
//   keep-grid     the recorded grid
//   x=EXPR;y=EXPR;z=EXPR  expressions over the new block (block_x ...), the
//                 recorded launch (rec_grid_x ..., rec_block_x ...) and the
//                 recorded scalar parameters (arg0 ..., or their names when
//                 the source is known), with + - * / % ( ), ceil, floor, min,
//                 max; '/' divides exactly, so ceil(n / block_x) rounds up.
//                 Dimensions not assigned keep the recorded grid.
// A rule that does not cover the work is not trusted: verification catches
// it (an unwritten output is poisoned).
#pragma once

#include "capture/Capture.h"
#include "support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace r3 {

/// A parsed rule.
struct GridRule {
  enum Kind { KeepThreads, KeepGrid, Expressions } Mode = KeepThreads;
  std::string Text;
  std::vector<std::string> Exprs; ///< x, y, z; empty: recorded
};

/// The rule of a coarsened kernel, each of whose threads takes Per
/// elements in x: keep-threads, with x's threads divided by Per.
std::string coarsenedGridRule(unsigned Per);

/// The rule a candidate's launches follow: Rule (the kernel's), or for a
/// variant coarsened by Per > 1 whose grid is not set otherwise
/// (GridSet: grid_x, grid_per_sm) and whose Rule keeps threads, the
/// coarsened rule. 0 for Per: not coarsened, or no block to follow.
std::string gridRuleFor(const std::string &Rule, unsigned Per, bool GridSet);

/// Parses a rule; an error names the place in Text that is wrong.
Expected<GridRule> parseGridRule(const std::string &Text);

/// What a rule's expressions may name.
struct LaunchValues {
  Dim3 RecordedGrid, RecordedBlock, Block;
  std::map<std::string, double> Params; ///< "arg0"..., and names
};

/// The scalar parameters of a launch as "argN" values (and Names[N] when
/// given): integers of 1, 2, 4 or 8 bytes read as signed; other sizes
/// are left out.
std::map<std::string, double>
paramValues(const LaunchInfo &L, const KernelInfo &K,
            const std::vector<std::string> &Names = {});

/// The grid under Rule for V.Block; an error when an expression names
/// something unknown, divides by zero or gives a grid dimension that is not
/// a positive integer the hardware allows.
Expected<Dim3> applyGridRule(const GridRule &Rule, const LaunchValues &V);

/// Parses "X[,Y,Z]" (missing dimensions are 1).
Expected<Dim3> parseDim3(const std::string &Text, const std::string &What);

} // namespace r3
