// Which CPU this is, beyond its vector width: vendor, family and model from
// CPUID, and the microarchitecture they name ("amd-zen5",
// "intel-emeraldrapids"). Two CPUs of one instruction set can want other
// schedules (a Zen 4 splits 512-bit vectors, a Zen 5 does not), so measured
// programs say which microarchitecture measured them, and the knowledge base
// of this machine's microarchitecture is preferred (knowledge/knowledge_base.h).
#pragma once

#include <string>

namespace tessel::target {

struct CpuModel {
  std::string vendor;  // CPUID's vendor string: "AuthenticAMD", "GenuineIntel"
  int family = 0;      // the displayed family (base + extended)
  int model = 0;       // the displayed model (extended model << 4 | base model)
  std::string name;    // the brand string, "AMD EPYC 9R45" ("" if the CPU has none)
};

// This machine's, read once.
const CpuModel& hostCpuModel();

// A short, stable name of a CPU's microarchitecture: "amd-zen4", "amd-zen5",
// "intel-sapphirerapids", ...; a CPU outside the table gets its vendor,
// family and model ("amd-f26-m80"), so it still matches itself.
std::string microarchitecture(const CpuModel& cpu);
// This machine's.
std::string hostMicroarchitecture();
// For people: "AMD Zen 5", "Intel Emerald Rapids", "AMD family 26 model 80";
// the short name itself when it is not one microarchitecture() gives.
std::string microarchitectureTitle(const std::string& microarch);
// The vendor part of a short name: "amd", "intel" ("" if none).
std::string microarchitectureVendor(const std::string& microarch);

}  // namespace tessel::target
