// The Tessel application icon, from the resources compiled into tessel_ui.
#pragma once

#include <QIcon>

namespace tessel::ui {

QIcon appIcon();

}  // namespace tessel::ui
