#include "store/cost_model_store.h"

#include "store/store_sql.h"

namespace tessel::store {

CostModelStore Database::costModels() {
  return CostModelStore(*this);
}

CostModelReader Database::costModels() const {
  return CostModelReader(*conn_);
}

void CostModelStore::save(int64_t taskId, int64_t sessionId, const std::string& name, int64_t trainedOn,
                          const std::string& blob) {
  Statement st = conn_.prepare(
      std::string("INSERT INTO cost_models(task_id, session_id, name, trained_on, model, created) VALUES (?,?,?,?,?,") +
      kNow + ")");
  taskId ? st.bind(1, taskId) : st.bindNull(1);
  sessionId ? st.bind(2, sessionId) : st.bindNull(2);
  st.bind(3, name).bind(4, trainedOn).bindBlob(5, blob).run();
}

std::vector<SavedCostModel> CostModelReader::ofSession(int64_t sessionId) const {
  Statement st = conn_.prepare(
      "SELECT id, task_id, session_id, name, trained_on, model FROM cost_models WHERE session_id = ? ORDER BY id");
  st.bind(1, sessionId);
  std::vector<SavedCostModel> out;
  while (st.step())
    out.push_back(
        {st.getInt(0), st.isNull(1) ? 0 : st.getInt(1), st.getInt(2), st.getText(3), st.getInt(4), st.getBlob(5)});
  return out;
}

}  // namespace tessel::store
