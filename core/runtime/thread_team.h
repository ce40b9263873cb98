// The OpenMP team every kernel of a graph run uses: one team size for all
// kernels (so libgomp never resizes its pool between them) and each thread
// pinned to its own core, which is what the measuring worker's
// OMP_PROC_BIND=true OMP_PLACES=cores gives the kernels it times.
//
// libgomp keeps one pool per thread that opens parallel regions, so the team
// is (re)pinned whenever a different thread runs the graph. The calling thread
// is pinned to the first core only while it runs kernels (Entered): its own
// affinity comes back afterwards, so processes it starts later (compilers,
// workers) are not confined to one core.
#pragma once

#include <thread>
#include <utility>
#include <vector>

namespace tessel::runtime {

class ThreadTeam {
 public:
  // threads <= 0: one per core this process may run on.
  ThreadTeam(int threads, bool pin);

  // While it lives, the calling thread is on the team's first core.
  class Entered {
   public:
    ~Entered();
    Entered(Entered&& other) noexcept : restore_(other.restore_), previous_(std::move(other.previous_)) {
      other.restore_ = false;
    }
    Entered(const Entered&) = delete;
    Entered& operator=(const Entered&) = delete;

   private:
    friend class ThreadTeam;
    Entered() = default;
    bool restore_ = false;
    std::vector<int> previous_;
  };

  // Call before a run's kernels: sets the calling thread's team size (another
  // library in the process may have changed it), pins its pool's threads once
  // and the calling thread until the result is destroyed.
  [[nodiscard]] Entered enter();

  int threads() const { return threads_; }
  bool pinned() const { return pin_; }
  // The cores the team's threads are pinned to, thread 0 first.
  const std::vector<int>& cores() const { return cores_; }

 private:
  int threads_ = 1;
  bool pin_ = true;
  std::vector<int> cores_;
  std::thread::id pinnedFor_;
};

// Sets OpenMP's thread count (libraries on OpenMP: oneDNN) for as long as it
// lives, and gives the previous one back.
class OmpThreadCount {
 public:
  explicit OmpThreadCount(int threads);
  ~OmpThreadCount();
  OmpThreadCount(const OmpThreadCount&) = delete;
  OmpThreadCount& operator=(const OmpThreadCount&) = delete;

 private:
  int previous_;
};

// The cores this process may run on (its affinity mask), in order.
std::vector<int> allowedCores();

}  // namespace tessel::runtime
