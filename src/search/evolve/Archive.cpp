// The MAP-Elites archive of the outer loop, one grid per island. MAP-Elites
// (Mouret & Clune 2015, "Illuminating search spaces by mapping elites")
// divides the space of behaviours (here: what the compile report says about a
// variant, such as registers and shared memory per thread) into cells and
// keeps the fittest variant found in each, so that the archive holds good
// variants of many kinds instead of one lineage that a greedy search would
// follow into a local optimum. The islands are independent archives that
// exchange their best variant along a ring every few generations (the island
// model of Tanese 1989 and Whitley et al. 1999): each evolves on its own,
// which keeps diversity, while migration spreads what one island discovered.
// Fitness is a time: lower is better.
#include "search/evolve/Evolution.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace r3::search {

namespace {
/// The bin of V on axis A, clamped into [0, Bins).
size_t binOf(const DescriptorAxis &A, double V) {
  unsigned Bins = std::max(1u, A.Bins);
  if (Bins == 1 || !(A.Max > A.Min) || std::isnan(V))
    return 0;
  double Clamped = std::clamp(V, A.Min, A.Max);
  double Scaled = (Clamped - A.Min) / (A.Max - A.Min) * Bins;
  return std::min<size_t>(Bins - 1, static_cast<size_t>(Scaled));
}

/// Whether A is a better (faster) variant than B.
bool fitter(const Elite &A, const Elite &B) { return A.Fitness < B.Fitness; }

/// The fittest elite of one island's grid, or null when it is empty.
const Elite *bestOf(const std::map<size_t, Elite> &Grid) {
  const Elite *Best = nullptr;
  for (const auto &[Cell, E] : Grid)
    if (!Best || fitter(E, *Best))
      Best = &E;
  return Best;
}
} // namespace

Archive::Archive(unsigned Islands, std::vector<DescriptorAxis> Axes)
    : Axes(std::move(Axes)), Grids(std::max(1u, Islands)) {}

bool Archive::offer(const Elite &E) {
  // A variant without a fitness cannot be compared; it never enters.
  if (std::isnan(E.Fitness))
    return false;
  unsigned Island = E.Island % islands();
  auto &Grid = Grids[Island];
  size_t Cell = cellOf(E.Descriptor);
  auto It = Grid.find(Cell);
  if (It != Grid.end() && !fitter(E, It->second))
    return false;
  Elite Copy = E;
  Copy.Island = Island;
  Grid.insert_or_assign(Cell, std::move(Copy));
  return true;
}

const Elite *Archive::select(unsigned Island, Rng &R) const {
  if (Island >= islands() || Grids[Island].empty())
    return nullptr;
  const auto &Grid = Grids[Island];
  std::uniform_int_distribution<size_t> Pick(0, Grid.size() - 1);
  return &std::next(Grid.begin(), static_cast<long>(Pick(R)))->second;
}

void Archive::migrate() {
  if (islands() < 2)
    return;
  // Take every island's best before any arrives, so that a migrant is not
  // passed on again in the same round.
  std::vector<std::optional<Elite>> Migrants(islands());
  for (unsigned I = 0; I < islands(); ++I)
    if (const Elite *Best = bestOf(Grids[I]))
      Migrants[I] = *Best;
  for (unsigned I = 0; I < islands(); ++I) {
    if (!Migrants[I])
      continue;
    Migrants[I]->Island = (I + 1) % islands();
    offer(*Migrants[I]);
  }
}

size_t Archive::cellOf(const std::vector<double> &Descriptor) const {
  size_t Cell = 0;
  for (size_t I = 0; I < Axes.size(); ++I) {
    // A missing value counts as the axis minimum.
    double V = I < Descriptor.size() ? Descriptor[I] : Axes[I].Min;
    Cell = Cell * std::max(1u, Axes[I].Bins) + binOf(Axes[I], V);
  }
  return Cell;
}

const std::map<size_t, Elite> &Archive::cells(unsigned Island) const {
  static const std::map<size_t, Elite> None;
  return Island < islands() ? Grids[Island] : None;
}

const Elite *Archive::best() const {
  const Elite *Best = nullptr;
  for (const auto &Grid : Grids)
    if (const Elite *E = bestOf(Grid); E && (!Best || fitter(*E, *Best)))
      Best = E;
  return Best;
}

} // namespace r3::search
