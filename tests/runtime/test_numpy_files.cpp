// NumPy files (core/runtime/numpy_files.h): .npy headers and dtypes as
// NumPy writes them, .npz archives through libzip, and the errors a user
// sees for files that are not what Tessel needs.
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <fstream>

#include "runtime/numpy_files.h"
#include "tessel_test.h"

using tessel::runtime::HostTensor;
using tessel::runtime::NumpyArray;
using tessel::runtime::NumpyError;

namespace {

// An .npy as NumPy's format 1.0 writes it: magic, version, header length,
// the header dict padded to 64 bytes, then the raw data.
std::string npy(const std::string& descr, const std::string& shape, const std::string& data,
                const std::string& fortran = "False") {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  return out + header + data;
}

template <typename T>
std::string raw(std::initializer_list<T> values, bool bigEndian = false) {
  std::string out;
  for (T v : values) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    if (bigEndian) std::reverse(b, b + sizeof(T));
    out.append(b, sizeof(T));
  }
  return out;
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const NumpyError& e) {
    return e.what();
  }
  return "";
}

void write(const QString& path, const std::string& bytes) {
  std::ofstream(path.toStdString(), std::ios::binary) << bytes;
}

}  // namespace

class TestNumpyFiles : public QObject {
  Q_OBJECT

 private slots:
  void dtypesAndByteOrders() {
    NumpyArray f = tessel::runtime::parseNpy(npy("<f4", "(2, 2)", raw<float>({1.5f, -2, 3, 4})), "a");
    QCOMPARE(f.shape, (std::vector<int64_t>{2, 2}));
    QCOMPARE(f.floats, (std::vector<float>{1.5f, -2, 3, 4}));
    NumpyArray d = tessel::runtime::parseNpy(npy("<f8", "(3,)", raw<double>({0.25, 1e-3, -7})), "b");
    QCOMPARE(d.dtype, tessel::graph::DType::Float32);
    QCOMPARE(d.floats, (std::vector<float>{0.25f, 1e-3f, -7.0f}));
    NumpyArray big = tessel::runtime::parseNpy(npy(">f4", "(2,)", raw<float>({6.5f, -1}, true)), "c");
    QCOMPARE(big.floats, (std::vector<float>{6.5f, -1}));
    NumpyArray i = tessel::runtime::parseNpy(npy("<i8", "(1, 3)", raw<int64_t>({7, -8, 1LL << 40})), "d");
    QCOMPARE(i.dtype, tessel::graph::DType::Int64);
    QCOMPARE(i.ints, (std::vector<int64_t>{7, -8, 1LL << 40}));
    NumpyArray b = tessel::runtime::parseNpy(npy("|b1", "(3,)", std::string("\1\0\1", 3)), "e");
    QCOMPARE(b.dtype, tessel::graph::DType::Bool);
    QCOMPARE(b.ints, (std::vector<int64_t>{1, 0, 1}));
    NumpyArray scalar = tessel::runtime::parseNpy(npy("<f4", "()", raw<float>({42})), "f");
    QVERIFY(scalar.shape.empty());
    QCOMPARE(scalar.floats, (std::vector<float>{42}));
  }

  void badArraysNameTheProblem() {
    using tessel::runtime::parseNpy;
    QVERIFY(errorOf([] { parseNpy("not numpy at all", "x.npy"); }).find("magic") != std::string::npos);
    const std::string cut = errorOf([] { parseNpy(npy("<f4", "(4,)", raw<float>({1, 2})), "x.npy"); });
    QVERIFY2(cut.find("x.npy") != std::string::npos && cut.find("needs 16") != std::string::npos, cut.c_str());
    const std::string c8 = errorOf([] { parseNpy(npy("<c8", "(1,)", std::string(8, '\0')), "x.npy"); });
    QVERIFY2(c8.find("'<c8' is not supported") != std::string::npos, c8.c_str());
    const std::string fortran = errorOf([] {
      parseNpy(npy("<f4", "(2, 2)", raw<float>({1, 2, 3, 4}), "True"), "x.npy");
    });
    QVERIFY2(fortran.find("Fortran order") != std::string::npos, fortran.c_str());
    const std::string huge = errorOf([] { parseNpy(npy("<f4", "(4611686018427387904, 4)", ""), "x.npy"); });
    QVERIFY2(huge.find("too large") != std::string::npos, huge.c_str());
  }

  void npzRoundTripAndMatching() {
    QTemporaryDir dir;
    const QString path = dir.filePath("out.npz");
    HostTensor a{{2, 3}, {1, 2, 3, 4, 5, 6}}, b{{4}, {-1, -2, -3, -4}};
    tessel::runtime::writeNpz(path.toStdString(), {{"logits", a}, {"aux", b}});
    std::vector<NumpyArray> read = tessel::runtime::readNumpyFile(path.toStdString());
    QCOMPARE(read.size(), size_t(2));
    QCOMPARE(read[0].name, std::string("logits"));
    QCOMPARE(read[0].shape, a.shape);
    QCOMPARE(read[0].floats, a.data);
    QCOMPARE(read[1].floats, b.data);
    // By name, whatever the order; missing names are listed with what the file holds.
    auto m = tessel::runtime::matchArrays(read, {"aux", "logits"}, "out.npz");
    QCOMPARE(m.at("aux")->name, std::string("aux"));
    const std::string missing = errorOf([&] { tessel::runtime::matchArrays(read, {"x"}, "out.npz"); });
    QVERIFY2(missing.find("'x'") != std::string::npos && missing.find("'logits', 'aux'") != std::string::npos,
             missing.c_str());
    // np.savez(f, x, y) names them arr_0, arr_1: matched by position.
    tessel::runtime::writeNpz(dir.filePath("pos.npz").toStdString(), {{"arr_0", a}, {"arr_1", b}});
    const std::vector<NumpyArray> positional = tessel::runtime::readNumpyFile(dir.filePath("pos.npz").toStdString());
    auto p = tessel::runtime::matchArrays(positional, {"input", "mask"}, "pos.npz");
    QCOMPARE(p.at("mask")->floats, b.data);
    // A lone .npy for a lone input.
    write(dir.filePath("x.npy"), tessel::runtime::formatNpy(a));
    auto lone = tessel::runtime::readNumpyFile(dir.filePath("x.npy").toStdString());
    QCOMPARE(tessel::runtime::matchArrays(lone, {"input"}, "x.npy").at("input")->floats, a.data);
  }

  void filesThatAreNotArrays() {
    QTemporaryDir dir;
    QVERIFY(errorOf([&] {
              tessel::runtime::readNumpyFile(dir.filePath("none.npz").toStdString());
            }).find("no such file") != std::string::npos);
    QVERIFY(errorOf([&] { tessel::runtime::readNumpyFile(dir.path().toStdString() + "/"); }).find(".npy or .npz") !=
            std::string::npos);
    QDir(dir.path()).mkdir("d.npz");
    QVERIFY(errorOf([&] {
              tessel::runtime::readNumpyFile(dir.filePath("d.npz").toStdString());
            }).find("not a regular file") != std::string::npos);
    write(dir.filePath("junk.npz"), "PK this is no zip");
    const std::string junk = errorOf([&] { tessel::runtime::readNumpyFile(dir.filePath("junk.npz").toStdString()); });
    QVERIFY2(junk.find("not a readable .npz archive") != std::string::npos, junk.c_str());

    // Found by fuzz_numpy: a member of 320 bytes whose header states about
    // 4 GiB was allocated at the stated size (out of memory); now read as it
    // comes and refused.
    const std::string stated = TESSEL_TEST_FUZZ_REGRESSIONS "/numpy/stated_size_4gib.npz";
    const std::string cut = errorOf([&] { tessel::runtime::readNumpyFile(stated); });
    QVERIFY2(cut.find(stated) != std::string::npos, cut.c_str());
  }
};

QTEST_APPLESS_MAIN(TestNumpyFiles)
#include "test_numpy_files.moc"
