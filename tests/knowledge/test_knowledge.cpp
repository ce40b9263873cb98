// Schedule transfer and the knowledge base: decisions recovered from a
// program's steps, tile lengths re-fitted to new extents, programs of one task
// adapted to another of the same structure and checked numerically against
// the naive program, and the knowledge base's file with its refusals.
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "../core/kernel_harness.h"
#include "cost/cost_model_file.h"
#include "frontend/model_loader.h"
#include "fusion/task_extraction.h"
#include "knowledge/knowledge_base.h"
#include "knowledge/record_library.h"
#include "knowledge/schedule_transfer.h"
#include "knowledge/task_structure.h"
#include "schedule/decision_inference.h"
#include "search/mutation.h"
#include "support/base64.h"
#include "target/host_cpu.h"
#include "task/search_task.h"
#include "te/operators.h"
#include "tessel_test.h"

using namespace tessel;
using namespace tessel::schedule;

namespace {

std::vector<int64_t> dimsOf(const QString& text) {
  std::vector<int64_t> dims;
  for (const QString& s : text.split(','))
    dims.push_back(s.toLongLong());
  return dims;
}

// Random programs of a DAG with their decisions; every third one mutated.
std::vector<std::pair<std::vector<Step>, ProgramDecisions>> samplePrograms(const std::vector<Sketch>& sketches,
                                                                           const HardwareParams& hw, size_t n) {
  std::vector<std::pair<std::vector<Step>, ProgramDecisions>> out;
  for (uint64_t seed = 0; out.size() < n && seed < 20 * n; ++seed) {
    std::mt19937_64 rng(seed);
    ProgramDecisions d;
    d.sketch = seed % sketches.size();
    try {
      std::vector<Step> steps = annotateSketch(sketches[d.sketch], hw, rng, &d);
      if (seed % 3 == 2) {
        search::mutateDecisions(d, rng);
        steps = materialize(sketches[d.sketch], d, hw);
      }
      out.push_back({std::move(steps), d});
    } catch (const ScheduleError&) {
    }
  }
  return out;
}

knowledge::LibraryTask libraryTask(const std::string& op, const std::vector<int64_t>& shape, size_t programs,
                                   bool decisions) {
  const task::SearchTask t = task::makeOperatorTask(op, shape, tessel::target::Target::host());
  HardwareParams hw;
  knowledge::LibraryTask lt;
  lt.key = t.key;
  lt.op = op;
  lt.compute = t.dag.toString();
  lt.flops = t.flops;
  double seconds = 1e-3;
  for (auto& [steps, d] : samplePrograms(generateSketches(t.dag, hw), hw, programs))
    lt.programs.push_back({serializeSteps(steps), decisions ? serializeDecisions(d) : "", seconds *= 1.1});
  return lt;
}

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

class TestKnowledge : public QObject {
  Q_OBJECT

 private slots:
  void refitKeepsInnerLengths_data() {
    QTest::addColumn<QString>("lengths");
    QTest::addColumn<int>("extent");
    QTest::addColumn<int>("maxInnermost");
    QTest::addColumn<QString>("expected");
    QTest::newRow("same extent") << "7,2,4" << 56 << 64 << "7,2,4";
    QTest::newRow("larger: the outer level grows") << "2,4" << 64 << 64 << "2,4";
    QTest::newRow("smaller: nearest divisors") << "7,2,4" << 7 << 64 << "1,1,7";
    QTest::newRow("odd extent: nearest in ratio") << "4,16" << 50 << 64 << "2,25";
    QTest::newRow("innermost limit") << "1,64" << 128 << 16 << "1,16";
    QTest::newRow("prime") << "8,8" << 13 << 64 << "1,13";
  }

  void refitKeepsInnerLengths() {
    QFETCH(QString, lengths);
    QFETCH(int, extent);
    QFETCH(int, maxInnermost);
    QFETCH(QString, expected);
    QCOMPARE(refitTileLengths(dimsOf(lengths), extent, maxInnermost), dimsOf(expected));
  }

  // Whatever the lengths, the re-fitted ones divide the extent, keep their
  // level count and the innermost limit.
  void refitAlwaysDivides() {
    std::mt19937_64 rng(7);
    for (int i = 0; i < 2000; ++i) {
      std::vector<int64_t> lengths(1 + rng() % 4);
      for (int64_t& l : lengths)
        l = 1 + int64_t(rng() % 64);
      const int64_t extent = 1 + int64_t(rng() % 3000), maxInnermost = 1 + int64_t(rng() % 64);
      const std::vector<int64_t> out = refitTileLengths(lengths, extent, maxInnermost);
      QCOMPARE(out.size(), lengths.size());
      int64_t product = 1;
      for (int64_t l : out)
        product *= l;
      QVERIFY(product >= 1 && extent % product == 0);
      QVERIFY(out.back() <= maxInnermost);
    }
  }

  void decisionsAreInferred_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<QString>("shape");
    QTest::newRow("matmul") << "matmul"
                            << "48,36,40";
    QTest::newRow("batch_matmul") << "batch_matmul"
                                  << "2,16,24,32";
    QTest::newRow("dense") << "dense"
                           << "8,24,40";
    QTest::newRow("conv2d_bias_relu") << "conv2d_bias_relu"
                                      << "1,8,10,10,8,3,3,1,1";
    QTest::newRow("depthwise") << "conv2d"
                               << "1,16,12,12,16,3,3,1,1,1,16";
    QTest::newRow("softmax") << "softmax"
                             << "4,96";
    QTest::newRow("layernorm") << "layernorm"
                               << "8,64";
    QTest::newRow("max_pool2d") << "max_pool2d"
                                << "1,8,12,12,2,2,0";
  }

  // A program known only by its steps gets back decisions that rebuild it
  // exactly, on the sketch it came from.
  void decisionsAreInferred() {
    QFETCH(QString, op);
    QFETCH(QString, shape);
    const te::ComputeDAG dag = te::makeOperator(op.toStdString(), dimsOf(shape));
    HardwareParams hw;
    const std::vector<Sketch> sketches = generateSketches(dag, hw);
    const auto programs = samplePrograms(sketches, hw, 30);
    QVERIFY(programs.size() >= 20);
    for (const auto& [steps, d] : programs) {
      const std::optional<ProgramDecisions> inferred = inferDecisions(sketches, steps, hw);
      QVERIFY2(inferred, serializeSteps(steps).c_str());
      ProgramDecisions again = *inferred;
      QCOMPARE(serializeSteps(materialize(sketches[inferred->sketch], again, hw)), serializeSteps(steps));
    }
    // Steps of another task are no program of this one.
    const te::ComputeDAG other = te::makeOperator("matmul", {8, 8, 8});
    const auto foreign = samplePrograms(generateSketches(other, hw), hw, 1);
    if (op != "matmul") QVERIFY(!inferDecisions(sketches, foreign.at(0).first, hw));
  }

  void programsTransferToAnotherShape_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    QTest::newRow("matmul") << "matmul"
                            << "48,36,40"
                            << "64,24,56";
    QTest::newRow("dense") << "dense"
                           << "8,24,40"
                           << "16,32,24";
    QTest::newRow("conv2d_bias_relu") << "conv2d_bias_relu"
                                      << "1,8,10,10,8,3,3,1,1"
                                      << "1,16,14,14,8,3,3,1,1";
    QTest::newRow("depthwise") << "conv2d"
                               << "1,16,12,12,16,3,3,1,1,1,16"
                               << "1,24,10,10,24,3,3,1,1,1,24";
    QTest::newRow("softmax") << "softmax"
                             << "4,96"
                             << "6,64";
    QTest::newRow("layernorm") << "layernorm"
                               << "8,64"
                               << "12,48";
  }

  // Programs of one shape, their tiles re-fitted, are programs of another:
  // nearly all fit its sketches, and every one computes the right result.
  void programsTransferToAnotherShape() {
    QFETCH(QString, op);
    QFETCH(QString, from);
    QFETCH(QString, to);
    HardwareParams hw;
    const te::ComputeDAG source = te::makeOperator(op.toStdString(), dimsOf(from));
    const te::ComputeDAG target = te::makeOperator(op.toStdString(), dimsOf(to));
    QCOMPARE(knowledge::structureOf(target.toString()).pattern, knowledge::structureOf(source.toString()).pattern);
    const std::vector<Sketch> targetSketches = generateSketches(target, hw);
    const auto programs = samplePrograms(generateSketches(source, hw), hw, 24);
    std::vector<std::vector<Step>> adapted;
    std::set<std::string> distinct;
    for (const auto& [steps, d] : programs) {
      ProgramDecisions moved = d;
      std::vector<Step> out;
      if (!knowledge::adaptDecisions(targetSketches, hw, moved, &out)) continue;
      // The decisions it came with rebuild it: a population can evolve from it.
      ProgramDecisions again = moved;
      QCOMPARE(serializeSteps(materialize(targetSketches[moved.sketch], again, hw)), serializeSteps(out));
      distinct.insert(serializeSteps(out));
      adapted.push_back(std::move(out));
    }
    QVERIFY2(adapted.size() * 10 >= programs.size() * 9,
             qPrintable(QString("%1 of %2 fit").arg(adapted.size()).arg(programs.size())));
    QVERIFY(distinct.size() * 2 >= adapted.size());
    testing::KernelHarness h;
    const auto res = h.check(target, adapted);
    for (size_t i = 0; i < res.size(); ++i)
      QVERIFY2(res[i].ok, qPrintable(QString::fromStdString(serializeSteps(adapted[i]) + "\n" + res[i].message)));
  }

  // Across models: ResNet-18's 3x3 convolution at 56x56x64 to tiny_cnn's at
  // 32x32 with 3 and 16 input channels. Where the extents differ this much,
  // some decisions come and go (a loop too long to vectorise has no
  // vectorize decision): the tiles decide whether a program fits.
  void programsTransferAcrossModels() {
    auto convs = [](const std::string& model) {
      std::vector<task::SearchTask> out;
      for (const fusion::GraphTask& t : frontend::prepareModel(model, "", "dp", tessel::target::Target::host()).tasks)
        if (t.name == "conv2d_relu") out.push_back(fusion::toSearchTask(t, tessel::target::Target::host()));
      return out;
    };
    const task::SearchTask from = convs("resnet18").at(1);
    QCOMPARE(from.key.substr(0, 22), std::string("conv2d_relu_1_56_56_64"));
    HardwareParams hw;
    knowledge::LibraryTask lt;
    lt.key = from.key;
    lt.op = from.op;
    lt.compute = from.dag.toString();
    for (auto& [steps, d] : samplePrograms(generateSketches(from.dag, hw), hw, 24))
      lt.programs.push_back({serializeSteps(steps), serializeDecisions(d), 1e-3});
    knowledge::RecordLibrary lib;
    lib.add(lt);
    knowledge::TransferOptions o;
    o.programsPerTask = 24;
    const std::vector<task::SearchTask> to = convs("tiny_cnn");
    QCOMPARE(to.size(), size_t(2));
    for (const task::SearchTask& t : to) {
      QCOMPARE(knowledge::structureOf(t.dag.toString()).pattern, knowledge::structureOf(lt.compute).pattern);
      const auto r = knowledge::transferPrograms(t, generateSketches(t.dag, hw), hw, {&lib}, o);
      QVERIFY2(r.programs.size() >= 20,
               qPrintable(QString("%1 of 24 fit (%2 rejected)").arg(r.programs.size()).arg(r.rejected)));
      std::vector<std::vector<Step>> programs;
      for (const auto& p : r.programs) {
        QVERIFY(p.hasDecisions && !p.exact && p.distance > 0);
        programs.push_back(p.steps);
      }
      testing::KernelHarness h;
      const auto res = h.check(t.dag, programs);
      for (size_t i = 0; i < res.size(); ++i)
        QVERIFY2(res[i].ok, qPrintable(QString::fromStdString(serializeSteps(programs[i]) + "\n" + res[i].message)));
    }
  }

  void structuresSeparateOpsAndMeasureShapes() {
    const auto conv = [](std::vector<int64_t> shape) {
      return knowledge::structureOf(te::makeOperator("conv2d_bias_relu", shape).toString());
    };
    const auto a = conv({1, 64, 56, 56, 64, 3, 3, 1, 1});
    const auto near = conv({1, 64, 28, 28, 64, 3, 3, 1, 1});
    const auto far = conv({1, 256, 7, 7, 256, 3, 3, 1, 1});
    QCOMPARE(near.pattern, a.pattern);
    QCOMPARE(far.pattern, a.pattern);
    QCOMPARE(knowledge::structureDistance(a, a), 0.0);
    QVERIFY(knowledge::structureDistance(a, near) < knowledge::structureDistance(a, far));
    const auto matmul = knowledge::structureOf(te::makeOperator("matmul", {64, 64, 64}).toString());
    QVERIFY(matmul.pattern != a.pattern);
    QVERIFY(std::isinf(knowledge::structureDistance(a, matmul)));
  }

  void libraryGivesTheNearestTasksFirst() {
    knowledge::RecordLibrary lib;
    lib.add(libraryTask("matmul", {64, 64, 64}, 3, true));
    lib.add(libraryTask("matmul", {512, 512, 512}, 3, true));
    lib.add(libraryTask("matmul", {96, 96, 96}, 3, true));
    lib.add(libraryTask("softmax", {4, 96}, 3, true));
    QCOMPARE(lib.tasks().size(), size_t(4));
    QCOMPARE(lib.programs(), size_t(12));
    const task::SearchTask t = task::makeOperatorTask("matmul", {80, 80, 80}, tessel::target::Target::host());
    const auto near = lib.similar(knowledge::structureOf(t.dag.toString()), t.key, t.target, 10);
    QCOMPARE(near.size(), size_t(3));                 // not the softmax
    QCOMPARE(near[0].task->key, lib.tasks()[2].key);  // 96 is nearest to 80
    QCOMPARE(near[1].task->key, lib.tasks()[0].key);
    QCOMPARE(near[2].task->key, lib.tasks()[1].key);
    // A task is not similar to itself, and adding it twice merges its programs.
    const task::SearchTask same = task::makeOperatorTask("matmul", {64, 64, 64}, tessel::target::Target::host());
    QCOMPARE(lib.similar(knowledge::structureOf(same.dag.toString()), same.key, same.target, 10).size(), size_t(2));
    lib.add(libraryTask("matmul", {64, 64, 64}, 5, true));
    QCOMPARE(lib.tasks().size(), size_t(4));
    QCOMPARE(lib.find(same.key, same.target)->programs.size(), size_t(5));
  }

  // An exact match replays its stored steps, first; similar tasks follow,
  // re-fitted, each program once.
  void transferPutsExactMatchesFirst() {
    knowledge::RecordLibrary lib;
    lib.add(libraryTask("matmul", {64, 48, 32}, 4, false));  // steps only: replayed as they are
    lib.add(libraryTask("matmul", {96, 48, 32}, 6, true));
    const task::SearchTask t = task::makeOperatorTask("matmul", {64, 48, 32}, tessel::target::Target::host());
    HardwareParams hw;
    const auto r = knowledge::transferPrograms(t, generateSketches(t.dag, hw), hw, {&lib});
    QCOMPARE(r.sources.size(), size_t(2));
    QCOMPARE(r.sources[0], lib.find(t.key, t.target));
    QCOMPARE(r.sourcePrograms, size_t(10));
    QVERIFY(r.programs.size() >= 8);
    for (size_t i = 0; i < 4; ++i) {
      QVERIFY(r.programs[i].exact);
      QVERIFY(!r.programs[i].hasDecisions);
      QCOMPARE(serializeSteps(r.programs[i].steps), lib.tasks()[0].programs[i].steps);
    }
    std::set<std::string> steps;
    for (size_t i = 4; i < r.programs.size(); ++i) {
      QVERIFY(!r.programs[i].exact && r.programs[i].hasDecisions);
      QVERIFY(r.programs[i].distance > 0);
    }
    for (const auto& p : r.programs)
      QVERIFY(steps.insert(serializeSteps(p.steps)).second);
    std::vector<std::vector<Step>> programs;
    for (const auto& p : r.programs)
      programs.push_back(p.steps);
    testing::KernelHarness h;
    for (const auto& res : h.check(t.dag, programs))
      QVERIFY2(res.ok, res.message.c_str());
  }

  void base64RoundTrips() {
    std::mt19937_64 rng(3);
    for (size_t n = 0; n < 40; ++n) {
      std::string bytes(n, '\0');
      for (char& c : bytes)
        c = char(rng() & 255);
      QCOMPARE(support::fromBase64(support::toBase64(bytes)).value_or("?"), bytes);
    }
    QCOMPARE(support::toBase64("Man"), std::string("TWFu"));
    QCOMPARE(support::toBase64("Ma"), std::string("TWE="));
    for (const char* bad : {"TWF", "TW=u", "T*Fu", "TWE=TWFu"})
      QVERIFY2(!support::fromBase64(bad), bad);
  }

  void knowledgeBaseRoundTrips() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("kb.tkb").toStdString();
    knowledge::KnowledgeBase kb;
    kb.info.targetClass = "cpu-avx512";
    kb.info.learnedFormat = 6;
    kb.info.threads = 2;
    kb.info.cpu = "amd-zen4";
    kb.info.builtFrom = {"set.jsonl.gz"};
    kb.info.costModel = "xgb";
    kb.info.costModelTrainedOn = 21008;
    kb.costModelFile = std::string("tessel-cost-model-file 1 xgb\n\0\1\2\n\xff", 34);
    kb.library.add(libraryTask("matmul", {64, 48, 32}, 4, true));
    kb.library.add(libraryTask("softmax", {4, 96}, 3, false));
    knowledge::writeKnowledgeBase(path, kb);
    QCOMPARE(readBytes(path).substr(0, 2), std::string("\x1f\x8b"));  // gzip
    const knowledge::KnowledgeBase back = knowledge::readKnowledgeBase(path);
    QCOMPARE(back.info.targetClass, kb.info.targetClass);
    QCOMPARE(back.info.learnedFormat, 6);
    QCOMPARE(back.info.threads, 2);
    QCOMPARE(back.info.cpu, std::string("amd-zen4"));
    QCOMPARE(back.info.builtFrom, kb.info.builtFrom);
    QCOMPARE(back.info.costModel, std::string("xgb"));
    QCOMPARE(back.info.costModelTrainedOn, size_t(21008));
    QVERIFY(!back.info.created.empty() && !back.info.version.empty());
    QCOMPARE(back.costModelFile, kb.costModelFile);
    QCOMPARE(back.library.tasks().size(), size_t(2));
    for (size_t i = 0; i < 2; ++i) {
      const auto& a = kb.library.tasks()[i];
      const auto& b = back.library.tasks()[i];
      QCOMPARE(b.key, a.key);
      QCOMPARE(b.compute, a.compute);
      QCOMPARE(b.structure.pattern, a.structure.pattern);
      QCOMPARE(b.programs.size(), a.programs.size());
      for (size_t k = 0; k < a.programs.size(); ++k) {
        QCOMPARE(b.programs[k].steps, a.programs[k].steps);
        QCOMPARE(b.programs[k].decisions, a.programs[k].decisions);
        QCOMPARE(b.programs[k].seconds, a.programs[k].seconds);
      }
    }
    QCOMPARE(knowledge::readKnowledgeInfo(path).targetClass, std::string("cpu-avx512"));
  }

  // Another format or class is refused naming both; the learned models'
  // format is checked where the base carries a model.
  void knowledgeBasesThatDoNotFitAreRefused() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("kb.tkb").toStdString();
    knowledge::KnowledgeBase kb;
    kb.info.format = 2;
    kb.info.targetClass = "cpu-sse";
    knowledge::writeKnowledgeBase(path, kb);
    try {
      knowledge::readKnowledgeBase(path);
      QFAIL("a knowledge base of format 2 was read");
    } catch (const knowledge::KnowledgeMismatch& e) {
      QVERIFY2(QString(e.what()).contains("format 2") && QString(e.what()).contains("format 1"), e.what());
    }
    knowledge::KnowledgeInfo info;
    info.targetClass = "cpu-sse";
    const target::Target avx512 = target::parseTarget("cpu -arch=x86-64-v4");
    QCOMPARE(knowledge::targetClass(avx512), std::string("cpu-avx512"));
    QCOMPARE(knowledge::targetClass(target::parseTarget("cpu -arch=x86-64-v3 -threads=1")), std::string("cpu-avx2"));
    QCOMPARE(knowledge::targetClass(target::parseTarget("cuda -arch=sm_90")), std::string("cuda-sm_90"));
    try {
      knowledge::checkKnowledgeFits(path, info, avx512, 6);
      QFAIL("an sse base fitted an avx512 target");
    } catch (const knowledge::KnowledgeMismatch& e) {
      QVERIFY2(QString(e.what()).contains("cpu-sse") && QString(e.what()).contains("cpu-avx512"), e.what());
    }
    info.targetClass = "cpu-avx512";
    knowledge::checkKnowledgeFits(path, info, avx512, 6);  // no model: any learned format
    info.costModel = "atformer";
    info.learnedFormat = 5;
    try {
      knowledge::checkKnowledgeFits(path, info, avx512, 6);
      QFAIL("a model of learned format 5 fitted format 6");
    } catch (const knowledge::KnowledgeMismatch& e) {
      QVERIFY2(QString(e.what()).contains("format 5") && QString(e.what()).contains("format 6"), e.what());
    }
  }

  // CPUID's family and model name the microarchitecture; one outside the
  // table still names itself.
  void cpusAreNamedByMicroarchitecture_data() {
    QTest::addColumn<QString>("vendor");
    QTest::addColumn<int>("family");
    QTest::addColumn<int>("model");
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("title");
    QTest::newRow("zen3 milan") << "AuthenticAMD" << 25 << 0x01 << "amd-zen3"
                                << "AMD Zen 3";
    QTest::newRow("zen4 genoa") << "AuthenticAMD" << 25 << 0x11 << "amd-zen4"
                                << "AMD Zen 4";
    QTest::newRow("zen4 phoenix") << "AuthenticAMD" << 25 << 0x74 << "amd-zen4"
                                  << "AMD Zen 4";
    QTest::newRow("zen5 turin") << "AuthenticAMD" << 26 << 0x02 << "amd-zen5"
                                << "AMD Zen 5";
    QTest::newRow("emerald rapids") << "GenuineIntel" << 6 << 207 << "intel-emeraldrapids"
                                    << "Intel Emerald Rapids";
    QTest::newRow("sapphire rapids") << "GenuineIntel" << 6 << 143 << "intel-sapphirerapids"
                                     << "Intel Sapphire Rapids";
    QTest::newRow("unknown amd") << "AuthenticAMD" << 26 << 0x80 << "amd-f26-m128"
                                 << "AMD family 26 model 128";
    QTest::newRow("unknown vendor") << "HygonGenuine" << 24 << 1 << "cpu-f24-m1"
                                    << "CPU family 24 model 1";
  }
  void cpusAreNamedByMicroarchitecture() {
    QFETCH(QString, vendor);
    QFETCH(int, family);
    QFETCH(int, model);
    QFETCH(QString, name);
    QFETCH(QString, title);
    const std::string got = target::microarchitecture({vendor.toStdString(), family, model, ""});
    QCOMPARE(QString::fromStdString(got), name);
    QCOMPARE(QString::fromStdString(target::microarchitectureTitle(got)), title);
    QVERIFY(!target::hostCpuModel().vendor.empty());
    QCOMPARE(target::hostMicroarchitecture(), target::microarchitecture(target::hostCpuModel()));
  }

  // Of a class's bases, the one measured on this microarchitecture is taken,
  // else one of the same vendor, else the class's default file; other
  // classes' files never.
  void theBaseOfThisCpuIsChosen() {
    QTemporaryDir dir;
    auto write = [&](const std::string& name, const std::string& cls, const std::string& cpu) {
      knowledge::KnowledgeBase kb;
      kb.info.targetClass = cls;
      kb.info.cpu = cpu;
      const std::string path = dir.filePath(QString::fromStdString(name)).toStdString();
      knowledge::writeKnowledgeBase(path, kb);
      return path;
    };
    const std::string folder = dir.path().toStdString();
    QCOMPARE(knowledge::chooseKnowledgeBase(folder, "cpu-avx512", "amd-zen5"), std::string());
    const std::string zen4 = write("cpu-avx512.tkb", "cpu-avx512", "amd-zen4");
    QCOMPARE(knowledge::chooseKnowledgeBase(folder, "cpu-avx512", "amd-zen5"), zen4);
    const std::string zen5 = write("cpu-avx512-amd-zen5.tkb", "cpu-avx512", "amd-zen5");
    const std::string intel = write("cpu-avx512-intel.tkb", "cpu-avx512", "intel-emeraldrapids");
    write("cpu-avx2-amd-zen5.tkb", "cpu-avx2", "amd-zen5");
    writeBytes(dir.filePath("cpu-avx512.tkb.part").toStdString(), "not a base");
    QCOMPARE(knowledge::chooseKnowledgeBase(folder, "cpu-avx512", "amd-zen5"), zen5);
    QCOMPARE(knowledge::chooseKnowledgeBase(folder, "cpu-avx512", "amd-zen4"), zen4);
    QCOMPARE(knowledge::chooseKnowledgeBase(folder, "cpu-avx512", "intel-emeraldrapids"), intel);
    // Same vendor: the default file first among equals, then by name.
    QCOMPARE(knowledge::chooseKnowledgeBase(folder, "cpu-avx512", "amd-zen3"), zen4);
    QCOMPARE(knowledge::chooseKnowledgeBase(folder, "cpu-avx512", "intel-sapphirerapids"), intel);
    QCOMPARE(knowledge::chooseKnowledgeBase(folder, "cpu-avx512", "cpu-f24-m1"), zen4);
    QCOMPARE(knowledge::chooseKnowledgeBase(folder, "cpu-avx512", ""), zen4);
    QCOMPARE(knowledge::chooseKnowledgeBase(folder, "cpu-avx2", "amd-zen4"),
             dir.filePath("cpu-avx2-amd-zen5.tkb").toStdString());
    QCOMPARE(knowledge::chooseKnowledgeBase(folder, "cpu-sse", "amd-zen4"), std::string());
    // A damaged base of the class is an error naming it, not passed over.
    writeBytes(dir.filePath("cpu-avx512-broken.tkb").toStdString(), "hello\n");
    try {
      knowledge::chooseKnowledgeBase(folder, "cpu-avx512", "amd-zen5");
      QFAIL("a damaged base was passed over");
    } catch (const std::runtime_error& e) {
      QVERIFY2(QString(e.what()).contains("cpu-avx512-broken.tkb"), e.what());
    }
  }

  // The bases Tessel ships (resources/knowledge/) fit this build: the class's
  // default and one per measured microarchitecture, each naming its CPU, with
  // a cost model of this build's learned format (a stale one would be refused
  // at every tuning).
  void shippedBasesFitThisBuild() {
    const std::string folder = TESSEL_SOURCE_DIR "/resources/knowledge";
    const std::map<std::string, std::string> shipped = {{"cpu-avx512.tkb", "amd-zen4"},
                                                        {"cpu-avx512-amd-zen5.tkb", "amd-zen5"}};
    const target::Target avx512 = target::parseTarget("cpu -arch=x86-64-v4");
    for (const auto& [name, cpu] : shipped) {
      const std::string path = folder + "/" + name;
      const knowledge::KnowledgeInfo info = knowledge::readKnowledgeInfo(path);
      QCOMPARE(info.cpu, cpu);
      QCOMPARE(info.costModel, std::string("atformer"));
      QCOMPARE(info.costModelTrainedOn, size_t(21008));
      knowledge::checkKnowledgeFits(path, info, avx512, cost::kLearnedModelFormat);
    }
    QCOMPARE(knowledge::chooseKnowledgeBase(folder, "cpu-avx512", "amd-zen5"), folder + "/cpu-avx512-amd-zen5.tkb");
    QCOMPARE(knowledge::chooseKnowledgeBase(folder, "cpu-avx512", "intel-emeraldrapids"), folder + "/cpu-avx512.tkb");
  }

  // A damaged file is an error naming it, never a crash or a half-read base.
  void damagedKnowledgeBasesAreErrors() {
    QTemporaryDir dir;
    const std::string good = dir.filePath("good.tkb").toStdString();
    knowledge::KnowledgeBase kb;
    kb.info.targetClass = "cpu-avx512";
    for (int i = 0; i < 6; ++i)
      kb.library.add(libraryTask("matmul", {16 * (i + 1), 32, 32}, 8, true));
    knowledge::writeKnowledgeBase(good, kb);
    const std::string bytes = readBytes(good);
    std::string flipped = bytes;
    for (size_t i = bytes.size() / 3; i < bytes.size() / 3 + 16; ++i)
      flipped[i] = char(~flipped[i]);
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"empty", ""},
        {"text", "hello\nworld\n"},
        {"json", "{\"not\": \"a knowledge base\"}\n"},
        {"half", bytes.substr(0, bytes.size() / 2)},
        {"flipped", flipped},
    };
    for (const auto& [name, content] : cases) {
      const std::string path = dir.filePath(QString::fromStdString(name + ".tkb")).toStdString();
      writeBytes(path, content);
      try {
        knowledge::readKnowledgeBase(path);
        QFAIL(qPrintable(QString::fromStdString(name + " was read")));
      } catch (const std::runtime_error& e) {
        QVERIFY2(QString(e.what()).contains(QString::fromStdString(path)), e.what());
      }
    }
    try {
      knowledge::readKnowledgeBase(dir.path().toStdString());
      QFAIL("a folder was read");
    } catch (const std::runtime_error&) {
    }
  }
};

QTEST_GUILESS_MAIN(TestKnowledge)
#include "test_knowledge.moc"
