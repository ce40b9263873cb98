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
// A request whose device is cuda goes to the GPU half (cuda_worker.h) with the
// same inputs and reference outputs, computed here on the CPU.
//
// A kernel that crashes or hangs takes the process with it: the Runner sees the
// pipe close (or its deadline pass) and starts another worker.
#pragma once

namespace tessel::measure {

// Serves requests read from inFd, writing responses to outFd, until inFd
// reaches end of file (returns 0), the protocol breaks (returns 1) or a
// response says the worker exits (returns 2: its GPU context is lost).
int runWorker(int inFd, int outFd);

}  // namespace tessel::measure
