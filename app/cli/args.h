// Command-line parsing for the tessel CLI: `--name value`, `--name=value`
// and boolean `--name`; anything unknown is an error that names it.
#pragma once

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The options a command accepts: `valued` take a value, `flags` do not.
struct OptionSpec {
  std::set<std::string> valued, flags;
};

class Args {
 public:
  Args(const std::vector<std::string>& argv, const OptionSpec& options);
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::string get(const std::string& name, const std::string& fallback = "") const;
  long long getInt(const std::string& name, long long fallback, long long min, long long max) const;
  // A finite decimal number in (min, max] (`--minutes 0.5`).
  double getDouble(const std::string& name, double fallback, double min, double max) const;
  // One of `choices`; UsageError naming the option and the choices for anything else.
  std::string getChoice(const std::string& name, const std::string& fallback,
                        const std::vector<std::string>& choices) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> parseList(const std::string& text);
// The one positional ACTION of a command like `dataset collect|export`:
// UsageError when it is missing, unknown (listing `actions`) or followed by more.
std::string actionOf(const Args& args, const std::string& command, const std::vector<std::string>& actions);

// "256,256,256" -> {256, 256, 256}; throws UsageError naming the bad part.
std::vector<int64_t> parseShape(const std::string& text);

}  // namespace tessel::cli
