#include "ui/cpp_highlighter.h"

#include <QStringList>

namespace tessel::ui {

namespace {

QRegularExpression words(const QStringList& list) {
  return QRegularExpression(QStringLiteral("\\b(?:%1)\\b").arg(list.join(QLatin1Char('|'))));
}

QTextCharFormat makeFormat(const QColor& colour, bool bold = false, bool italic = false) {
  QTextCharFormat f;
  f.setForeground(colour);
  if (bold) f.setFontWeight(QFont::Bold);
  f.setFontItalic(italic);
  return f;
}

}  // namespace

CppHighlighter::CppHighlighter(QTextDocument* parent) : QSyntaxHighlighter(parent) {
  formats_ = {
      makeFormat(QColor(0x00, 0x33, 0x99), true),         // Keyword
      makeFormat(QColor(0x2b, 0x7a, 0x78)),               // Type
      makeFormat(QColor(0x99, 0x45, 0x00)),               // Number
      makeFormat(QColor(0x06, 0x7d, 0x17)),               // String
      makeFormat(QColor(0x70, 0x70, 0x70), false, true),  // Comment
      makeFormat(QColor(0x80, 0x40, 0x80)),               // Preprocessor
      makeFormat(QColor(0xb0, 0x30, 0x60), true),         // OpenMp
      makeFormat(QColor(0x00, 0x70, 0xc0), true),         // Gpu
  };
  lightFormats_ = formats_;
  const QStringList keywords = {
      "alignas",    "break",        "case",     "catch",    "class",
      "const",      "constexpr",    "continue", "default",  "delete",
      "do",         "else",         "enum",     "extern",   "false",
      "for",        "goto",         "if",       "inline",   "namespace",
      "new",        "noexcept",     "nullptr",  "operator", "private",
      "public",     "return",       "sizeof",   "static",   "static_cast",
      "struct",     "switch",       "template", "this",     "throw",
      "true",       "try",          "typedef",  "typename", "union",
      "using",      "virtual",      "volatile", "while",    "reinterpret_cast",
      "const_cast", "__restrict__", "restrict", "register",
  };
  const QStringList types = {
      "void",     "bool",     "char",      "short",  "int",     "long",    "float",   "double",     "signed",
      "unsigned", "auto",     "size_t",    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t",    "uint16_t",
      "uint32_t", "uint64_t", "ptrdiff_t", "half",   "float2",  "float4",  "std",     "unique_ptr", "nothrow",
  };
  // CUDA built-ins and qualifiers, and the OpenMP runtime's functions.
  const QStringList gpu = {
      "threadIdx",
      "blockIdx",
      "blockDim",
      "gridDim",
      "warpSize",
      "__global__",
      "__device__",
      "__host__",
      "__shared__",
      "__constant__",
      "__syncthreads",
      "__launch_bounds__",
      "vthread",
      "omp_get_thread_num",
      "omp_get_num_threads",
      "omp_set_num_threads",
  };
  rules_.push_back({words(types), Kind::Type});
  rules_.push_back({words(keywords), Kind::Keyword});
  rules_.push_back({words(gpu), Kind::Gpu});
  rules_.push_back({QRegularExpression(QStringLiteral(
                        "\\b(?:0[xX][0-9a-fA-F]+|(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d+)?)[fFlLuU]*\\b")),
                    Kind::Number});
  // Later rules win where they overlap: strings, then directives, then comments.
  rules_.push_back(
      {QRegularExpression(QStringLiteral("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'")), Kind::String});
  rules_.push_back({QRegularExpression(QStringLiteral("^\\s*#\\s*\\w+.*$")), Kind::Preprocessor});
  rules_.push_back(
      {QRegularExpression(QStringLiteral("^\\s*#\\s*pragma\\s+(?:omp|GCC\\s+unroll|unroll)\\b.*$")), Kind::OpenMp});
  rules_.push_back({QRegularExpression(QStringLiteral("//.*$")), Kind::Comment});
  commentStart_ = QRegularExpression(QStringLiteral("/\\*"));
  commentEnd_ = QRegularExpression(QStringLiteral("\\*/"));
}

void CppHighlighter::setDarkBackground(bool dark) {
  formats_ = lightFormats_;
  if (dark)
    for (QTextCharFormat& f : formats_) {
      // Keep the hue, mirror the lightness to stand out on a dark background.
      QColor c = f.foreground().color();
      c.setHsl(c.hslHue(), c.hslSaturation(), 255 - c.lightness());
      f.setForeground(c);
    }
  rehighlight();
}

QTextCharFormat CppHighlighter::format(Kind kind) const {
  return formats_[size_t(kind)];
}

void CppHighlighter::highlightBlock(const QString& text) {
  for (const Rule& r : rules_) {
    auto it = r.pattern.globalMatch(text);
    while (it.hasNext()) {
      QRegularExpressionMatch m = it.next();
      setFormat(int(m.capturedStart()), int(m.capturedLength()), formats_[size_t(r.kind)]);
    }
  }
  // Block comments may span lines: state 1 = inside one at the end of the block.
  setCurrentBlockState(0);
  qsizetype start = previousBlockState() == 1 ? 0 : text.indexOf(commentStart_);
  while (start >= 0) {
    QRegularExpressionMatch end = commentEnd_.match(text, start + (previousBlockState() == 1 && start == 0 ? 0 : 2));
    qsizetype length;
    if (end.hasMatch()) {
      length = end.capturedEnd() - start;
    } else {
      setCurrentBlockState(1);
      length = text.length() - start;
    }
    setFormat(int(start), int(length), formats_[size_t(Kind::Comment)]);
    start = text.indexOf(commentStart_, start + length);
  }
}

}  // namespace tessel::ui
