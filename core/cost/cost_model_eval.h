// How well a cost model ranks programs, as TenSet measures it: top-k scores
// (does the model's favourite among a task's measured programs come close to
// the task's best?), pairwise ranking accuracy and R².
#pragma once

#include <string>
#include <vector>

namespace tessel::cost {

// One task of an evaluation set: its measured programs' costs (seconds;
// +inf: failed), the model's scores for them, and the task's weight in its
// model (occurrences).
struct EvalTask {
  std::string model, key;
  double weight = 1;
  std::vector<double> costs, scores;
};

struct EvalMetrics {
  // sum_t w_t * best_t / sum_t w_t * (best cost among the k programs the
  // model ranks first): 1 when the model's k favourites hold each task's best.
  double top1 = 0, top5 = 0;
  double pairwiseAccuracy = 0;  // over pairs of one task with different costs (ties in score count half)
  // R² of the normalised throughput (best / cost) against the best affine
  // map of the scores within each task (rank losses fix scores only up to
  // such a map), pooled over tasks: 1 - residual / variance within tasks.
  double r2 = 0;
  size_t tasks = 0, programs = 0;
};

// Tasks without a measured program are left out.
EvalMetrics evaluateRanking(const std::vector<EvalTask>& tasks);
// The top-k score alone.
double topKScore(const std::vector<EvalTask>& tasks, size_t k);
// The lowest of the costs (+inf when none is finite or there is none).
double bestCost(const std::vector<double>& costs);
// The best cost among the k programs of the task the model ranks first
// (+inf when they all failed).
double pickedCost(const EvalTask& task, size_t k);

}  // namespace tessel::cost
