#include "models/devices/shutdown_port.h"

#include <cstring>

#include "sim/machine.h"

namespace pmusim {

void ShutdownPort::attach(Machine& m) {
    m.port_bus().map(kPort, 1, *this);
    machine_ = &m;
}

void ShutdownPort::port_write(u16, unsigned, u32 value) {
    constexpr unsigned kLength = sizeof(kSequence) - 1;
    const char* letter = value < 0x100 && value != 0 ? std::strchr(kSequence, int(value)) : nullptr;
    if (!letter) {
        matched_ = 0;
        return;
    }
    if (unsigned(letter - kSequence) != matched_) return;  // a letter out of turn: no change
    if (++matched_ < kLength) return;
    matched_ = 0;
    if (machine_) machine_->request_exit(0, "Shutdown port: shutdown requested (port 0x8900)");
}

}  // namespace pmusim
