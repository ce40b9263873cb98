// The fleet over TLS (rediss://), with a real redis-server serving TLS only
// on a loopback port and a certificate made here by `openssl req`: commands,
// large replies and pipelines go through; an untrusted certificate, a
// certificate for another name, a missing client certificate and a plain
// client are refused with their causes; a restarted server is reached again;
// a tuning is measured by an agent over TLS.
#include <QtTest>
#include <nlohmann/json.hpp>

#include "db_query.h"
#include "fleet/fleet_status.h"
#include "fleet/redis_client.h"
#include "redis_server.h"
#include "tessel_test.h"

using namespace tessel;
using nlohmann::json;

namespace {
const QString kPassword = "tls-test-pw";
}

class TestFleetTls : public QObject {
  Q_OBJECT

  RedisServer redis_;
  bool up_ = false;
  QString why_;
  QTemporaryDir dir_;

  QString cert() const { return dir_.filePath("cert.pem"); }
  QString key() const { return dir_.filePath("key.pem"); }
  QString port() const { return QString::number(redis_.port()); }
  // The certificate names "localhost" only; it is its own CA, and the client's too.
  // In `parameters`, %1 is the certificate and %2 its key.
  QString url(const QString& host = "localhost", QString parameters = "cacert=%1&cert=%1&key=%2") const {
    return "rediss://:" + kPassword + "@" + host + ":" + port() + "?" +
           parameters.replace("%1", cert()).replace("%2", key());
  }

  // The RedisError a connection to `url` ends in, "" if it connects.
  static QString refusal(const QString& url, double timeoutSeconds = 5) {
    try {
      fleet::RedisClient r(fleet::parseRedisUrl(url.toStdString()), timeoutSeconds);
      r.checked({"PING"});
      return "";
    } catch (const fleet::RedisError& e) {
      return e.what();
    }
  }

  // A self-signed certificate for DNS name `name`, valid two days.
  static bool makeCertificate(const QString& name, const QString& certFile, const QString& keyFile, QString* why) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start("openssl", {"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=" + name,
                        "-addext", "subjectAltName=DNS:" + name, "-keyout", keyFile, "-out", certFile});
    if (!p.waitForStarted(5000)) {
      *why = "no openssl command on this machine (scripts/setup.sh installs it)";
      return false;
    }
    p.waitForFinished(60000);
    if (p.exitCode() != 0) *why = "openssl req failed: " + QString::fromUtf8(p.readAll());
    return p.exitCode() == 0;
  }

 private slots:
  void initTestCase() {
    if (!makeCertificate("localhost", cert(), key(), &why_)) return;
    redis_.useTls(cert(), key(), cert());
    up_ = redis_.start(&why_, 0, kPassword);
  }

  void init() {
    if (!up_) TESSEL_SKIP("redis", qPrintable("the TLS tests need a Redis server with TLS: " + why_));
  }

  void commandsGoThrough() {
    fleet::RedisClient r(fleet::parseRedisUrl(url().toStdString()));
    QCOMPARE(r.checked({"PING"}).str, std::string("PONG"));
    // A value of 3 MiB comes back whole, over many TLS records and reads.
    std::string big(3 << 20, '\0');
    for (size_t i = 0; i < big.size(); ++i)
      big[i] = char(i * 7919 % 251);
    r.checked({"SET", "big", big});
    QVERIFY(r.checked({"GET", "big"}).str == big);
    const std::vector<fleet::RedisReply> replies = r.pipeline({{"INCR", "n"}, {"INCR", "n"}, {"NOSUCHCOMMAND"}});
    QCOMPARE(replies.size(), size_t(3));
    QCOMPARE(replies[1].integer, 2LL);
    QVERIFY(replies[2].isError());
    QVERIFY(!r.serverRunId().empty());
    QCOMPARE(r.connections(), 1);
  }

  void untrustedCertificateIsRefused() {
    const QString why = refusal(url("localhost", "cert=%1&key=%2"));
    QVERIFY2(why.contains("certificate is not accepted: self-signed certificate") && why.contains("cacert="),
             qPrintable(why));
    QVERIFY2(!why.contains(kPassword), qPrintable(why));
  }

  void certificateForAnotherNameIsRefused() {
    const QString why = refusal(url("127.0.0.1"));
    QVERIFY2(why.contains("IP address mismatch") && why.contains("does not name '127.0.0.1'"), qPrintable(why));
  }

  // A server whose certificate, from a CA we trust, is for another DNS name.
  void certificateForAnotherHostNameIsRefused() {
    const QString otherCert = dir_.filePath("other.pem"), otherKey = dir_.filePath("other.key");
    QVERIFY2(makeCertificate("other.invalid", otherCert, otherKey, &why_), qPrintable(why_));
    const int port = redis_.port();
    redis_.stop();
    redis_.useTls(otherCert, otherKey, cert());
    const bool started = redis_.start(&why_, port, kPassword);
    const QString why = started ? refusal(url("localhost", "cacert=" + otherCert + "&cert=%1&key=%2")) : "";
    redis_.stop();
    redis_.useTls(cert(), key(), cert());
    QVERIFY2(redis_.start(&why_, port, kPassword), qPrintable(why_));
    QVERIFY2(started, qPrintable(why_));
    QVERIFY2(why.contains("hostname mismatch") && why.contains("does not name 'localhost'"), qPrintable(why));
  }

  void missingClientCertificateIsRefused() {
    QElapsedTimer t;
    t.start();
    const QString why = refusal(url("localhost", "cacert=%1"));
    QVERIFY2(why.contains("give cert=FILE&key=FILE"), qPrintable(why));
    QVERIFY(t.elapsed() < 5000);
  }

  void unreadableCaFileIsNamed() {
    const QString why = refusal(url("localhost", "cacert=/no/such/ca.pem"));
    QVERIFY2(why.contains("cannot read the CA certificates in '/no/such/ca.pem'"), qPrintable(why));
  }

  void plainClientGetsAnErrorNotAHang() {
    QElapsedTimer t;
    t.start();
    const QString why = refusal("redis://:" + kPassword + "@127.0.0.1:" + port(), 3);
    QVERIFY2(!why.isEmpty(), "a plain client talked to a TLS-only port");
    QVERIFY(t.elapsed() < 10000);
  }

  // The connection is made again, TLS and AUTH included, after a restart.
  void reconnectsAfterRestart() {
    fleet::RedisClient r(fleet::parseRedisUrl(url().toStdString()));
    r.checked({"SET", "k", "v"});
    const std::string before = r.serverRunId();
    const int port = redis_.port();
    redis_.stop();
    QVERIFY_THROWS_EXCEPTION(fleet::RedisError, r.checked({"PING"}));
    QVERIFY2(redis_.start(&why_, port, kPassword), qPrintable(why_));
    QCOMPARE(r.checked({"PING"}).str, std::string("PONG"));
    QCOMPARE(r.connections(), 2);
    QVERIFY(r.serverRunId() != before);
  }

  // An agent measures a tuning's programs over TLS; the fleet's view reads it.
  void tuningMeasuredOverTls() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("TMPDIR", dir_.path());
    QProcess agent;
    agent.setProcessEnvironment(env);
    agent.start(TESSEL_AGENT_PATH, {"--redis", url(), "--target", "cpu", "--name", "tls-agent", "--jobs", "1"});
    QVERIFY(agent.waitForStarted(5000));
    const QString db = dir_.filePath("tls.db");
    QProcess tune;
    tune.setProcessEnvironment(env);
    tune.start(TESSEL_CLI_PATH, {"tune-op", "matmul", "--shape", "64,64,64", "--trials", "32", "--batch", "16", "--db",
                                 db, "--measure", url(), "--json", "--quiet"});
    const bool finished = tune.waitForFinished(300000);
    const QString err = QString::fromUtf8(tune.readAllStandardError());
    // The fleet's view, once the agent's heartbeat (every second) has counted the last job.
    json v;
    auto counted = [&] {
      QProcess status;
      status.start(TESSEL_CLI_PATH, {"fleet", "status", "--redis", url(), "--json"});
      status.waitForFinished(30000);
      v = json::parse(status.readAllStandardOutput().toStdString(), nullptr, false);
      return v.is_object() && v["agents"].size() == 1 && v["agents"][0]["programs_done"] == 32;
    };
    QElapsedTimer t;
    t.start();
    while (finished && !counted() && t.elapsed() < 10000)
      QTest::qWait(200);
    agent.terminate();
    agent.waitForFinished(10000);
    QVERIFY2(finished && tune.exitCode() == 0, qPrintable(err));
    const json j = json::parse(tune.readAllStandardOutput().toStdString());
    QCOMPARE(j["fleet"]["programs"].get<int>(), 32);
    QVERIFY(j["correct"].get<bool>());
    QCOMPARE(queryFirst(db, "SELECT COUNT(DISTINCT steps) FROM records").toInt(), 32);
    QVERIFY2(v.is_object() && v["agents"].size() == 1, v.dump().c_str());
    QCOMPARE(v["agents"][0]["programs_done"].get<int>(), 32);
    QVERIFY(v["redis"].get<std::string>().rfind("rediss://", 0) == 0);
  }
};

QTEST_GUILESS_MAIN(TestFleetTls)
#include "test_fleet_tls.moc"
