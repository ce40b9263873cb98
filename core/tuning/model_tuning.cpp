#include "tuning/model_tuning.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "cost/cost_model_file.h"
#include "cost/cost_model_registry.h"
#include "search/search_registry.h"
#include "store/cost_model_store.h"
#include "store/session_store.h"
#include "target/target.h"
#include "tuning/tuning_recorder.h"

namespace tessel::tuning {

namespace {

void checkNames(const TuningConfig& c) {
  if (!search::findSearch(c.search))
    throw std::invalid_argument("unknown search '" + c.search + "' (available: " + search::availableSearches() + ")");
  const cost::CostModelEntry* m = cost::findCostModel(c.costModel);
  if (!m)
    throw std::invalid_argument("unknown cost model '" + c.costModel + "' (available: " + cost::availableCostModels() +
                                ")");
  if (!m->available) throw std::runtime_error("cost model '" + c.costModel + "' is not available: " + m->why);
}

}  // namespace

ModelTuning::ModelTuning(TuningConfig config, std::shared_ptr<const frontend::PreparedModel> prepared) {
  checkNames(config.resolved());
  warm_ = std::make_unique<WarmStart>(config);
  // A guided search with no model named (or the knowledge base's) starts
  // from the knowledge base's pre-trained model.
  const std::string pretrained = warm_->costModelName();
  if (search::findSearch(config.resolved().search)->guided && config.costModelFile.empty() && !pretrained.empty() &&
      (config.costModel.empty() || config.costModel == pretrained)) {
    config.costModel = pretrained;
    pretrained_ = true;
    warm_->usePretrainedModel();
  }
  config_ = config.resolved();
  if (config_.trials == 0 && config_.cold)
    throw std::invalid_argument(
        "--trials 0 measures each task's first round of transferred programs: it needs a warm start, not --cold");
  model_ = prepared ? std::move(prepared)
                    : std::make_shared<const frontend::PreparedModel>(
                          frontend::prepareModel(config_.model, config_.inputShapes, config_.fusion, config_.target));
  for (const fusion::GraphTask& t : model_->tasks)
    tasks_.push_back({fusion::toSearchTask(t, config_.target), double(t.weight), t.name});
}

ModelTuning::~ModelTuning() = default;

const std::string& ModelTuning::databasePath() const {
  static const std::string none;
  return db_ ? db_->path() : none;
}

void ModelTuning::openSession(const std::string& path, int64_t resume) {
  // Checks first: nothing is written (not even a new file) for a session that cannot run.
  auto checkBudget = [&] {
    if (config_.trials > 0 && config_.trials < int(tasks_.size()))
      throw std::invalid_argument(search::budgetMessage(config_.trials, 0, int(tasks_.size()), config_.batch));
  };
  if (resume == kNewSession) checkBudget();
  auto db = store::Database::open(path, store::OpenMode::ReadWrite);
  const std::string& name = model_->name;
  std::optional<store::SessionRow> session;
  if (resume > 0) {
    session = db->sessions().byId(resume);
    if (!session || session->kind != "model" || session->subject != name)
      throw std::invalid_argument("session " + std::to_string(resume) + " is not a session of " + name +
                                  ": it cannot be resumed with this model");
  }
  const int64_t modelId = db->ensureModel(name, name);
  if (resume == kLastSession) session = db->sessions().last(0, modelId);
  // A session's records are of its target's tasks: it goes on for that target only.
  if (session) {
    const nlohmann::json stored = nlohmann::json::parse(session->config, nullptr, false);
    const std::string host = target::Target::host().str();  // sessions from before targets were stored
    const std::string target = stored.is_object() ? stored.value("target", host) : host;
    if (const std::string asked = config_.target.str(); target != asked)
      throw std::invalid_argument("session " + std::to_string(session->id) + " of " + name + " tuned for target '" +
                                  target + "', not '" + asked + "': resume it with --target \"" + target + "\"");
  }
  if (!session) checkBudget();

  for (const search::ModelTask& t : tasks_)
    db->setModelTask(modelId, db->ensureTask(store::taskRowOf(t.task)), t.weight);
  if (session) {
    sessionId_ = session->id;
    resumed_ = true;
    earlierTrials_ = db->sessions().byId(session->id)->records;
    db->sessions().reopen(sessionId_, config_.trials);
  } else {
    sessionId_ = db->sessions().start("model", 0, modelId, config_.toJson(tasks_.size()).dump(), config_.trials);
  }
  db_ = std::move(db);
}

search::ModelTuneOptions ModelTuning::tuneOptions(const TuningEvents& events, std::vector<double>& best,
                                                  TuningProgress& progress) {
  search::ModelTuneOptions o;
  o.trials = config_.trials;
  o.seconds = config_.minutes * 60;
  if (config_.trials == 0) {  // each task's first round only, of `transfer` programs
    o.firstRoundOnly = true;
    o.trials = int(earlierTrials_) + int(tasks_.size()) * std::max(1, config_.transfer);
  }
  o.perTask = config_.taskOptions();
  search::TuneOptions& t = o.perTask;
  // One model for all the tasks, as Ansor's: what it learns on one task
  // guides the others from their first round.
  if (search::findSearch(config_.search)->guided) {
    sharedModel_ = pretrained_                     ? warm_->makeCostModel(config_.seed)
                   : config_.costModelFile.empty() ? cost::makeCostModel(config_.costModel, config_.seed)
                                                   : cost::loadCostModelFile(config_.costModelFile, config_.seed);
    t.costModel = sharedModel_->name();
    t.sharedCostModel = sharedModel_;
  }
  t.cancel = events.cancel;
  o.keepGoing = events.keepGoing;
  o.onExhausted = events.onExhausted;
  recorders_.clear();
  recorders_.resize(tasks_.size());
  o.prepareTask = [this, &events, &best, &progress](size_t i, search::TuneOptions& to) {
    if (db_) {
      recorders_[i] = std::make_unique<tuning::TuningRecorder>(*db_, tasks_[i].task, sessionId_);
      recorders_[i]->attach(to);
    }
    // A task's first round measures what was transferred to it; a resumed
    // session's tasks have had theirs.
    std::vector<search::SearchPolicy::Candidate> transferred = warm_->takeCandidates(i);
    if (to.previous.empty()) to.transferred = std::move(transferred);
    to.transferFirst = std::max(1, config_.transfer);
    for (const search::TuneRecord& r : to.previous)  // a resumed session's bests stand
      if (r.result.ok()) best[i] = std::min(best[i], r.result.medianCost());
    auto stored = to.onRecords;
    to.onRecords = [i, stored, &events, &best, &progress](const std::vector<search::TuneRecord>& batch) {
      if (stored) stored(batch);
      progress.runTrials += int(batch.size());
      progress.sessionTrials += int(batch.size());
      if (events.onRecords) events.onRecords(i, batch);
      const search::TuneRecord* newBest = nullptr;
      for (const search::TuneRecord& r : batch)
        if (r.result.ok() && r.result.medianCost() < best[i]) best[i] = r.result.medianCost(), newBest = &r;
      if (newBest && events.onBest) events.onBest(i, *newBest);
    };
  };
  return o;
}

size_t ModelTuning::damagedRecords() const {
  size_t n = 0;
  for (const auto& r : recorders_)
    if (r) n += r->damagedRecords();
  return n;
}

search::ModelTuneResult ModelTuning::run(const TuningEvents& events) {
  std::vector<double> best(tasks_.size(), INFINITY);
  TuningProgress progress{0, int(earlierTrials_)};
  search::ModelTuneOptions o = tuneOptions(events, best, progress);
  try {
    warm_->prepare(tasks_, db_.get(), sharedModel_.get());
  } catch (const std::exception& e) {
    if (db_) db_->sessions().fail(sessionId_, e.what());
    throw;
  }
  if (events.onWarmStart) events.onWarmStart(warm_->summary());
  if (events.onRound)
    o.onRound = [&](size_t i, const search::TuneResult& r, double estimate) {
      events.onRound(i, r, estimate, progress);
    };
  search::ModelTuneResult result;
  try {
    result = search::tuneModel(tasks_, o);
  } catch (const std::exception& e) {
    if (db_) db_->sessions().fail(sessionId_, e.what());
    throw;
  }
  if (db_) {
    saveCostModels();
    db_->sessions().close(sessionId_, result.stopped ? "stopped" : "finished");
  }
  return result;
}

void ModelTuning::saveCostModels() {
  // The shared model belongs to the session, not to one task.
  if (!sharedModel_) return;
  const std::string blob = sharedModel_->save();
  if (!blob.empty())
    db_->costModels().save(0, sessionId_, sharedModel_->name(), int64_t(sharedModel_->trainedOn()), blob);
}

}  // namespace tessel::tuning
