#include "runtime/thread_team.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

namespace tessel::runtime {

std::vector<int> allowedCores() {
  std::vector<int> cores;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cores.push_back(c);
  if (cores.empty()) cores.push_back(0);
  return cores;
}

ThreadTeam::ThreadTeam(int threads, bool pin) : pin_(pin), cores_(allowedCores()) {
  threads_ = threads > 0 ? threads : int(cores_.size());
}

namespace {

void pinCallingThread(const std::vector<int>& cores) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cores)
    CPU_SET(c, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

std::vector<int> callingThreadCores() {
  std::vector<int> cores;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cores.push_back(c);
  return cores;
}

}  // namespace

ThreadTeam::Entered::~Entered() {
  if (restore_ && !previous_.empty()) pinCallingThread(previous_);
}

ThreadTeam::Entered ThreadTeam::enter() {
  Entered entered;
  omp_set_num_threads(threads_);
  if (!pin_) return entered;
  entered.previous_ = callingThreadCores();
  entered.restore_ = true;
  if (pinnedFor_ != std::this_thread::get_id()) {
    const std::vector<int> cores = cores_;
#pragma omp parallel num_threads(threads_)
    {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cores[size_t(omp_get_thread_num()) % cores.size()], &one);
      pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    }
    pinnedFor_ = std::this_thread::get_id();
  } else {
    pinCallingThread({cores_.front()});
  }
  return entered;
}

OmpThreadCount::OmpThreadCount(int threads) : previous_(omp_get_max_threads()) {
  if (threads > 0) omp_set_num_threads(threads);
}

OmpThreadCount::~OmpThreadCount() {
  omp_set_num_threads(previous_);
}

}  // namespace tessel::runtime
