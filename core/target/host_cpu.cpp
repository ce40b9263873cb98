#include "target/host_cpu.h"

#include <cpuid.h>

#include <array>
#include <cstring>

namespace tessel::target {

namespace {

struct Microarch {
  const char* vendor;  // CPUID's
  int family;
  int firstModel, lastModel;  // inclusive
  const char* name;
  const char* title;
};

// The x86 server and desktop cores of the last decade; the model ranges are
// the ones the vendors' documentation and Linux's CPU tables give.
constexpr std::array kMicroarchs = {
    Microarch{"AuthenticAMD", 0x17, 0x00, 0x2f, "amd-zen", "AMD Zen"},
    Microarch{"AuthenticAMD", 0x17, 0x30, 0xff, "amd-zen2", "AMD Zen 2"},
    Microarch{"AuthenticAMD", 0x19, 0x00, 0x0f, "amd-zen3", "AMD Zen 3"},
    Microarch{"AuthenticAMD", 0x19, 0x10, 0x1f, "amd-zen4", "AMD Zen 4"},
    Microarch{"AuthenticAMD", 0x19, 0x20, 0x5f, "amd-zen3", "AMD Zen 3"},
    Microarch{"AuthenticAMD", 0x19, 0x60, 0x7f, "amd-zen4", "AMD Zen 4"},
    Microarch{"AuthenticAMD", 0x19, 0xa0, 0xaf, "amd-zen4", "AMD Zen 4"},
    Microarch{"AuthenticAMD", 0x1a, 0x00, 0x4f, "amd-zen5", "AMD Zen 5"},
    Microarch{"GenuineIntel", 6, 0x3f, 0x3f, "intel-haswell", "Intel Haswell"},
    Microarch{"GenuineIntel", 6, 0x4f, 0x4f, "intel-broadwell", "Intel Broadwell"},
    Microarch{"GenuineIntel", 6, 0x55, 0x55, "intel-skylake-sp", "Intel Skylake-SP / Cascade Lake"},
    Microarch{"GenuineIntel", 6, 0x6a, 0x6a, "intel-icelake-sp", "Intel Ice Lake-SP"},
    Microarch{"GenuineIntel", 6, 0x6c, 0x6c, "intel-icelake-sp", "Intel Ice Lake-SP"},
    Microarch{"GenuineIntel", 6, 0x7d, 0x7e, "intel-icelake", "Intel Ice Lake"},
    Microarch{"GenuineIntel", 6, 0x8c, 0x8d, "intel-tigerlake", "Intel Tiger Lake"},
    Microarch{"GenuineIntel", 6, 0x8f, 0x8f, "intel-sapphirerapids", "Intel Sapphire Rapids"},
    Microarch{"GenuineIntel", 6, 0x97, 0x9a, "intel-alderlake", "Intel Alder Lake"},
    Microarch{"GenuineIntel", 6, 0xad, 0xae, "intel-graniterapids", "Intel Granite Rapids"},
    Microarch{"GenuineIntel", 6, 0xb7, 0xb7, "intel-raptorlake", "Intel Raptor Lake"},
    Microarch{"GenuineIntel", 6, 0xba, 0xba, "intel-raptorlake", "Intel Raptor Lake"},
    Microarch{"GenuineIntel", 6, 0xbf, 0xbf, "intel-raptorlake", "Intel Raptor Lake"},
    Microarch{"GenuineIntel", 6, 0xcf, 0xcf, "intel-emeraldrapids", "Intel Emerald Rapids"},
};

std::string vendorShort(const std::string& vendor) {
  if (vendor == "AuthenticAMD") return "amd";
  if (vendor == "GenuineIntel") return "intel";
  return "cpu";
}

std::string trimmed(std::string s) {
  const size_t first = s.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  const size_t last = s.find_last_not_of(' ');
  return s.substr(first, last - first + 1);
}

CpuModel readCpuModel() {
  CpuModel cpu;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return cpu;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  cpu.vendor = vendor;
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    const int baseFamily = int((a >> 8) & 0xf), baseModel = int((a >> 4) & 0xf);
    const int extFamily = int((a >> 20) & 0xff), extModel = int((a >> 16) & 0xf);
    cpu.family = baseFamily == 0xf ? baseFamily + extFamily : baseFamily;
    cpu.model = baseFamily == 0xf || baseFamily == 6 ? (extModel << 4) | baseModel : baseModel;
  }
  unsigned top = 0;
  if (__get_cpuid(0x80000000, &top, &b, &c, &d) && top >= 0x80000004) {
    char brand[49] = {};
    for (unsigned leaf = 0; leaf < 3; ++leaf) {
      __get_cpuid(0x80000002 + leaf, &a, &b, &c, &d);
      std::memcpy(brand + 16 * leaf, &a, 4);
      std::memcpy(brand + 16 * leaf + 4, &b, 4);
      std::memcpy(brand + 16 * leaf + 8, &c, 4);
      std::memcpy(brand + 16 * leaf + 12, &d, 4);
    }
    cpu.name = trimmed(brand);
  }
  return cpu;
}

}  // namespace

const CpuModel& hostCpuModel() {
  static const CpuModel cpu = readCpuModel();
  return cpu;
}

std::string microarchitecture(const CpuModel& cpu) {
  for (const Microarch& m : kMicroarchs)
    if (cpu.vendor == m.vendor && cpu.family == m.family && cpu.model >= m.firstModel && cpu.model <= m.lastModel)
      return m.name;
  return vendorShort(cpu.vendor) + "-f" + std::to_string(cpu.family) + "-m" + std::to_string(cpu.model);
}

std::string hostMicroarchitecture() {
  return microarchitecture(hostCpuModel());
}

std::string microarchitectureTitle(const std::string& microarch) {
  for (const Microarch& m : kMicroarchs)
    if (microarch == m.name) return m.title;
  // "amd-f26-m80" -> "AMD family 26 model 80"
  const std::string vendor = microarchitectureVendor(microarch);
  const size_t f = microarch.find("-f"), mo = microarch.find("-m", f == std::string::npos ? 0 : f);
  if (f != std::string::npos && mo != std::string::npos) {
    const std::string who = vendor == "amd" ? "AMD" : vendor == "intel" ? "Intel" : "CPU";
    return who + " family " + microarch.substr(f + 2, mo - f - 2) + " model " + microarch.substr(mo + 2);
  }
  return microarch;
}

std::string microarchitectureVendor(const std::string& microarch) {
  const size_t dash = microarch.find('-');
  return dash == std::string::npos ? "" : microarch.substr(0, dash);
}

}  // namespace tessel::target
