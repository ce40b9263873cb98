// How well the cost model ranks a task's programs, round by round: Spearman's
// rho of each round's predicted scores against the measured throughput (a
// round = the programs of one task scored in one state of the model), with
// a 95 % interval; the rounds an untrained model scored kept apart (their
// scores say nothing yet); and the flag for a trained model that ranks a
// task's programs worse than chance over several rounds. Plain C++, as
// rank_correlation.h, for the plots panel and its tests.
#pragma once

#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace tessel::ui {

struct ScoredProgram {
  int task = 0;
  int round = 0;                                                // programs of one task scored in one state of the model
  double predicted = std::numeric_limits<double>::quiet_NaN();  // higher = predicted faster
  double seconds = std::numeric_limits<double>::quiet_NaN();    // measured (NaN: failed)
  bool untrained = false;                                       // scored by a model that had learned nothing
  int ordinal = -1;  // its place among the task's programs of the session (0: the first)
};

struct Interval {
  double low = std::numeric_limits<double>::quiet_NaN();
  double high = std::numeric_limits<double>::quiet_NaN();
};

// The 95 % interval of Spearman's rho over n pairs: Fisher's z with Bonett
// and Wright's standard error sqrt((1 + rho^2 / 2) / (n - 3)). NaN bounds
// when n < 4 or rho is NaN.
Interval spearmanInterval(double rho, size_t n);

struct RoundRho {
  int task = 0, round = 0;
  bool untrained = false;
  size_t n = 0;  // programs with a finite score and a valid measurement
  double rho = std::numeric_limits<double>::quiet_NaN();
  Interval interval;
};

// Appends each program of `group` (indices into `programs`) as (rank of its
// score, rank of its throughput) within the group, as fractions: 0 the
// group's lowest, 1 its highest; a lone program is (1, 1).
void appendRankFractions(const std::vector<ScoredProgram>& programs, const std::vector<size_t>& group,
                         std::vector<std::pair<double, double>>& out);

// Rho over several groups of programs pooled by their rank fractions, so
// that groups scored in different states of the model count alike (groups
// of fewer than 2 programs are left out).
RoundRho pooledRho(const std::vector<ScoredProgram>& programs, const std::vector<std::vector<size_t>>& groups);

// Each round's rho, in the order the rounds first appear; `task` < 0: every task's.
std::vector<RoundRho> rhoPerRound(const std::vector<ScoredProgram>& programs, int task = -1);

// The rounds of a task the flag looks at, and the programs each needs.
inline constexpr int kFlagRounds = 3;
inline constexpr size_t kFlagMinPrograms = 4;

// Whether a trained model ranked the task's programs worse than chance:
// its last kFlagRounds trained rounds (of kFlagMinPrograms programs or more)
// each have rho < 0, and together (ranks within each round, pooled) their
// 95 % interval lies below 0. `pooled` gets that pooled rho and interval.
bool worseThanChance(const std::vector<ScoredProgram>& programs, int task, RoundRho* pooled = nullptr);

}  // namespace tessel::ui
