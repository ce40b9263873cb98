// Cooperative cancellation: a stop request from another thread (the studio's
// Stop button) reaches every layer of a tuning round, so long work (the
// search's generations, compiler jobs, a kernel being measured) ends early
// instead of running the round out.
#pragma once

#include <atomic>
#include <memory>

namespace tessel::support {

// Shared by whoever may cancel and whatever polls it; empty = never cancelled.
using CancelFlag = std::shared_ptr<const std::atomic<bool>>;

inline bool isCancelled(const CancelFlag& flag) {
  return flag && flag->load(std::memory_order_relaxed);
}

}  // namespace tessel::support
