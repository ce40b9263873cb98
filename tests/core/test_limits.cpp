// Sizes and files checked at the edge: shapes beyond the kernels' 32-bit
// indexing or the machine's memory, overflowing products, and input paths
// that are not regular files, each refused with a message naming them.
#include <sys/stat.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "graph/graph.h"
#include "support/input_file.h"
#include "support/size_limits.h"
#include "task/search_task.h"
#include "te/operators.h"
#include "tessel_test.h"

using namespace tessel;

namespace {

// The message of what `f` throws as E ("" when it throws nothing).
template <typename E, typename F>
QString thrown(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace

class TestLimits : public QObject {
  Q_OBJECT

 private slots:
  void checkedArithmeticCatchesOverflow() {
    QCOMPARE(support::checkedMul(3037000499, 3037000499).value_or(-1), int64_t(9223372030926249001));
    QVERIFY(!support::checkedMul(3037000500, 3037000500));
    QVERIFY(!support::checkedAdd(INT64_MAX, 1));
    QCOMPARE(support::checkedElements({4611686018427387904LL, 2}).has_value(), false);
    QCOMPARE(support::checkedElements({1 << 20, 1 << 20}).value_or(-1), int64_t(1) << 40);
    QCOMPARE(support::checkedElements({}).value_or(-1), int64_t(1));
  }

  void tensorSizesAreCheckedWithTheirNames() {
    QCOMPARE(support::checkTensorSize("tensor 'A'", {1024, 1024}, 4, 0), int64_t(1) << 20);
    QString m = thrown<support::LimitError>([] { support::checkTensorSize("tensor 'A'", {99999999999LL, 1}); });
    QVERIFY2(m.contains("tensor 'A' [99999999999, 1]: dimension 99999999999 is longer than 2147483647"), qPrintable(m));
    m = thrown<support::LimitError>([] { support::checkTensorSize("tensor 'C'", {65536, 65536}); });
    QVERIFY2(m.contains("tensor 'C' [65536, 65536]: 4294967296 elements, more than the 2147483647"), qPrintable(m));
    // Dimensions each in range whose product overflows int64 itself.
    m = thrown<support::LimitError>([] {
      support::checkTensorSize("input 'x'", {2147483647, 2147483647, 2147483647});
    });
    QVERIFY2(m.contains("more than 2^63 elements"), qPrintable(m));
    m = thrown<support::LimitError>([] { support::checkTensorSize("input 'x'", {3, -1}); });
    QVERIFY2(m.contains("dimension -1 is negative"), qPrintable(m));
    // Memory: 64 Mi float64 elements are 512 MiB, more than a machine of 256 MiB.
    m = thrown<support::LimitError>([] {
      support::checkTensorSize("initializer 'w'", {8192, 8192}, 8, int64_t(256) << 20);
    });
    QVERIFY2(m.contains("initializer 'w' [8192, 8192]: 512.0 MiB, more than this machine's memory (256.0 MiB)"),
             qPrintable(m));
    QVERIFY(support::physicalMemoryBytes() > 0);
  }

  // The CLI's `tune-op matmul --shape ...` builds its task here: shapes that
  // hung or printed negative FLOPs are refused by name.
  void operatorTasksBeyondTheLimitsAreRefused() {
    QString m = thrown<std::invalid_argument>([] {
      task::makeOperatorTask("matmul", {99999999999LL, 1, 1}, tessel::target::Target::host());
    });
    QVERIFY2(m.contains("99999999999") && m.contains("2147483647"), qPrintable(m));
    m = thrown<std::invalid_argument>([] {
      task::makeOperatorTask("matmul", {4611686018427387904LL, 2, 2}, tessel::target::Target::host());
    });
    QVERIFY2(m.contains("4611686018427387904") && m.contains("2147483647"), qPrintable(m));
    m = thrown<std::invalid_argument>([] {
      task::makeOperatorTask("matmul", {65536, 65536, 2}, tessel::target::Target::host());
    });
    QVERIFY2(m.contains("[65536, 65536]: 4294967296 elements"), qPrintable(m));
    // A reduction longer than a 32-bit loop counter.
    m = thrown<std::invalid_argument>([] {
      task::makeOperatorTask("matmul", {1, 1, 3000000000LL}, tessel::target::Target::host());
    });
    QVERIFY2(m.contains("3000000000") && m.contains("2147483647"), qPrintable(m));
    // In range: the FLOP count is exact and positive.
    const task::SearchTask t = task::makeOperatorTask("matmul", {46000, 2, 2}, tessel::target::Target::host());
    QCOMPARE(t.flops, 2.0 * 46000 * 2 * 2);
  }

  // All the task's tensors together must fit: three tensors each in range
  // whose sum is larger than this machine's memory.
  void aTaskLargerThanMemoryIsRefused() {
    const int64_t memory = support::physicalMemoryBytes();
    // Each operand of a square matmul at the element limit is 8 GiB: three
    // need 24 GiB, more than machines up to 24 GiB have.
    const int64_t side = 46340;  // 46340^2 < 2^31
    if (3.0 * 4 * double(side) * double(side) <= double(memory))
      QSKIP("this machine has more memory than the largest task the 32-bit index allows (3 x 8 GiB)");
    const QString m = thrown<std::invalid_argument>([&] {
      task::makeOperatorTask("matmul", {side, side, side}, tessel::target::Target::host());
    });
    QVERIFY2(m.contains("tensors need") && m.contains("more than this machine's memory"), qPrintable(m));
  }

  // inferShapes checks every value as it is made: an input whose dimensions
  // overflow (the "0 FLOPs" of a 2^32 x 2^32 input) or exceed the index.
  void graphValuesBeyondTheLimitsAreRefused() {
    graph::Graph g;
    g.name = "huge";
    graph::ValueInfo x;
    x.name = "x";
    x.shape = {4294967296LL, 4294967296LL};
    g.inputs.push_back(x);
    graph::Node relu;
    relu.name = "relu";
    relu.op = "Relu";
    relu.inputs = {"x"};
    relu.outputs = {"y"};
    g.nodes.push_back(relu);
    g.outputs = {"y"};
    QString m = thrown<graph::GraphError>([&] { graph::inferShapes(g); });
    QVERIFY2(m.contains("input 'x' [4294967296, 4294967296]: dimension 4294967296 is longer than 2147483647"),
             qPrintable(m));
    // Each input in range; their product (MatMul's output) is not.
    g.inputs[0].shape = {65536, 1};
    graph::ValueInfo w = x;
    w.name = "w";
    w.shape = {1, 65536};
    g.inputs.push_back(w);
    g.nodes[0].op = "MatMul";
    g.nodes[0].name = "mm";
    g.nodes[0].inputs = {"x", "w"};
    m = thrown<graph::GraphError>([&] { graph::inferShapes(g); });
    QVERIFY2(m.contains("node 'mm' (MatMul): output 'y' [65536, 65536]: 4294967296 elements"), qPrintable(m));
  }

  // Only regular files are read: a folder, a FIFO and a device are refused
  // by what they are, before any read that could block or fill memory.
  void onlyRegularFilesAreRead() {
    QTemporaryDir dir;
    const std::string folder = dir.filePath("model.onnx").toStdString();
    QVERIFY(QDir().mkpath(QString::fromStdString(folder)));
    const std::string fifo = dir.filePath("pipe.onnx").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    const std::string file = dir.filePath("small.bin").toStdString();
    std::ofstream(file) << "0123456789";
    const uint64_t max = 1 << 20;

    QString m = thrown<support::InputFileError>([&] { support::readRegularFile(folder, "ONNX file", max); });
    QVERIFY2(m.endsWith("model.onnx' is a folder, not a file"), qPrintable(m));
    m = thrown<support::InputFileError>([&] { support::readRegularFile(fifo, "ONNX file", max); });
    QVERIFY2(m.endsWith("pipe.onnx' is a FIFO, not a regular file"), qPrintable(m));
    m = thrown<support::InputFileError>([&] { support::readRegularFile("/dev/zero", "model file", max); });
    QCOMPARE(m, QString("model file '/dev/zero' is a character device, not a regular file"));
    m = thrown<support::InputFileError>([&] { support::readRegularFile(file + ".missing", "NumPy file", max); });
    QVERIFY2(m.endsWith("small.bin.missing' does not exist"), qPrintable(m));
    m = thrown<support::InputFileError>([&] { support::checkRegularFile(file, "dataset", 4); });
    QVERIFY2(m.endsWith("small.bin' is 10 bytes, more than the 4 bytes Tessel reads into memory"), qPrintable(m));
    QCOMPARE(support::readRegularFile(file, "tensor file", max), std::string("0123456789"));
    QCOMPARE(support::checkRegularFile(file, "tensor file", max), uint64_t(10));
    QCOMPARE(QString::fromStdString(support::notARegularFile(fifo)), QString("is a FIFO, not a regular file"));
    QVERIFY(support::notARegularFile(file).empty());
  }
};

QTEST_GUILESS_MAIN(TestLimits)
#include "test_limits.moc"
