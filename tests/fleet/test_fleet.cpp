// The measurement fleet end to end, with a real redis-server (started here on
// a loopback port, with a password), real tessel-agent processes and the real
// tessel CLI: two agents share a tuning; an agent SIGKILLed with a job in hand
// loses nothing; Redis killed and restarted empty mid-round; jobs an agent
// does not understand get an error result; SIGTERM hands the job in hand back.
#include <signal.h>

#include <QtTest>
#include <memory>
#include <nlohmann/json.hpp>

#include "db_query.h"
#include "fleet/fleet_keys.h"
#include "fleet/fleet_status.h"
#include "fleet/job_format.h"
#include "fleet/redis_client.h"
#include "fleet/stream_entry.h"
#include "redis_server.h"
#include "schedule/steps.h"
#include "task/search_task.h"
#include "tessel_test.h"

using namespace tessel;
using nlohmann::json;

namespace {

const QString kPassword = "fleet-test-pw";

struct Run {
  int code = -1;
  QString out, err;
};

bool waitFor(const std::function<bool()>& done, int timeoutMs) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < timeoutMs) {
    if (done()) return true;
    QTest::qWait(100);
  }
  return done();
}

}  // namespace

class TestFleet : public QObject {
  Q_OBJECT

  RedisServer redis_;
  bool up_ = false;
  QString why_;
  QTemporaryDir dir_;
  std::vector<std::unique_ptr<QProcess>> agents_;

  fleet::RedisEndpoint endpoint() const { return fleet::parseRedisUrl(url().toStdString()); }
  QString url() const { return "redis://:" + kPassword + "@127.0.0.1:" + QString::number(redis_.port()); }

  QProcessEnvironment environment(const QString& compiler = {}) const {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("TMPDIR", dir_.path());
    if (!compiler.isEmpty()) env.insert("TESSEL_CXX", compiler);
    return env;
  }

  // A compiler that takes `seconds` longer: jobs an agent holds long enough
  // to be caught holding them.
  QString slowCompiler(int seconds) const {
    const QString path = dir_.filePath("slow-c++-" + QString::number(seconds));
    QFile f(path);
    if (!f.exists()) {
      f.open(QIODevice::WriteOnly);
      f.write(QString("#!/bin/sh\nsleep %1\nexec c++ \"$@\"\n").arg(seconds).toUtf8());
      f.close();
      f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
    }
    return path;
  }

  QProcess* startAgent(const QString& name, const QString& compiler = {}) {
    auto p = std::make_unique<QProcess>();
    p->setProcessEnvironment(environment(compiler));
    p->setProcessChannelMode(QProcess::SeparateChannels);
    p->start(TESSEL_AGENT_PATH, {"--redis", url(), "--target", "cpu", "--name", name, "--jobs", "1", "--lease", "3"});
    if (!p->waitForStarted(5000)) return nullptr;
    agents_.push_back(std::move(p));
    return agents_.back().get();
  }

  fleet::FleetView status() {
    fleet::RedisClient r(endpoint());
    return fleet::fleetStatus(r);
  }

  bool waitForAgents(size_t n) {
    return waitFor([&] { return status().agents.size() == n; }, 15000);
  }

  const fleet::AgentView* agent(fleet::FleetView&&, const QString&) = delete;  // it would dangle
  const fleet::AgentView* agent(const fleet::FleetView& v, const QString& name) {
    for (const fleet::AgentView& a : v.agents)
      if (a.name == name.toStdString()) return &a;
    return nullptr;
  }

  QStringList tuneArgs(const QString& db, int trials) const {
    return {"tune-op", "matmul",    "--shape", "64,64,64", "--trials", QString::number(trials), "--batch", "16", "--db",
            db,        "--measure", url(),     "--json",   "--quiet"};
  }

  // A tuning measured by the fleet, left running.
  void startTuning(QProcess& tune, const QString& db, int trials) const {
    tune.setProcessEnvironment(environment());
    tune.start(TESSEL_CLI_PATH, tuneArgs(db, trials));
  }

  Run finish(QProcess& p, int timeoutMs = 300000) {
    Run r;
    if (!p.waitForFinished(timeoutMs)) {
      p.kill();
      p.waitForFinished();
      // What it and the agents said so far: a hang must be diagnosable from CI's log.
      r.err = QString("timed out after %1 s; its stderr:\n%2")
                  .arg(timeoutMs / 1000)
                  .arg(QString::fromUtf8(p.readAllStandardError()));
      for (auto& a : agents_)
        r.err += "\nan agent's stderr:\n" + QString::fromUtf8(a->readAllStandardError());
      return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
  }

  Run tessel(const QStringList& args, int timeoutMs = 300000) {
    QProcess p;
    p.setProcessEnvironment(environment());
    p.start(TESSEL_CLI_PATH, args);
    return finish(p, timeoutMs);
  }

  // The database holds `trials` records of distinct programs, each measured
  // or an error with its message, and a best program checked correct.
  void checkDatabase(const QString& db, int trials) {
    QCOMPARE(queryFirst(db, "SELECT COUNT(*) FROM records").toInt(), trials);
    QCOMPARE(queryFirst(db, "SELECT COUNT(DISTINCT steps) FROM records").toInt(), trials);
    QCOMPARE(queryFirst(db, "SELECT COUNT(*) FROM records WHERE error_code != 0 AND error_msg = ''").toInt(), 0);
    QVERIFY(queryFirst(db, "SELECT COUNT(*) FROM records WHERE error_code = 0 AND cost > 0").toInt() > trials / 2);
    QCOMPARE(queryFirst(db, "SELECT status FROM sessions ORDER BY id DESC LIMIT 1"), QString("finished"));
  }

 private slots:
  void initTestCase() { up_ = redis_.start(&why_, 0, kPassword); }

  void init() {
    if (!up_) TESSEL_SKIP("redis", qPrintable("the fleet needs a Redis server: " + why_));
    fleet::RedisClient r(endpoint());
    r.checked({"FLUSHALL"});
  }

  void cleanup() {
    for (auto& p : agents_) {
      p->kill();
      p->waitForFinished(5000);
    }
    agents_.clear();
  }

  void twoAgentsShareATuning() {
    QVERIFY(startAgent("agent-a"));
    QVERIFY(startAgent("agent-b"));
    QVERIFY(waitForAgents(2));
    const QString db = dir_.filePath("shared.db");
    const Run r = tessel(tuneArgs(db, 48));
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const json j = json::parse(r.out.toStdString());
    QCOMPARE(j["trials"].get<int>(), 48);
    QVERIFY(j["correct"].get<bool>());
    // Three rounds of 16, each split over the two agents' slots.
    QCOMPARE(j["fleet"]["jobs"].get<int>(), 6);
    QCOMPARE(j["fleet"]["programs"].get<int>(), 48);
    QCOMPARE(j["fleet"]["duplicates"].get<int>(), 0);
    checkDatabase(db, 48);
    // Both took part, as the fleet's view tells once their heartbeats (every
    // second) have counted the last job.
    json v;
    QVERIFY2(waitFor(
                 [&] {
                   const Run s = tessel({"fleet", "status", "--redis", url(), "--json"});
                   if (s.code != 0) return false;
                   v = json::parse(s.out.toStdString());
                   int done = 0;
                   for (const json& a : v["agents"])
                     done += a["programs_done"].get<int>();
                   return done == 48;
                 },
                 10000),
             v.dump().c_str());
    QCOMPARE(v["agents"].size(), size_t(2));
    int programs = 0;
    for (const json& a : v["agents"]) {
      QCOMPARE(a["target"].get<std::string>(), std::string("cpu"));
      QVERIFY(!a["device"].get<std::string>().empty());
      QVERIFY2(a["jobs_done"].get<int>() > 0, a.dump().c_str());
      programs += a["programs_done"].get<int>();
    }
    QCOMPARE(programs, 48);
    QCOMPARE(v["queues"][0]["queued"].get<int>(), 0);
    QCOMPARE(v["queues"][0]["in_flight"].get<int>(), 0);
    QVERIFY(v["redis"].get<std::string>().find(kPassword.toStdString()) == std::string::npos);
    // The same tuning here gives as many records and a correct best.
    const QString local = dir_.filePath("local.db");
    const Run l = tessel({"tune-op", "matmul", "--shape", "64,64,64", "--trials", "48", "--batch", "16", "--db", local,
                          "--json", "--quiet"});
    QVERIFY2(l.code == 0, qPrintable(l.err));
    checkDatabase(local, 48);
  }

  void killedAgentLosesNothing() {
    QProcess* slow = startAgent("agent-slow", slowCompiler(4));
    QVERIFY(slow);
    QVERIFY(startAgent("agent-fast"));
    QVERIFY(waitForAgents(2));
    const QString db = dir_.filePath("killed.db");
    QProcess tune;
    startTuning(tune, db, 32);
    // SIGKILL the slow agent while it holds a job.
    QVERIFY(waitFor(
        [&] {
          const fleet::FleetView view = status();  // `a` points into it
          const fleet::AgentView* a = agent(view, "agent-slow");
          return a && !a->jobsInHand.empty();
        },
        60000));
    slow->kill();
    QVERIFY(slow->waitForFinished(5000));
    const Run r = finish(tune);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const json j = json::parse(r.out.toStdString());
    QCOMPARE(j["trials"].get<int>(), 32);
    QCOMPARE(j["fleet"]["programs"].get<int>(), 32);
    checkDatabase(db, 32);
    // The fast agent took the killed one's job over once its lease ran out.
    agents_[1]->terminate();
    QVERIFY(agents_[1]->waitForFinished(10000));
    const QString log = QString::fromUtf8(agents_[1]->readAllStandardError());
    QVERIFY2(log.contains("took over"), qPrintable(log));
  }

  void redisRestartedMidRound() {
    QVERIFY(startAgent("agent-a", slowCompiler(2)));
    QVERIFY(startAgent("agent-b", slowCompiler(2)));
    QVERIFY(waitForAgents(2));
    const QString db = dir_.filePath("restarted.db");
    QProcess tune;
    startTuning(tune, db, 32);
    QVERIFY(waitFor(
        [&] {
          const fleet::FleetView v = status();
          return !v.queues.empty() && v.queues[0].inFlight > 0;
        },
        60000));
    const int port = redis_.port();
    redis_.stop();  // everything Redis held is gone: queue, results, heartbeats
    QTest::qWait(1500);
    QVERIFY2(redis_.start(&why_, port, kPassword), qPrintable(why_));
    const Run r = finish(tune);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const json j = json::parse(r.out.toStdString());
    QCOMPARE(j["trials"].get<int>(), 32);
    QVERIFY2(j["fleet"]["resent"].get<int>() > 0, j["fleet"].dump().c_str());
    checkDatabase(db, 32);
  }

  // A job of a newer version, and one that is not even JSON: the first gets
  // an error result naming the version, the second is retired; the agent
  // goes on serving.
  void unknownJobsGetAnErrorResult() {
    QProcess* a = startAgent("agent-a");
    QVERIFY(a);
    QVERIFY(waitForAgents(1));
    fleet::RedisClient r(endpoint());
    r.checked({"SET", fleet::tunerKey("T1"), "1"});
    const std::string stream = fleet::jobStream("cpu");
    r.checked({"XADD", stream, "*", "job",
               json{{"format", fleet::kJobFormat}, {"version", 99}, {"id", "T1/1"}, {"tuner", "T1"}}.dump()});
    r.checked({"XADD", stream, "*", "job", std::string("\x00\xff garbage", 10)});
    const fleet::RedisReply reply = r.checked({"XREAD", "BLOCK", "20000", "STREAMS", fleet::resultStream("T1"), "0"});
    const std::vector<fleet::StreamEntry> got = fleet::readEntries(reply, "result");
    QCOMPARE(got.size(), size_t(1));
    const fleet::JobResult result = fleet::decodeResult(got[0].value);
    QCOMPARE(result.job, std::string("T1/1"));
    QVERIFY2(result.error.find("version 99") != std::string::npos, result.error.c_str());
    QVERIFY(result.results.empty());
    QVERIFY(waitFor([&] { return r.checked({"XLEN", stream}).integer == 0; }, 10000));
    QCOMPARE(a->state(), QProcess::Running);
  }

  void sigtermHandsBackTheJobInHand() {
    QProcess* a = startAgent("agent-a", slowCompiler(30));
    QVERIFY(a);
    QVERIFY(waitForAgents(1));
    fleet::RedisClient r(endpoint());
    r.checked({"SET", fleet::tunerKey("T2"), "1"});
    fleet::MeasureJob job;
    job.id = "T2/1";
    job.tuner = "T2";
    job.task = task::makeOperatorTask("matmul", {32, 32, 32}, tessel::target::Target::host());
    job.programs = {schedule::serializeSteps({})};
    const std::string payload = fleet::encodeJob(job);
    const std::string stream = fleet::jobStream("cpu");
    r.checked({"XADD", stream, "*", "job", payload});
    QVERIFY(waitFor([&] { return r.checked({"XPENDING", stream, fleet::kAgentGroup})[0].integer == 1; }, 10000));
    QTest::qWait(500);  // in the compiler now
    QElapsedTimer t;
    t.start();
    a->terminate();
    QVERIFY(a->waitForFinished(10000));
    QVERIFY2(t.elapsed() < 5000, "the stop waited for the compiler");
    QCOMPARE(a->exitStatus(), QProcess::NormalExit);
    QCOMPARE(a->exitCode(), 0);
    // Back in the queue, as it was, and held by no one.
    QCOMPARE(r.checked({"XPENDING", stream, fleet::kAgentGroup})[0].integer, 0LL);
    const fleet::RedisReply all = r.checked({"XRANGE", stream, "-", "+"});
    QCOMPARE(all.elements.size(), size_t(1));
    QCOMPARE(all[0][1][1].str, payload);
    QVERIFY(QString::fromUtf8(a->readAllStandardError()).contains("handed back"));
    QCOMPARE(r.checked({"EXISTS", fleet::agentKey("agent-a")}).integer, 0LL);  // gone from the view at once
  }

  void wrongPasswordIsAClearError() {
    const Run r = tessel({"fleet", "status", "--redis", "redis://:wrong@127.0.0.1:" + QString::number(redis_.port())});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("refused AUTH") && r.err.contains("WRONGPASS"), qPrintable(r.err));
    QVERIFY(!r.err.contains("wrong@"));
    const Run t = tessel({"tune-op", "matmul", "--shape", "8,8,8", "--trials", "4", "--no-db", "--measure",
                          "redis://127.0.0.1:" + QString::number(redis_.port())});
    QCOMPARE(t.code, 1);
    QVERIFY2(t.err.contains("NOAUTH") || t.err.contains("Authentication"), qPrintable(t.err));
    const Run u = tessel({"tune-op", "matmul", "--shape", "8,8,8", "--trials", "4", "--no-db", "--measure", "tcp://x"});
    QCOMPARE(u.code, 2);
    QVERIFY2(u.err.contains("is not a Redis URL"), qPrintable(u.err));
  }
};

QTEST_GUILESS_MAIN(TestFleet)
#include "test_fleet.moc"
