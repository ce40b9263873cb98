// The measurement loop of a tessel-worker process (see worker_protocol.h).
//
// For each request it loads the kernel's library (handles cached by path),
// builds the task's inputs (std::mt19937 seeded from the task key and the
// seed, uniform in [-1, 1]; every kernel of a task gets the same data), computes
// the reference output once per task (only the latest task is kept), runs the
// kernel once with outputs pre-filled with NaN and compares, then times it.
// Buffers are 64-byte aligned and surrounded by guard zones, so a kernel that
// writes just out of bounds is reported instead of silently corrupting memory.
//
// A kernel that crashes or hangs takes the process with it: the Runner sees the
// pipe close (or its deadline pass) and starts another worker.
#pragma once

namespace tessel::measure {

// Serves requests read from inFd, writing responses to outFd, until inFd
// reaches end of file (returns 0) or the protocol breaks (returns 1).
int runWorker(int inFd, int outFd);

}  // namespace tessel::measure
