// The studio's program views: the search-space view on an operator and on a
// model's fused task (sketches, loop nests, parameters with domains,
// samples, the best program), the code view (generated, highlighted,
// copyable, failing cleanly on bad decisions) and the highlighter.
#include <QClipboard>
#include <QGuiApplication>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextLayout>
#include <QTreeWidget>
#include <QtTest>
#include <cmath>

#include "frontend/model_loader.h"
#include "fusion/task_extraction.h"
#include "schedule/sketch.h"
#include "search/space_summary.h"
#include "tessel_test.h"
#include "ui/code_view.h"
#include "ui/cpp_highlighter.h"
#include "ui/search_space_view.h"

using namespace tessel;
using tessel::ui::CodeView;
using tessel::ui::CppHighlighter;
using tessel::ui::SearchSpaceView;

namespace {

QString kindOf(const QTreeWidgetItem* item) {
  return item->data(0, SearchSpaceView::kKindRole).toString();
}

QTreeWidgetItem* childOfKind(const QTreeWidgetItem* parent, const QString& kind) {
  for (int i = 0; i < parent->childCount(); ++i)
    if (kindOf(parent->child(i)) == kind) return parent->child(i);
  return nullptr;
}

QTreeWidgetItem* topOfKind(const QTreeWidget* tree, const QString& kind) {
  return childOfKind(tree->invisibleRootItem(), kind);
}

// Characters of the document that carry a format of the given foreground.
int charactersFormatted(const QTextDocument* doc, const QTextCharFormat& f) {
  int n = 0;
  for (QTextBlock b = doc->firstBlock(); b.isValid(); b = b.next())
    for (const QTextLayout::FormatRange& r : b.layout()->formats())
      if (r.format.foreground() == f.foreground()) n += r.length;
  return n;
}

int formatRanges(const QTextDocument* doc) {
  int n = 0;
  for (QTextBlock b = doc->firstBlock(); b.isValid(); b = b.next())
    n += int(b.layout()->formats().size());
  return n;
}

// Checks the tree against the summary: one item per sketch with its loop
// nest and one child per parameter, the samples, the best program.
void checkTree(const SearchSpaceView& view) {
  const search::SpaceSummary& s = view.summary();
  QVERIFY(!s.sketches.empty());
  QTreeWidgetItem* space = topOfKind(view.tree(), "space");
  QVERIFY(space);
  QVERIFY2(space->text(0).startsWith("Search space: " + SearchSpaceView::formatCount(s.size) + " programs ("),
           qPrintable(space->text(0)));
  QVERIFY(space->text(0).contains(QString::number(s.sketches.size()) + " sketch"));
  QCOMPARE(space->childCount(), int(s.sketches.size()));
  for (int k = 0; k < space->childCount(); ++k) {
    QTreeWidgetItem* sk = space->child(k);
    QCOMPARE(kindOf(sk), QString("sketch"));
    QVERIFY(sk->text(0).startsWith(QString("Sketch %1: ").arg(k)));
    QTreeWidgetItem* loops = childOfKind(sk, "loops");
    QVERIFY(loops);
    QCOMPARE(loops->childCount(), 1);
    QVERIFY(loops->child(0)->text(0).contains("for "));
    QVERIFY(loops->child(0)->text(0).contains("tile:"));
    QVERIFY(loops->child(0)->font(0).fixedPitch() || loops->child(0)->font(0).styleHint() == QFont::Monospace);
    QTreeWidgetItem* params = childOfKind(sk, "parameters");
    QVERIFY(params);
    QCOMPARE(params->childCount(), int(s.sketches[size_t(k)].parameters.size()));
    QVERIFY(params->childCount() > 0);
    for (int p = 0; p < params->childCount(); ++p) {
      const search::ParameterSummary& ps = s.sketches[size_t(k)].parameters[size_t(p)];
      QCOMPARE(params->child(p)->text(0), QString::fromStdString(ps.key) + " — " + QString::fromStdString(ps.domain) +
                                              " (" + SearchSpaceView::formatCount(ps.choices) + ")");
    }
  }
  QTreeWidgetItem* samples = topOfKind(view.tree(), "samples");
  QVERIFY(samples);
  QCOMPARE(samples->childCount(), int(s.samples.size()));
  QVERIFY(samples->childCount() > 0);
  QVERIFY(topOfKind(view.tree(), "best"));
}

QTreeWidgetItem* sampleItem(const SearchSpaceView& view, int i) {
  QTreeWidgetItem* samples = topOfKind(view.tree(), "samples");
  return samples && i < samples->childCount() ? samples->child(i) : nullptr;
}

}  // namespace

class TestProgramViews : public QObject {
  Q_OBJECT

 private slots:
  void formatCount() {
    QCOMPARE(SearchSpaceView::formatCount(84), QString("84"));
    QCOMPARE(SearchSpaceView::formatCount(1.2e9), QString("1.2e9"));
    QCOMPARE(SearchSpaceView::formatCount(4.74e6), QString("4.7e6"));
    QCOMPARE(SearchSpaceView::formatCount(3e12), QString("3e12"));
  }

  void searchSpaceOfConv2d() {
    // N, C, H, W, K, R, S, stride, pad
    task::SearchTask task =
        task::makeOperatorTask("conv2d", {1, 64, 56, 56, 64, 3, 3, 1, 1}, tessel::target::Target::host());
    SearchSpaceView view;
    view.resize(700, 800);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy ready(&view, &SearchSpaceView::ready);
    QSignalSpy selected(&view, &SearchSpaceView::programSelected);
    QSignalSpy failed(&view, &SearchSpaceView::failed);
    view.showTask(task, "", std::nan(""));
    QVERIFY(!view.isReady());
    QTRY_VERIFY_WITH_TIMEOUT(view.isReady(), 30000);
    QCOMPARE(ready.count(), 1);
    QCOMPARE(failed.count(), 0);
    checkTree(view);
    // A 56-wide spatial axis tiled in 4 levels: its domain is counted exactly.
    bool saw56 = false;
    for (const auto& sk : view.summary().sketches)
      for (const auto& p : sk.parameters)
        if (p.domain.rfind("3 tile lengths of 56 ", 0) == 0) {
          saw56 = true;
          QCOMPARE(p.choices, search::countTileLengths(56, 3, 64));
        }
    QVERIFY(saw56);
    QCOMPARE(topOfKind(view.tree(), "best")->text(0), QString("Best program: none yet"));

    // No best yet: the first sample is shown.
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected[0][0].toString(), QString("Sample 1"));
    QCOMPARE(selected[0][1].toString(), QString::fromStdString(view.summary().sampleDecisions[0]));

    // Clicking a sample selects its program.
    QTreeWidgetItem* second = sampleItem(view, 1);
    QVERIFY(second);
    view.tree()->scrollToItem(second);
    QTest::mouseClick(view.tree()->viewport(), Qt::LeftButton, {}, view.tree()->visualItemRect(second).center());
    QTRY_COMPARE(selected.count(), 2);
    QCOMPARE(selected[1][0].toString(), QString("Sample 2"));
    QCOMPARE(selected[1][1].toString(), QString::fromStdString(view.summary().sampleDecisions[1]));
    // The details pane shows the loop nest of the sketch picked.
    QTreeWidgetItem* sketch = topOfKind(view.tree(), "space")->child(0);
    view.tree()->setCurrentItem(sketch);
    QVERIFY(view.details()->toPlainText().contains("for "));
    QVERIFY(view.details()->toPlainText().contains("tile:"));
  }

  void bestProgramIsSelected() {
    task::SearchTask task = task::makeOperatorTask("matmul", {64, 64, 64}, tessel::target::Target::host());
    search::SpaceSummary s = search::summarizeSpace(task, 2, 9);
    QString best = QString::fromStdString(s.sampleDecisions.back());
    SearchSpaceView view;
    QSignalSpy selected(&view, &SearchSpaceView::programSelected);
    view.showTask(task, best, 0.000123);
    QTRY_VERIFY_WITH_TIMEOUT(view.isReady(), 30000);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected[0][0].toString(), QString("Best program: 0.123 ms"));
    QCOMPARE(selected[0][1].toString(), best);
    QTreeWidgetItem* item = topOfKind(view.tree(), "best");
    QCOMPARE(item->text(0), QString("Best program: 0.123 ms"));
    emit view.tree()->itemClicked(item, 0);
    emit view.tree()->itemActivated(item, 0);  // the same pick reported twice counts once
    QCOMPARE(selected.count(), 2);
    QCOMPARE(selected[1][1].toString(), best);
    view.setBest(best, 0.0001);
    QCOMPARE(item->text(0), QString("Best program: 0.1 ms"));
    view.clear();
    QVERIFY(!view.isReady());
    QCOMPARE(view.tree()->topLevelItemCount(), 0);
  }

  void newerTaskSupersedesOlder() {
    task::SearchTask a = task::makeOperatorTask("matmul", {64, 64, 64}, tessel::target::Target::host());
    task::SearchTask b = task::makeOperatorTask("softmax", {4, 96}, tessel::target::Target::host());
    SearchSpaceView view;
    QSignalSpy ready(&view, &SearchSpaceView::ready);
    view.showTask(a, "", std::nan(""));
    view.showTask(b, "", std::nan(""));
    QTRY_VERIFY_WITH_TIMEOUT(view.isReady(), 30000);
    QTest::qWait(300);  // the first computation finishes too, and is dropped
    QCOMPARE(ready.count(), 1);
    search::SpaceSummary direct = search::summarizeSpace(b, 5);
    QCOMPARE(view.summary().sketches.size(), direct.sketches.size());
    QCOMPARE(view.summary().size, direct.size);
  }

  void searchSpaceOfFusedTask() {
    frontend::PreparedModel m = frontend::prepareModel("tiny_cnn", "", "dp", tessel::target::Target::host());
    QVERIFY(!m.tasks.empty());
    // The task with the most ops: a fused one.
    const fusion::GraphTask* fused = &m.tasks.front();
    for (const auto& t : m.tasks)
      if (t.ops.size() > fused->ops.size()) fused = &t;
    QVERIFY2(fused->ops.size() > 1, fused->name.c_str());
    task::SearchTask task = fusion::toSearchTask(*fused, tessel::target::Target::host());
    SearchSpaceView view;
    QSignalSpy selected(&view, &SearchSpaceView::programSelected);
    view.showTask(task, "", std::nan(""));
    QTRY_VERIFY_WITH_TIMEOUT(view.isReady(), 30000);
    checkTree(view);
    QCOMPARE(selected.count(), 1);

    // The code view shows what the view selected.
    CodeView code;
    QSignalSpy codeReady(&code, &CodeView::ready);
    code.showProgram(task, selected[0][0].toString(), selected[0][1].toString());
    QTRY_VERIFY_WITH_TIMEOUT(code.isReady(), 30000);
    QCOMPARE(codeReady.count(), 1);
    QVERIFY(code.code().contains(QString::fromStdString(search::kernelSymbol(task))));
    QVERIFY(code.code().contains("for ("));
  }

  void codeViewShowsHighlightedProgram() {
    task::SearchTask task = task::makeOperatorTask("matmul", {64, 64, 64}, tessel::target::Target::host());
    search::SpaceSummary s = search::summarizeSpace(task, 3, 2);
    CodeView view;
    view.resize(600, 500);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy ready(&view, &CodeView::ready);
    QSignalSpy failed(&view, &CodeView::failed);
    QString decisions = QString::fromStdString(s.sampleDecisions[0]);
    view.showProgram(task, "Sample 1", decisions);
    QVERIFY(!view.isReady());
    QTRY_VERIFY_WITH_TIMEOUT(view.isReady(), 30000);
    QCOMPARE(ready.count(), 1);
    QCOMPARE(failed.count(), 0);
    QCOMPARE(view.title(), QString("Sample 1"));
    QCOMPARE(view.code(), QString::fromStdString(search::programSource(task, s.sampleDecisions[0])));
    QVERIFY(view.code().contains(QString::fromStdString(search::kernelSymbol(task))));
    QVERIFY(view.code().contains("for ("));
    QVERIFY(view.editor()->isReadOnly());
    QVERIFY(view.editor()->font().fixedPitch() || view.editor()->font().styleHint() == QFont::Monospace);

    // Highlighted: keywords, types, numbers and comments carry their formats.
    const QTextDocument* doc = view.editor()->document();
    QVERIFY(formatRanges(doc) > 0);
    CppHighlighter* h = view.highlighter();
    QVERIFY(charactersFormatted(doc, h->format(CppHighlighter::Kind::Keyword)) > 0);
    QVERIFY(charactersFormatted(doc, h->format(CppHighlighter::Kind::Type)) > 0);
    QVERIFY(charactersFormatted(doc, h->format(CppHighlighter::Kind::Number)) > 0);
    QVERIFY(charactersFormatted(doc, h->format(CppHighlighter::Kind::Comment)) > 0);
    QVERIFY(charactersFormatted(doc, h->format(CppHighlighter::Kind::Preprocessor)) > 0);

    // Copy puts the whole program on the clipboard (the button does too).
    QGuiApplication::clipboard()->clear();
    view.copyToClipboard();
    QCOMPARE(QGuiApplication::clipboard()->text(), view.code());
    QGuiApplication::clipboard()->setText("something else");
    QVERIFY(view.copyButton()->isEnabled());
    QTest::mouseClick(view.copyButton(), Qt::LeftButton);
    QCOMPARE(QGuiApplication::clipboard()->text(), view.code());

    // Bad decisions: a failure with a message, and the view stays usable.
    view.showProgram(task, "Broken", "{not json");
    QTRY_VERIFY_WITH_TIMEOUT(view.isReady(), 30000);
    QCOMPARE(failed.count(), 1);
    QVERIFY2(failed[0][0].toString().contains("malformed decisions"), qPrintable(failed[0][0].toString()));
    QVERIFY(view.code().contains("malformed decisions"));
    QVERIFY(!view.copyButton()->isEnabled());
    view.showProgram(task, "Wrong sketch", R"({"sketch": 42, "choices": {}})");
    QTRY_COMPARE(failed.count(), 2);
    QVERIFY(failed[1][0].toString().contains("sketch 42"));

    // The naive program when there are no decisions; a newer request wins.
    view.showProgram(task, "Sample 1", decisions);
    view.showProgram(task, "Naive", "");
    QTRY_VERIFY_WITH_TIMEOUT(view.isReady(), 30000);
    QTest::qWait(200);
    QCOMPARE(view.title(), QString("Naive"));
    QCOMPARE(view.code(), QString::fromStdString(search::naiveProgramSource(task)));
    QCOMPARE(ready.count(), 2);

    view.showText("Given", "int main() { return 0; }\n");
    QVERIFY(view.isReady());
    QCOMPARE(view.title(), QString("Given"));
    QCOMPARE(view.code(), QString("int main() { return 0; }\n"));
  }

  void highlighterKnowsOpenMpAndCuda() {
    QTextDocument doc;
    CppHighlighter h(&doc);
    doc.setPlainText(
        "#pragma omp parallel for\n"
        "__global__ void k(float* __restrict__ a) {\n"
        "  __shared__ float s[128];\n"
        "  int i = blockIdx.x * 64 + threadIdx.x;  // index\n"
        "  /* a block\n"
        "     comment */ a[i] = 1.5f;\n"
        "}\n");
    // A document without a layout reports no changes: highlight it by hand.
    h.rehighlight();
    QVERIFY(formatRanges(&doc) > 0);
    auto formatAt = [&](int line, int column) {
      QTextBlock b = doc.findBlockByNumber(line);
      for (const QTextLayout::FormatRange& r : b.layout()->formats())
        if (column >= r.start && column < r.start + r.length) return r.format;
      return QTextCharFormat();
    };
    using K = CppHighlighter::Kind;
    QCOMPARE(formatAt(0, 9).foreground(), h.format(K::OpenMp).foreground());
    QCOMPARE(formatAt(1, 2).foreground(), h.format(K::Gpu).foreground());
    QCOMPARE(formatAt(1, 11).foreground(), h.format(K::Type).foreground());
    QCOMPARE(formatAt(2, 4).foreground(), h.format(K::Gpu).foreground());
    QCOMPARE(formatAt(3, 10).foreground(), h.format(K::Gpu).foreground());  // blockIdx
    QCOMPARE(formatAt(3, 23).foreground(), h.format(K::Number).foreground());
    QCOMPARE(formatAt(3, 44).foreground(), h.format(K::Comment).foreground());
    QCOMPARE(formatAt(4, 4).foreground(), h.format(K::Comment).foreground());
    QCOMPARE(formatAt(5, 6).foreground(), h.format(K::Comment).foreground());
    QCOMPARE(formatAt(5, 23).foreground(), h.format(K::Number).foreground());  // after the comment ends
    QColor light = h.format(K::Keyword).foreground().color();
    h.setDarkBackground(true);
    QVERIFY(h.format(K::Keyword).foreground().color().lightness() > 128);
    QCOMPARE(formatAt(1, 11).foreground(), h.format(K::Type).foreground());
    h.setDarkBackground(false);
    QCOMPARE(h.format(K::Keyword).foreground().color(), light);
  }
};

QTEST_MAIN(TestProgramViews)
#include "test_program_views.moc"
