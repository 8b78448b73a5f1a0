#include "models/devices/debug_console.h"

#include "sim/machine.h"

namespace pmusim {

void DebugConsole::attach(Machine& m) { m.port_bus().map(kPort, 1, *this); }

}  // namespace pmusim
