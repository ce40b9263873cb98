// The views of Tessel Studio's window that its model loader (ModelLoader)
// and tuning controller (TuningController) fill. The window makes and owns
// them; the two only write to them.
#pragma once

class QLabel;
class QProgressBar;
class QStatusBar;

namespace tessel::ui {

class CodeView;
class GraphView;
class LogPanel;
class PlotsPanel;
class SearchSpaceView;
class TasksPanel;

struct StudioViews {
  LogPanel* log = nullptr;
  QStatusBar* status = nullptr;
  TasksPanel* tasks = nullptr;
  GraphView* graph = nullptr;
  PlotsPanel* plots = nullptr;
  SearchSpaceView* space = nullptr;
  CodeView* code = nullptr;
  QProgressBar* progress = nullptr;  // the tuning's trials (or seconds) of its budget
  QLabel* rate = nullptr;            // trials/s and the time left
};

}  // namespace tessel::ui
