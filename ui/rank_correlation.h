// Rank correlations for the studio's cost-model scatter (predicted score vs
// measured throughput). Plain C++ so that tools and tests can use them
// without Qt.
#pragma once

#include <vector>

namespace tessel::ui {

// Spearman's rho: the Pearson correlation of the ranks, ties getting the
// average of the ranks they span. Pairs where either value is not finite
// are left out. NaN when the vectors differ in length, fewer than 2 pairs
// remain, or one side is constant. O(n log n).
double spearmanRankCorrelation(const std::vector<double>& x, const std::vector<double>& y);

// Kendall's tau-b (tie-corrected), by Knight's O(n log n) algorithm. Same
// filtering and NaN cases as spearmanRankCorrelation.
double kendallTau(const std::vector<double>& x, const std::vector<double>& y);

// Average ranks (1-based) of v; ties share the mean of the ranks they span.
std::vector<double> averageRanks(const std::vector<double>& v);

}  // namespace tessel::ui
