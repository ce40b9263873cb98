// A real redis-server for the fleet's tests, started on a free loopback port
// with nothing persisted, and stopped (SIGKILL) with the test. Debian's
// redis-tools holds the server as redis-check-rdb, which runs as the server
// when called by the name redis-server: that package alone is enough, without
// the redis-server package's system daemon.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QString>
#include <QTemporaryDir>
#include <QThread>

class RedisServer {
 public:
  // The server's executable, or empty (with why) when this machine has none.
  static QString executable(QString* why) {
    for (const char* name : {"redis-server", "redis-check-rdb"}) {
      const QString path = QStandardPaths::findExecutable(name);
      if (!path.isEmpty()) return path;
    }
    *why = "no redis-server on this machine (scripts/setup.sh installs redis-tools)";
    return {};
  }

  // A free TCP port on 127.0.0.1 (bound and let go: the server retries if it
  // was taken in between).
  static int freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
  }

  ~RedisServer() { stop(); }

  // Serve TLS only (on the port start() picks), with this certificate and
  // key, trusting clients whose certificates `caFile` signed (Redis asks
  // clients for one by default).
  void useTls(const QString& certFile, const QString& keyFile, const QString& caFile) {
    tlsArgs_ = {"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-ca-cert-file", caFile};
  }

  // Starts it (on `port`, or a free one) and waits until it answers; false
  // with why otherwise. `password`: requirepass.
  bool start(QString* why, int port = 0, const QString& password = {}) {
    const QString exe = executable(why);
    if (exe.isEmpty()) return false;
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = port ? port : freePort();
      // The server binary picks its mode by the name it is called by.
      link_ = dir_.filePath("redis-server");
      QFile::remove(link_);
      QFile::link(exe, link_);
      QStringList args = {"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir_.path()};
      if (tlsArgs_.isEmpty())
        args << "--port" << QString::number(port_);
      else
        args << "--port"
             << "0"
             << "--tls-port" << QString::number(port_) << tlsArgs_;
      if (!password.isEmpty()) args << "--requirepass" << password;
      process_.setProgram(link_);
      process_.setArguments(args);
      process_.setProcessChannelMode(QProcess::MergedChannels);
      log_.clear();  // a restart waits for its own "Ready"
      process_.start();
      if (!process_.waitForStarted(5000)) continue;
      QElapsedTimer t;
      t.start();
      while (t.elapsed() < 10000 && process_.state() == QProcess::Running) {
        process_.waitForReadyRead(100);
        log_ += QString::fromUtf8(process_.readAll());
        if (log_.contains("Ready to accept connections")) return true;
      }
      process_.kill();
      process_.waitForFinished();
      if (port) break;  // a fixed port: no other to try
    }
    *why = "redis-server did not start: " + log_.right(400);
    return false;
  }

  // SIGKILL: everything it held is lost (nothing is persisted).
  void stop() {
    if (process_.state() != QProcess::NotRunning) {
      process_.kill();
      process_.waitForFinished(5000);
    }
  }

  int port() const { return port_; }
  QString url() const { return "redis://127.0.0.1:" + QString::number(port_); }

 private:
  QTemporaryDir dir_;
  QStringList tlsArgs_;
  QString link_, log_;
  QProcess process_;
  int port_ = 0;
};
