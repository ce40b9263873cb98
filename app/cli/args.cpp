#include "args.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "support/size_limits.h"

namespace tessel::cli {

Args::Args(const std::vector<std::string>& argv, const OptionSpec& options) {
  const std::set<std::string>& valued = options.valued;
  const std::set<std::string>& flags = options.flags;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    bool inlineValue = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inlineValue = true;
    }
    if (flags.count(name)) {
      if (inlineValue) throw UsageError("option --" + name + " takes no value");
      values_[name] = "1";
    } else if (valued.count(name)) {
      if (!inlineValue) {
        if (i + 1 >= argv.size()) throw UsageError("option --" + name + " needs a value");
        value = argv[++i];
      }
      values_[name] = value;
    } else {
      throw UsageError("unknown option --" + name);
    }
  }
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

long long Args::getInt(const std::string& name, long long fallback, long long min, long long max) const {
  if (!has(name)) return fallback;
  const std::string& s = values_.at(name);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end || errno) throw UsageError("option --" + name + " needs an integer, got '" + s + "'");
  if (v < min || v > max)
    throw UsageError("option --" + name + " must be between " + std::to_string(min) + " and " + std::to_string(max) +
                     ", got " + s);
  return v;
}

double Args::getDouble(const std::string& name, double fallback, double min, double max) const {
  if (!has(name)) return fallback;
  const std::string& s = values_.at(name);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end || errno || !std::isfinite(v))
    throw UsageError("option --" + name + " needs a number, got '" + s + "'");
  auto text = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return std::string(buf);
  };
  if (!(v > min) || v > max)
    throw UsageError("option --" + name + " must be above " + text(min) + " and at most " + text(max) + ", got " + s);
  return v;
}

std::vector<std::string> parseList(const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(',', begin), text.size());
    if (end > begin) out.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

std::string actionOf(const Args& args, const std::string& command, const std::vector<std::string>& actions) {
  std::string names;
  for (const std::string& a : actions)
    names += (names.empty() ? "" : " or ") + a;
  if (args.positional().empty()) throw UsageError("missing " + names + " (try --help)");
  if (args.positional().size() > 1) throw UsageError("unexpected argument '" + args.positional()[1] + "'");
  const std::string& what = args.positional()[0];
  if (std::find(actions.begin(), actions.end(), what) == actions.end())
    throw UsageError("unknown " + command + " action '" + what + "' (" + names + ")");
  return what;
}

std::vector<int64_t> parseShape(const std::string& text) {
  if (text.empty()) throw UsageError("--shape is empty");
  std::vector<int64_t> out;
  size_t pos = 0;
  while (true) {
    size_t comma = text.find(',', pos);
    std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end || errno) throw UsageError("--shape '" + text + "': '" + part + "' is not an integer");
    if (v < 0) throw UsageError("--shape '" + text + "': dimension " + part + " is negative");
    if (v > support::kMaxTensorElements)
      throw UsageError("--shape '" + text + "': dimension " + part + " is " + support::tooLongText());
    out.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::string Args::getChoice(const std::string& name, const std::string& fallback,
                            const std::vector<std::string>& choices) const {
  if (!has(name)) return fallback;
  const std::string v = get(name);
  if (std::find(choices.begin(), choices.end(), v) != choices.end()) return v;
  std::string message = "--";  // built in steps: GCC 12 warns falsely (-Wrestrict) on "--" + name
  message += name;
  message += " takes ";
  for (size_t i = 0; i < choices.size(); ++i)
    message += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  message += ", not '" + v + "'";
  throw UsageError(message);
}

}  // namespace tessel::cli
