// The unseen points near the best one: where a portfolio looks once its
// search is stuck (Portfolio.cpp says why). Its own file so that tests can
// check the region directly.
#pragma once
#include "search/Space.h"
#include "search/Strategy.h"

#include <span>
#include <utility>
#include <vector>

namespace r3::search {

/// The region around the best point, in two parts: the moves (every unseen
/// point one parameter away from the best) and the rest.
struct Region {
  std::vector<Point> Moves, Rest;
};

/// The region around the best point of Good (successful observations as
/// value and point, lower is better): every unseen point of S one parameter
/// away from the best (Moves), and every other unseen point that keeps the
/// best point's value of each parameter on which at least Agree (a
/// fraction) of the Top best points agree with it, varying the others
/// freely (Rest). A sequence parameter is always kept, or moved by one edit
/// (Space::neighbours). Points in Seen (observed or pending) are left out.
/// At most Limit points in all, the moves first: a random subset drawn with
/// R of any part that does not fit. In a constrained space only allowed
/// points, in the allowed order. Empty when Good has fewer than Top points.
Region bestRegion(const Space &S,
                  std::span<const std::pair<double, Point>> Good,
                  const Observations &Seen, unsigned Top, double Agree,
                  size_t Limit, Rng &R);

/// The observations of Good (successful ones, as value and point, lower is
/// better) that differ from the best one in at least MinDistance parameters
/// (a sequence counts as one), in their order: the points of the other
/// basins, whose own best point and region bestRegion finds when given
/// them. Empty when Good is.
std::vector<std::pair<double, Point>>
otherBasins(std::span<const std::pair<double, Point>> Good,
            unsigned MinDistance);

/// Up to Pool unseen points of S (neither observed nor pending in Seen)
/// that differ from the best point of Good in at least MinDistance
/// parameters (a sequence counts as one), drawn at random with R from S
/// (from its allowed points when given): the candidates of a settled
/// search's look away from its basin. Empty when Good is.
std::vector<Point> farPoints(const Space &S,
                             std::span<const std::pair<double, Point>> Good,
                             const Observations &Seen, unsigned MinDistance,
                             size_t Pool, Rng &R);

} // namespace r3::search
