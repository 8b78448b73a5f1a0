#include "models/devices/port92.h"

#include "sim/machine.h"

namespace pmusim {

void Port92::attach(Machine& m) {
    m.port_bus().map(kPort, 1, *this);
    machine_ = &m;
}

void Port92::port_write(u16, unsigned, u32 value) {
    value_ = u8(value & kAltA20Gate);
    if ((value & kInitNow) && machine_) machine_->request_exit(0, "system reset via port 92h");
}

}  // namespace pmusim
