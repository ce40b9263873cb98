// Where Tessel Studio keeps what it remembers between starts (the window's
// layout, the models opened recently, the last tuning's choices, the Run's
// repeats): QSettings of organisation "Tessel", application "Tessel Studio".
#pragma once

#include <QSettings>

namespace tessel::ui {

inline constexpr const char* kStudioOrganization = "Tessel";
inline constexpr const char* kStudioApplication = "Tessel Studio";

inline QSettings studioSettings() {
  return QSettings(kStudioOrganization, kStudioApplication);
}

}  // namespace tessel::ui
