#include "support/line_diff.h"

namespace tessel::support {

std::vector<DiffLine> diffLines(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> lcs(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::vector<DiffLine> out;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      out.push_back({DiffLine::Same, a[i]});
      ++i, ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out.push_back({DiffLine::Removed, a[i++]});
    } else {
      out.push_back({DiffLine::Added, b[j++]});
    }
  }
  return out;
}

size_t changedLines(const std::vector<DiffLine>& diff) {
  size_t n = 0;
  for (const DiffLine& d : diff)
    n += d.kind != DiffLine::Same;
  return n;
}

}  // namespace tessel::support
