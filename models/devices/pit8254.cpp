#include "models/devices/pit8254.h"

#include "sim/machine.h"

namespace pmusim {

void Pit8254::attach(Machine& m) { m.port_bus().map(kBase, 4, *this); }

}  // namespace pmusim
