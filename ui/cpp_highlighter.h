// Syntax highlighting of generated kernels: C++ keywords and types, numbers,
// strings, comments, preprocessor lines with `#pragma omp` set apart, and
// the OpenMP / CUDA words a kernel may use (threadIdx, __global__, ...).
#pragma once

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <vector>

namespace tessel::ui {

class CppHighlighter : public QSyntaxHighlighter {
  Q_OBJECT

 public:
  explicit CppHighlighter(QTextDocument* parent = nullptr);

  // The formats it applies (tests and the code view's legend read them).
  enum class Kind { Keyword, Type, Number, String, Comment, Preprocessor, OpenMp, Gpu };
  QTextCharFormat format(Kind kind) const;
  // Lighter colours for a dark editor background (rehighlights).
  void setDarkBackground(bool dark);

 protected:
  void highlightBlock(const QString& text) override;

 private:
  struct Rule {
    QRegularExpression pattern;
    Kind kind;
  };
  std::vector<Rule> rules_;
  std::vector<QTextCharFormat> formats_;       // by Kind
  std::vector<QTextCharFormat> lightFormats_;  // for a light background
  QRegularExpression commentStart_, commentEnd_;
};

}  // namespace tessel::ui
