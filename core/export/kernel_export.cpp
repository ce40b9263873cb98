#include "export/kernel_export.h"

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "codegen/cpp_codegen.h"
#include "export/cuda_kernel_export.h"
#include "export/export_common.h"
#include "lower/layout_rewrite.h"
#include "schedule/steps.h"
#include "store/record_store.h"
#include "store/task_rows.h"
#include "support/subprocess.h"
#include "support/version.h"
#include "target/target.h"
#include "task/search_task.h"

namespace tessel::exporter {

namespace {

namespace fs = std::filesystem;
using detail::Argument;
using detail::argumentsOf;
using detail::bestTunedProgram;
using detail::isoNow;
using detail::number;
using detail::shapeText;
using detail::TunedProgram;
using detail::writeFile;

// The entry points of a kernel that reads some inputs packed: F_pack packs
// them (once), F_prepacked runs on packed inputs, and F itself, with plain
// inputs, packs into temporaries on every call (convenient, slower).
struct PackedEntryPoints {
  std::string doc, declarations, definitions, perCallBody;
  nlohmann::json manifest = nlohmann::json::array();
};

PackedEntryPoints packedEntryPoints(const std::string& function, const lower::LoweredFunc& f,
                                    const std::vector<Argument>& args) {
  PackedEntryPoints e;
  if (f.packed.empty()) return e;
  std::map<size_t, int64_t> packedSize;
  for (const lower::PackedLayout& p : f.packed)
    packedSize[p.arg] = p.size();
  std::ostringstream packParams, preParams, preCall, doc;
  for (size_t i = 0; i < args.size(); ++i) {
    const Argument& a = args[i];
    const bool packed = packedSize.count(i) > 0;
    const std::string name = packed ? a.name + "_packed" : a.name;
    preParams << (i ? ", " : "") << (a.input ? "const float* " : "float* ") << name;
    preCall << (i ? ", " : "") << (a.input ? "const_cast<float*>(" + name + ")" : name);
    if (!packed) continue;
    packParams << (packParams.tellp() ? ", " : "") << "const float* " << a.name << ", float* " << name;
    doc << "//   " << a.name << " is read packed: " << name << "[" << packedSize[i] << "]\n";
    e.manifest.push_back({{"name", a.name}, {"elements", packedSize[i]}});
  }
  const std::string packProto = "int " + function + "_pack(" + packParams.str() + ")";
  const std::string preProto = "int " + function + "_prepacked(" + preParams.str() + ")";
  e.doc = doc.str() + "// Pack those once with " + function + "_pack and call " + function + "_prepacked; " + function +
          " packs on every call.\n";
  e.declarations = packProto + ";\n" + preProto + ";\n";
  std::ostringstream plain, packed;
  for (size_t i = 0; i < f.numInputs; ++i) {
    plain << (i ? ", " : "") << (packedSize.count(i) ? "const_cast<float*>(" + args[i].name + ")" : "nullptr");
    packed << (i ? ", " : "") << (packedSize.count(i) ? args[i].name + "_packed" : "nullptr");
  }
  const std::string kernel = function + "_args", pack = codegen::packSymbol(kernel);
  e.definitions = "extern \"C\" " + packProto + " {\n  float* const plain[] = {" + plain.str() +
                  "};\n  float* const packed[] = {" + packed.str() + "};\n  return " + pack +
                  "(plain, packed);\n}\n\nextern \"C\" " + preProto + " {\n  float* const args[] = {" + preCall.str() +
                  "};\n  return " + kernel + "(args);\n}\n\n";
  std::ostringstream body;
  body << "  float* args[" << args.size() << "];\n  std::unique_ptr<float[]> owners[" << f.numInputs << "];\n"
       << "  for (int i = 0; i < " << args.size() << "; ++i) args[i] = plain[i];\n";
  for (const auto& [i, n] : packedSize)
    body << "  owners[" << i << "].reset(new (std::nothrow) float[" << n << "]);\n"
         << "  if (!owners[" << i << "]) return 1;\n  args[" << i << "] = owners[" << i << "].get();\n";
  body << "  if (int rc = " << pack << "(plain, args)) return rc;\n"
       << "  return " << kernel << "(args);\n}\n";
  e.perCallBody = body.str();
  return e;
}

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q(1, '"');
  for (char c : s) {
    if (c == '"') q.push_back('"');
    q.push_back(c);
  }
  q.push_back('"');
  return q;
}

}  // namespace

KernelExportPlan planKernelExport(const store::Database& db, const std::vector<store::TaskRow>& tasks,
                                  const KernelExportOptions& options) {
  KernelExportPlan plan;
  for (const store::TaskRow& row : tasks) {
    try {
      store::targetOf(row);
      if (db.records().best(row.id).empty()) throw std::runtime_error("no valid record yet");
      bestTunedProgram(db, row, options);  // rebuilt, and a record replays on it
      plan.tasks.push_back(row);
    } catch (const std::exception& e) {
      plan.skipped.emplace_back(row, e.what());
    }
  }
  return plan;
}

std::string bestKernelSource(const store::Database& db, const store::TaskRow& row, const KernelExportOptions& options) {
  const target::Target t = store::targetOf(row);
  if (!t.isCpu()) return bestCudaKernelSource(db, row, options);
  if (db.records().best(row.id).empty()) throw std::runtime_error("task " + row.key + " has no valid record yet");
  const TunedProgram best = bestTunedProgram(db, row, options);
  const store::RecordRow& rec = best.record;
  lower::LoweredFunc f = lower::lowerState(best.state);
  lower::rewriteLayouts(&f);
  return "// " + row.op + " " + shapeText(row.shape) + ", task " + row.key + ", record " + std::to_string(rec.id) +
         ".\n// Schedule: " + rec.steps + "\n" + codegen::cppPrelude() +
         codegen::emitCppKernelAndPack(f, "tessel_" + lower::cIdent(row.key) + "_args", codegen::CppOptions(t));
}

ExportResult exportKernels(const store::Database& db, const std::vector<store::TaskRow>& tasks,
                           const std::string& outDir, const KernelExportOptions& options) {
  if (tasks.empty()) throw std::runtime_error("nothing to export: no task");
  if (!store::targetOf(tasks.front()).isCpu()) return exportCudaKernels(db, tasks, outDir, options);
  fs::path root(outDir);
  ExportResult result;
  result.header = "include/tessel_kernels.h";
  std::ostringstream header;
  header << "// Kernels tuned by Tessel, exported " << isoNow() << ".\n"
         << "// Each function takes its inputs then its outputs: dense float32 arrays,\n"
         << "// row-major in the shapes given; it returns 0, or 1 if a scratch buffer\n"
         << "// could not be allocated. Built with their target's flags (-march=native for\n"
         << "// the target cpu): run them on a CPU of that target (see manifest.json).\n"
         << "#pragma once\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  nlohmann::json manifest;
  manifest["tessel_version"] = support::version();
  manifest["created"] = isoNow();
  manifest["header"] = result.header;
  manifest["kernels"] = nlohmann::json::array();
  std::vector<std::string> sources;
  // One library, one set of flags: every task of one target.
  const target::Target target = store::targetOf(tasks.front());
  for (const store::TaskRow& row : tasks) {
    if (store::targetOf(row) != target)
      throw std::runtime_error("the tasks are for different targets (" + target.str() + ", " + row.target +
                               "): export one target's at a time (tessel export --target T)");
    const TunedProgram best = bestTunedProgram(db, row, options);
    result.damagedRecordsSkipped += best.damagedSkipped;
    const store::RecordRow& rec = best.record;
    const task::SearchTask& task = best.task;
    lower::LoweredFunc f = lower::lowerState(best.state);
    std::vector<Argument> args = argumentsOf(task.dag, f);
    lower::rewriteLayouts(&f);  // as it was measured: weights packed (lower/layout_rewrite.h)

    ExportedKernel k;
    k.taskKey = row.key;
    k.function = "tessel_" + lower::cIdent(row.key);
    k.source = "src/" + k.function + ".cpp";
    k.latencyMs = rec.medianCost() * 1e3;
    k.gflops = row.flops / rec.medianCost() / 1e9;

    std::ostringstream params, call, doc;
    nlohmann::json jargs = nlohmann::json::array();
    for (size_t i = 0; i < args.size(); ++i) {
      const Argument& a = args[i];
      params << (i ? ", " : "") << (a.input ? "const float* " : "float* ") << a.name;
      call << (i ? ", " : "");
      if (a.input)
        call << "const_cast<float*>(" << a.name << ")";
      else
        call << a.name;
      doc << "//   " << (a.input ? "in  " : "out ") << a.name << "[" << shapeText(a.shape) << "]\n";
      jargs.push_back(
          {{"name", a.name}, {"shape", a.shape}, {"role", a.input ? "input" : "output"}, {"dtype", "float32"}});
    }
    std::string prototype = "int " + k.function + "(" + params.str() + ")";
    PackedEntryPoints packing = packedEntryPoints(k.function, f, args);
    header << "// " << row.op << " " << shapeText(row.shape);
    if (!row.layout.empty()) header << " (" << row.layout << ")";
    header << ", task " << row.key << ": " << number(k.latencyMs) << " ms, " << number(k.gflops)
           << " GFLOP/s when tuned\n"
           << doc.str() << packing.doc << prototype << ";\n"
           << packing.declarations << "\n";

    std::ostringstream src;
    src << "// " << row.op << " " << shapeText(row.shape) << ", tuned by Tessel (task " << row.key << ", record "
        << rec.id << ").\n// Schedule: " << rec.steps << "\n"
        << codegen::cppPrelude() << "#include \"tessel_kernels.h\"\n\n"
        << codegen::emitCppKernelAndPack(f, k.function + "_args", codegen::CppOptions(target)) << "\n";
    if (f.packed.empty())
      src << "extern \"C\" " << prototype << " {\n"
          << "  float* const args[] = {" << call.str() << "};\n"
          << "  return " << k.function << "_args(args);\n}\n";
    else
      src << packing.definitions << "extern \"C\" " << prototype << " {\n"
          << "  float* const plain[] = {" << call.str() << "};\n"
          << packing.perCallBody;
    writeFile(root / k.source, src.str());
    sources.push_back(k.source);

    manifest["kernels"].push_back({{"task", row.key},
                                   {"op", row.op},
                                   {"shape", row.shape},
                                   {"layout", row.layout},
                                   {"target", row.target},
                                   {"device", row.device},
                                   {"function", k.function},
                                   {"source", k.source},
                                   {"arguments", jargs},
                                   {"packed", packing.manifest},
                                   {"latency_ms", k.latencyMs},
                                   {"gflops", k.gflops},
                                   {"flops", row.flops},
                                   {"record_id", rec.id},
                                   {"tuned_at", rec.created},
                                   {"steps", nlohmann::json::parse(rec.steps)}});
    result.kernels.push_back(std::move(k));
  }
  header << "#ifdef __cplusplus\n}  // extern \"C\"\n#endif\n";
  writeFile(root / result.header, header.str());

  std::ostringstream cmake;
  cmake << "# Builds the kernels Tessel exported into one library: tessel_kernels.\n"
        << "cmake_minimum_required(VERSION 3.16)\n"
        << "project(tessel_kernels CXX)\n"
        << "find_package(OpenMP REQUIRED)\n"
        << "add_library(tessel_kernels SHARED";
  for (const std::string& s : sources)
    cmake << "\n  " << s;
  cmake << ")\n"
        << "target_include_directories(tessel_kernels PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)\n"
        << "target_link_libraries(tessel_kernels PUBLIC OpenMP::OpenMP_CXX)\n"
        << "set_target_properties(tessel_kernels PROPERTIES CXX_STANDARD 17 POSITION_INDEPENDENT_CODE ON)\n"
        << "# The schedules were tuned for the CPU they ran on: build for it, as Tessel did.\n"
        << "target_compile_options(tessel_kernels PRIVATE";
  const std::vector<std::string> flags = codegen::kernelCompilerFlags(target);
  for (const std::string& f : flags)
    if (f != "-fopenmp" && f.rfind("-std=", 0) != 0) cmake << " " << f;  // OpenMP and the standard are set above
  cmake << ")\n";
  writeFile(root / "CMakeLists.txt", cmake.str());

  manifest["target"] = target.str();
  manifest["threads"] = target.threads;  // 0: one per core (OMP_NUM_THREADS sets another)
  std::vector<std::string> libraryFlags = flags;
  libraryFlags.insert(libraryFlags.end(), {"-fPIC", "-shared"});
  manifest["compiler_flags"] = libraryFlags;
  if (options.compile) {
    result.library = "lib/libtessel_kernels.so";
    fs::create_directories(root / "lib");
    std::string cxx = options.compiler;
    if (cxx.empty()) {
      const char* env = std::getenv("TESSEL_CXX");
      cxx = env && *env ? env : "c++";
    }
    std::vector<std::string> argv = {cxx};
    argv.insert(argv.end(), libraryFlags.begin(), libraryFlags.end());
    argv.push_back("-I" + (root / "include").string());
    for (const std::string& s : sources)
      argv.push_back((root / s).string());
    argv.push_back("-o");
    argv.push_back((root / result.library).string());
    support::ProcessResult pr = support::runProcess(argv, 600);
    if (!pr.ok()) throw std::runtime_error("compiling the exported kernels failed:\n" + pr.output);
    manifest["library"] = result.library;
  }
  writeFile(root / "manifest.json", manifest.dump(2) + "\n");
  return result;
}

ExportResult exportRecords(const store::Database& db, const std::vector<store::TaskRow>& tasks,
                           const std::string& outDir, const std::string& format) {
  if (format != "csv" && format != "jsonl")
    throw std::runtime_error("unknown record format '" + format + "' (available: csv, jsonl)");
  fs::path path = fs::path(outDir) / ("records." + format);
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + path.string());
  ExportResult result;
  if (format == "csv")
    out << "id,task,session,steps,error_code,error_msg,median_ms,costs_s,predicted,cost_model,build_s,run_s,"
           "max_abs_err,created\n";
  for (const store::TaskRow& t : tasks) {
    for (const store::RecordRow& r : db.records().ofTask(t.id)) {
      double ms = r.ok() ? r.medianCost() * 1e3 : std::nan("");
      if (format == "csv") {
        out << r.id << ',' << csvField(t.key) << ',' << r.sessionId << ',' << csvField(r.steps) << ',' << r.errorCode
            << ',' << csvField(r.errorMessage) << ',' << number(ms) << ',' << csvField(store::costsToJson(r.costs))
            << ',' << number(r.predicted) << ',' << csvField(r.costModel) << ',' << number(r.buildSeconds) << ','
            << number(r.runSeconds) << ',' << number(r.maxAbsError) << ',' << r.created << '\n';
      } else {
        nlohmann::json j = {{"id", r.id},
                            {"task", t.key},
                            {"session", r.sessionId},
                            {"steps", nlohmann::json::parse(r.steps, nullptr, false)},
                            {"error_code", r.errorCode},
                            {"error_msg", r.errorMessage},
                            {"median_ms", r.ok() ? nlohmann::json(ms) : nlohmann::json()},
                            {"costs_s", r.costs},
                            {"predicted", std::isfinite(r.predicted) ? nlohmann::json(r.predicted) : nlohmann::json()},
                            {"cost_model", r.costModel},
                            {"build_s", r.buildSeconds},
                            {"run_s", r.runSeconds},
                            {"max_abs_err", r.maxAbsError},
                            {"created", r.created}};
        out << j.dump() << '\n';
      }
      ++result.records;
    }
  }
  if (!out) throw std::runtime_error("cannot write " + path.string());
  return result;
}

}  // namespace tessel::exporter
