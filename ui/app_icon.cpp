#include "ui/app_icon.h"

// tessel_ui is a static library: its resources must be registered explicitly,
// from the global namespace, or the linker may drop them.
static bool initTesselResources() {
  Q_INIT_RESOURCE(tessel);
  return true;
}

namespace tessel::ui {

QIcon appIcon() {
  [[maybe_unused]] static const bool registered = initTesselResources();
  // Rendered from resources/tessel.svg by resources/render_icons.py: the build
  // does not depend on Qt's SVG module.
  QIcon icon;
  for (int size : {16, 24, 32, 48, 64, 128, 256}) {
    icon.addFile(QStringLiteral(":/icons/tessel-%1.png").arg(size), QSize(size, size));
  }
  return icon;
}

}  // namespace tessel::ui
