// What travels between a tuner and its agents, without Redis: compute
// definitions as JSON (exact round trip over every operator and every task of
// three zoo models), jobs and results (every field, refusal of what is
// wrong), and Redis URLs.
#include <QtTest>
#include <cmath>
#include <nlohmann/json.hpp>

#include "fleet/job_format.h"
#include "fleet/redis_url.h"
#include "frontend/model_loader.h"
#include "schedule/steps.h"
#include "task/search_task.h"
#include "te/dag_json.h"
#include "te/operators.h"
#include "tessel_test.h"

using namespace tessel;
using nlohmann::json;

namespace {

std::vector<task::SearchTask> sampleTasks() {
  std::vector<task::SearchTask> tasks;
  tasks.push_back(task::makeOperatorTask("matmul", {64, 32, 16}, tessel::target::Target::host()));
  tasks.push_back(task::makeOperatorTask("conv2d", {1, 8, 14, 14, 16, 3, 3, 1, 1}, tessel::target::Target::host()));
  tasks.push_back(task::makeOperatorTask("conv2d_bias_relu", {1, 8, 14, 14, 16, 3, 3, 2, 1},
                                         tessel::target::Target::host(), "nchw"));
  tasks.push_back(task::makeOperatorTask("softmax", {4, 100}, tessel::target::Target::host()));
  tasks.push_back(task::makeOperatorTask("layernorm", {8, 64}, tessel::target::Target::host()));
  // Fused subgraphs: convolutions with epilogues, attention, GELU (erf), pools.
  for (const char* model : {"tiny_cnn", "bert_tiny", "mobilenet_v2"}) {
    const frontend::PreparedModel m = frontend::prepareModel(model, "", "dp", tessel::target::Target::host());
    for (const fusion::GraphTask& t : m.tasks)
      tasks.push_back(fusion::toSearchTask(t, tessel::target::Target::host()));
  }
  return tasks;
}

// A job text with one field changed.
std::string edited(const std::string& text, const std::function<void(json&)>& edit) {
  json j = json::parse(text);
  edit(j);
  return j.dump();
}

fleet::MeasureJob sampleJob() {
  fleet::MeasureJob job;
  job.id = "tuner-1/7";
  job.tuner = "tuner-1";
  job.task = task::makeOperatorTask("matmul", {64, 32, 16}, tessel::target::Target::host());
  job.rules.timeoutSeconds = 3;
  job.rules.repeats = 5;
  job.rules.cacheState = measure::CacheState::Cold;
  job.rules.registerTiles = false;
  job.programs = {schedule::serializeSteps({})};
  return job;
}

}  // namespace

class TestFleetFormat : public QObject {
  Q_OBJECT
 private slots:
  // Every node, immediate and output survives: the text of the definition
  // and so the workload key are the same, and so is the JSON written again.
  void definitionsRoundTripExactly() {
    const std::vector<task::SearchTask> tasks = sampleTasks();
    QVERIFY(tasks.size() > 20);
    for (const task::SearchTask& t : tasks) {
      const json j = te::dagToJson(t.dag);
      const te::ComputeDAG back = te::dagFromJson(json::parse(j.dump()));
      QCOMPARE(back.toString(), t.dag.toString());
      QCOMPARE(task::workloadKey(t.op, t.shape, back), t.key);
      QCOMPARE(te::dagToJson(back).dump(), j.dump());
      QCOMPARE(back.outputs(), t.dag.outputs());
      QCOMPARE(back.flops(), t.dag.flops());
      for (size_t i = 0; i < back.ops().size(); ++i)
        QCOMPARE(back.ops()[i].layoutFree, t.dag.ops()[i].layoutFree);
    }
  }

  void badDefinitionsAreRefusedByName_data() {
    QTest::addColumn<QString>("edit");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown kind") << "kind"
                                  << "unknown expression kind";
    QTest::newRow("wrong arity") << "arity"
                                 << "operands, not 2";
    QTest::newRow("load of an undefined tensor") << "load"
                                                 << "no earlier operation defines";
    QTest::newRow("zero extent") << "extent"
                                 << "extent >= 1";
    QTest::newRow("output of nothing") << "output"
                                       << "an output names no operation";
    QTest::newRow("not an object") << "array"
                                   << "is not {ops";
    QTest::newRow("load with an index too few") << "rank"
                                                << "has 1 indices for its 2 dimensions";
    QTest::newRow("variable of no axis") << "var"
                                         << "is not an axis of its operation";
    QTest::newRow("field of the wrong type") << "type"
                                             << "does not read";
  }
  void badDefinitionsAreRefusedByName() {
    QFETCH(QString, edit);
    QFETCH(QString, message);
    json j = te::dagToJson(task::makeOperatorTask("matmul", {8, 8, 8}, tessel::target::Target::host()).dag);
    json& body = j["ops"][2]["body"];  // C = sum(A * B): ["mul", "f32", load, load]
    QCOMPARE(QString::fromStdString(j["ops"][2]["name"].get<std::string>()), QString("C"));
    if (edit == "kind") body[0] = "frobnicate";
    if (edit == "arity") body.push_back(json::array({"int", "i32", 1}));
    if (edit == "load") body[2][2] = "Z";
    if (edit == "extent") j["ops"][2]["axes"][0][1] = 0;
    if (edit == "output") j["outputs"] = json::array({"nothing"});
    if (edit == "array") j = json::array();
    if (edit == "rank") body[2].erase(body[2].size() - 1);  // load A[i, k] -> A[i]
    if (edit == "var") body[2][3] = json::array({"var", "i32", "q"});
    if (edit == "type") j["ops"][0]["placeholder"] = 1;
    try {
      te::dagFromJson(j);
      QFAIL("accepted");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QString(e.what()).contains(message), e.what());
    }
  }

  // An expression nested a million deep (a hostile job) is refused without
  // recursing into it.
  void deepExpressionsAreRefused() {
    json j = te::dagToJson(task::makeOperatorTask("matmul", {8, 8, 8}, tessel::target::Target::host()).dag);
    std::string deep;
    const int depth = 100000;
    for (int i = 0; i < depth; ++i)
      deep += "[\"not\",\"bool\",";
    deep += "[\"int\",\"bool\",1]";
    deep += std::string(depth, ']');
    j["ops"][2]["body"] = json::parse(deep);
    try {
      te::dagFromJson(j);
      QFAIL("accepted");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QString(e.what()).contains("nested deeper than"), e.what());
    }
  }

  // JSON nested a hundred thousand deep where a job or a result has a
  // number: refused while parsing (copying or printing it would recurse
  // through the stack), and the agent or tuner goes on.
  void deepJsonIsRefusedWhileParsing() {
    const int depth = 100000;
    const std::string deep = std::string(depth, '[') + std::string(depth, ']');
    const std::string job =
        R"({"format": "tessel-measure-job", "version": )" + deep + R"(, "id": "t/1", "tuner": "t"})";
    try {
      fleet::decodeJob(job);
      QFAIL("accepted");
    } catch (const fleet::JobFormatError& e) {
      QVERIFY2(QString(e.what()).contains("nested deeper than"), e.what());
    }
    QVERIFY(fleet::jobAddress(job).second.empty());
    const std::string result =
        R"({"format": "tessel-measure-result", "version": 1, "job": "t/1", "agent_s": )" + deep + "}";
    QVERIFY_THROWS_EXCEPTION(fleet::JobFormatError, fleet::decodeResult(result));
    QVERIFY(fleet::parseUntrusted(result).is_discarded());
  }

  // A result that does not decode still says which job it answers.
  void unreadableResultsNameTheirJob() {
    const std::string text = R"({"format": "tessel-measure-result", "version": 1, "job": "t/9", "agent": 5})";
    QVERIFY_THROWS_EXCEPTION(fleet::JobFormatError, fleet::decodeResult(text));
    QCOMPARE(fleet::resultJob(text), std::string("t/9"));
    QCOMPARE(fleet::resultJob("{not json"), std::string());
  }

  void jobsRoundTrip() {
    const fleet::MeasureJob job = sampleJob();
    const fleet::MeasureJob back = fleet::decodeJob(fleet::encodeJob(job));
    QCOMPARE(back.id, job.id);
    QCOMPARE(back.tuner, job.tuner);
    QCOMPARE(back.task.key, job.task.key);
    QCOMPARE(back.task.op, job.task.op);
    QCOMPARE(back.task.shape, job.task.shape);
    QCOMPARE(back.task.target, job.task.target);
    QCOMPARE(back.task.layout, job.task.layout);
    QCOMPARE(back.task.flops, job.task.flops);
    QCOMPARE(back.rules.timeoutSeconds, 3.0);
    QCOMPARE(back.rules.repeats, 5);
    QVERIFY(back.rules.cacheState == measure::CacheState::Cold);
    QCOMPARE(back.rules.registerTiles, false);
    QCOMPARE(back.programs, job.programs);
  }

  void badJobsAreRefusedByName_data() {
    QTest::addColumn<QString>("edit");
    QTest::addColumn<QString>("message");
    QTest::newRow("not JSON") << "garbage"
                              << "not a JSON object";
    QTest::newRow("other format") << "format"
                                  << "not in the format 'tessel-measure-job'";
    QTest::newRow("newer version") << "version"
                                   << "of version 99";
    QTest::newRow("no programs") << "programs"
                                 << "carries 0 programs";
    QTest::newRow("definition of another key") << "key"
                                               << "does not give its workload key";
    QTest::newRow("bad target") << "target"
                                << "the job's target";
    QTest::newRow("endless timeout") << "timeout"
                                     << "not in (0, 3600]";
    QTest::newRow("no rules") << "rules"
                              << "'rules' is not an object";
    QTest::newRow("wrong type") << "type"
                                << "field 'repeats' has the wrong type";
  }
  void badJobsAreRefusedByName() {
    QFETCH(QString, edit);
    QFETCH(QString, message);
    const std::string good = fleet::encodeJob(sampleJob());
    std::string text = edited(good, [&](json& j) {
      if (edit == "format") j["format"] = "something-else";
      if (edit == "version") j["version"] = 99;
      if (edit == "programs") j["programs"] = json::array();
      if (edit == "key") j["task"]["dag"]["ops"][0]["shape"][0] = 65;
      if (edit == "target") j["task"]["target"] = "tpu";
      if (edit == "timeout") j["rules"]["timeout_s"] = 1e9;
      if (edit == "rules") j.erase("rules");
      if (edit == "type") j["rules"]["repeats"] = "many";
    });
    if (edit == "garbage") text = "{not json";
    try {
      fleet::decodeJob(text);
      QFAIL("accepted");
    } catch (const fleet::JobFormatError& e) {
      QVERIFY2(QString(e.what()).contains(message), e.what());
    }
    // Where the error result goes is still known, unless the text is no JSON.
    const auto [id, tuner] = fleet::jobAddress(text);
    QCOMPARE(QString::fromStdString(tuner), edit == "garbage" ? QString() : QString("tuner-1"));
  }

  // Results carry every measurement as measured: infinities and NaN too.
  void resultsRoundTrip() {
    fleet::JobResult r;
    r.job = "tuner-1/7";
    r.agent = "host:1:abc";
    r.agentSeconds = 1.25;
    measure::MeasureResult ok;
    ok.costs = {1e-3, 1.5e-3, 2e-3};
    ok.buildSeconds = 0.5;
    ok.runSeconds = 0.1;
    ok.maxAbsError = 1e-6;
    measure::MeasureResult wrong;
    wrong.error = measure::ErrorCode::WrongAnswer;
    wrong.message = "max error inf \xff (bad UTF-8 from a compiler)";
    wrong.maxAbsError = std::numeric_limits<double>::infinity();
    measure::MeasureResult nan;
    nan.error = measure::ErrorCode::WrongAnswer;
    nan.maxAbsError = std::numeric_limits<double>::quiet_NaN();
    r.results = {ok, wrong, nan};
    const fleet::JobResult back = fleet::decodeResult(fleet::encodeResult(r));
    QCOMPARE(back.job, r.job);
    QCOMPARE(back.agent, r.agent);
    QCOMPARE(back.agentSeconds, 1.25);
    QCOMPARE(back.results.size(), size_t(3));
    QCOMPARE(back.results[0].costs, ok.costs);
    QCOMPARE(back.results[0].buildSeconds, 0.5);
    QVERIFY(back.results[1].error == measure::ErrorCode::WrongAnswer);
    QVERIFY(std::isinf(back.results[1].maxAbsError));
    QVERIFY(back.results[1].message.find("(bad UTF-8 from a compiler)") != std::string::npos);
    QVERIFY(std::isnan(back.results[2].maxAbsError));
  }

  // A result no tuner should believe: a successful program without a time,
  // or with a time of zero, or an error code that does not exist.
  void badResultsAreRefused() {
    fleet::JobResult r;
    r.job = "t/1";
    r.agent = "a";
    measure::MeasureResult m;
    m.costs = {0.0};
    r.results = {m};
    QVERIFY_THROWS_EXCEPTION(fleet::JobFormatError, fleet::decodeResult(fleet::encodeResult(r)));
    r.results[0].costs.clear();
    QVERIFY_THROWS_EXCEPTION(fleet::JobFormatError, fleet::decodeResult(fleet::encodeResult(r)));
    const std::string text = edited(fleet::encodeResult(r), [](json& j) { j["results"][0]["error"] = 42; });
    QVERIFY_THROWS_EXCEPTION(fleet::JobFormatError, fleet::decodeResult(text));
  }

  void redisUrls_data() {
    QTest::addColumn<QString>("url");
    QTest::addColumn<QString>("host");
    QTest::addColumn<int>("port");
    QTest::addColumn<QString>("socket");
    QTest::addColumn<QString>("user");
    QTest::addColumn<QString>("password");
    QTest::addColumn<int>("db");
    QTest::newRow("host and port") << "redis://10.0.0.5:7000"
                                   << "10.0.0.5" << 7000 << ""
                                   << ""
                                   << "" << 0;
    QTest::newRow("default port") << "redis://queue"
                                  << "queue" << 6379 << ""
                                  << ""
                                  << "" << 0;
    QTest::newRow("password") << "redis://:s%40cret@h:1/3"
                              << "h" << 1 << ""
                              << ""
                              << "s@cret" << 3;
    QTest::newRow("user and password") << "redis://tuner:pw@h"
                                       << "h" << 6379 << ""
                                       << "tuner"
                                       << "pw" << 0;
    QTest::newRow("IPv6") << "redis://[::1]:6380"
                          << "::1" << 6380 << ""
                          << ""
                          << "" << 0;
    QTest::newRow("unix socket") << "unix:///run/r.sock?password=s3cret&db=2"
                                 << "" << 6379 << "/run/r.sock"
                                 << ""
                                 << "s3cret" << 2;
  }
  void redisUrls() {
    QFETCH(QString, url);
    const fleet::RedisEndpoint e = fleet::parseRedisUrl(url.toStdString());
    QTEST(QString::fromStdString(e.host), "host");
    QTEST(e.port, "port");
    QTEST(QString::fromStdString(e.socketPath), "socket");
    QTEST(QString::fromStdString(e.user), "user");
    QTEST(QString::fromStdString(e.password), "password");
    QTEST(e.database, "db");
    QVERIFY(e.str().find(e.password.empty() ? "\x01" : e.password) == std::string::npos);  // never shown
  }

  void badRedisUrls_data() {
    QTest::addColumn<QString>("url");
    QTest::addColumn<QString>("message");
    QTest::newRow("no scheme") << "localhost:6379"
                               << "is not a Redis URL";
    QTest::newRow("port") << "redis://h:99999"
                          << "port";
    QTest::newRow("no host") << "redis://:pw@"
                             << "names no host";
    QTest::newRow("relative socket") << "unix://r.sock"
                                     << "absolute path";
    QTest::newRow("unknown parameter") << "unix:///r.sock?timeout=3"
                                       << "unknown parameter 'timeout'";
    QTest::newRow("bad escape") << "redis://:%zz@h"
                                << "percent-encoding";
    QTest::newRow("certificates without TLS") << "redis://h?cacert=/ca.pem"
                                              << "only a rediss:// URL takes them";
    QTest::newRow("TLS takes no password parameter") << "rediss://h?password=x"
                                                     << "unknown parameter 'password' (cacert, cert, key)";
    QTest::newRow("key without certificate") << "rediss://h?key=/k.pem"
                                             << "client key without its certificate";
  }

  // rediss:// names its certificate files, whose paths may hold '@', '/' and '?'.
  void tlsRedisUrls() {
    const fleet::RedisEndpoint e = fleet::parseRedisUrl(
        "rediss://:p%3Fw%2Fx@cache.lan:6390/2?cacert=/etc/t@2025/ca.pem&cert=/c?.pem&key=/c%20k.pem");
    QVERIFY(e.tls);
    QCOMPARE(e.host, std::string("cache.lan"));
    QCOMPARE(e.port, 6390);
    QCOMPARE(e.database, 2);
    QCOMPARE(e.password, std::string("p?w/x"));
    QCOMPARE(e.caFile, std::string("/etc/t@2025/ca.pem"));
    QCOMPARE(e.certFile, std::string("/c?.pem"));
    QCOMPARE(e.keyFile, std::string("/c k.pem"));
    QCOMPARE(e.str(), std::string("rediss://cache.lan:6390/2"));
    const fleet::RedisEndpoint plain = fleet::parseRedisUrl("rediss://h");
    QVERIFY(plain.tls && plain.caFile.empty() && plain.certFile.empty());
    const fleet::RedisEndpoint noPassword = fleet::parseRedisUrl("rediss://r.lan?cacert=ca@2025.pem");
    QCOMPARE(noPassword.host, std::string("r.lan"));
    QVERIFY(noPassword.password.empty());
    QCOMPARE(noPassword.caFile, std::string("ca@2025.pem"));
    QCOMPARE(fleet::parseRedisUrl("rediss://[::1]:6380").str(), std::string("rediss://[::1]:6380"));
  }

  // A URL that does not parse is named in the error without its password.
  void urlErrorsHideThePassword() {
    for (const char* url :
         {"redis://:hunter2@h:99999", "redis://tuner:hunter2@h?cacert=/ca.pem", "rediss://:hunter2@h/x",
          "unix:///r.sock?password=hunter2&db=z", "redis://:hunter2@", "redis://:hunter%zz2@h"}) {
      try {
        fleet::parseRedisUrl(url);
        QFAIL(url);
      } catch (const std::invalid_argument& e) {
        QVERIFY2(!QString(e.what()).contains("hunter"), e.what());
        QVERIFY2(QString(e.what()).contains("***"), e.what());
      }
    }
  }
  void badRedisUrls() {
    QFETCH(QString, url);
    QFETCH(QString, message);
    try {
      fleet::parseRedisUrl(url.toStdString());
      QFAIL("accepted");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QString(e.what()).contains(message), e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestFleetFormat)
#include "test_fleet_format.moc"
