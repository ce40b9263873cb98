// The walls around the code a tessel-worker runs: the generated kernels (and,
// later, code received from other machines) are untrusted.
//
// Entered once, before the first request, for the rest of the process's life:
//  - resource limits: no core dumps; files grow by nothing the worker opens
//    (it opens none for writing) and its inherited log by at most 64 MiB;
//    on the CPU, an address space no larger than the machine's memory;
//  - no new privileges (a set-uid program it ran would not gain any);
//  - a seccomp filter (libseccomp) on every thread.
// CPU time is bounded per kernel by the runner, which sets the worker's
// RLIMIT_CPU before each request (prlimit): the filter forbids the worker to
// change its own limits, so a kernel cannot lift it.
//
// The CPU profile lets through what loading and measuring a kernel needs
// (memory, threads, time, its own signals, reading files such as libraries,
// /proc and /sys, the descriptors it holds) and stops the rest: sockets, new
// processes, running programs, opening files for writing, creating, removing
// or renaming files, other processes' memory, changing its limits. The CUDA
// profile is looser, since the NVIDIA driver needs device files, ioctls and its
// caches, which a filter cannot tell apart from a kernel's host code: it stops
// network sockets, new processes and running programs, and sets no
// address-space limit (the driver maps GPU memory into it).
//
// A stopped system call raises SIGSYS; the handler sends the runner a response
// that names the call ("sandbox violation: system call 'socket' (network
// access)") and exits, so the kernel is an error record and the runner starts
// a fresh worker. Reading is not fenced: a kernel can read what the user can,
// but has no way to send it anywhere except its own (checked) outputs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tessel::measure {

enum class SandboxProfile { None, Cpu, Cuda };

// "none", "cpu", "cuda".
std::optional<SandboxProfile> parseSandboxProfile(std::string_view name);
const char* sandboxProfileName(SandboxProfile profile);

// What a worker of this build can do: false with the reason where system calls
// are not filtered (built without libseccomp, or with a sanitizer, whose
// runtime reserves terabytes of address space and traces the process at exit).
bool sandboxFiltersSystemCalls(std::string* why = nullptr);

// Enters the profile's sandbox; violation responses go to outFd (the
// protocol's output). Returns false with the reason when the kernel refuses a
// wall (seccomp missing, say); the limits set before that stay.
bool enterSandbox(SandboxProfile profile, int outFd, std::string& error);

}  // namespace tessel::measure
