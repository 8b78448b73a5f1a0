// System control port A (port 92h): fast A20 gate and fast reset.
#pragma once
#include "sim/bus.h"

namespace pmusim {

class Machine;

/// Port 92h, "System Control Port A" of the PC chipsets (Intel PIIX/ICH I/O
/// controller hub datasheets, "Port 92h: INIT_NOW and ALT_A20_GATE"; QEMU
/// hw/i386/pc.c port92):
///
/// | port | bit | read                  | write                                     |
/// |------|-----|-----------------------|-------------------------------------------|
/// | 0x92 | 1   | ALT_A20_GATE as set   | ALT_A20_GATE (stored)                     |
/// | 0x92 | 0   | 0                     | INIT_NOW: 1 resets the system: the run    |
/// |      |     |                       | ends with exit status 0 and the message   |
/// |      |     |                       | "system reset via port 92h"               |
///
/// Other bits read 0. The A20 bit is only stored: pmusim never masks address bit
/// 20 (the gate is always open). A reset ends the run as QEMU's -no-reboot does
/// (status 0, the message tells it apart from a clean exit).
class Port92 : public PortDevice {
public:
    static constexpr u16 kPort = 0x92;
    static constexpr u8 kInitNow = 0x01, kAltA20Gate = 0x02;

    const char* name() const override { return "port92"; }
    /// Maps port 0x92 and remembers `m` as the machine to reset.
    void attach(Machine& m);
    bool a20_enabled() const { return value_ & kAltA20Gate; }

    u32 port_read(u16, unsigned) override { return value_; }
    void port_write(u16 port, unsigned size, u32 value) override;

private:
    Machine* machine_ = nullptr;
    u8 value_ = 0;
};

}  // namespace pmusim
