// Fuzz target: a Tessel database from bytes (written to a file in a private
// folder), opened read-only and read the way `tessel db` and the studio read
// it: stats, sessions, tasks, each task's records and best. A damaged file
// must be a StoreError or another std::exception naming it, never a crash.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "store/database.h"
#include "store/record_store.h"
#include "store/session_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string folder = [] {
    char f[] = "/tmp/tessel-fuzz-db-XXXXXX";
    return std::string(::mkdtemp(f));
  }();
  const std::string path = folder + "/fuzz.db";
  for (const char* suffix : {"", "-wal", "-shm", "-writer.lock"})
    std::filesystem::remove(path + suffix);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  }
  try {
    auto db = tessel::store::Database::open(path, tessel::store::OpenMode::ReadOnly);
    db->stats();
    db->sessions().all();
    db->records().best();
    int read = 0;  // bounded work per input
    for (const tessel::store::TaskRow& t : db->tasks())
      if (++read <= 16) db->records().ofTask(t.id);
    for (const tessel::store::SessionRow& s : db->sessions().all())
      if (s.kind == "model" && ++read <= 32) db->modelTasks(s.subject);
  } catch (const std::exception&) {
  }
  return 0;
}
