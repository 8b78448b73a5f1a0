#include "models/devices/isa_debug_exit.h"

#include <cstdio>

#include "sim/machine.h"

namespace pmusim {

void IsaDebugExit::attach(Machine& m) {
    m.port_bus().map(kPort, kPortCount, *this);
    machine_ = &m;
}

void IsaDebugExit::port_write(u16 port, unsigned size, u32 value) {
    if (!machine_) return;
    char msg[96];
    std::snprintf(msg, sizeof msg, "isa-debug-exit: 0x%x written to port 0x%x, exit status 0x%x",
                  value, port, unsigned(exit_status(value)));
    machine_->request_exit(exit_status(value), msg);
}

}  // namespace pmusim
