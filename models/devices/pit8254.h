// A stub of the 8254 programmable interval timer.
#pragma once
#include "models/devices/byte_port_device.h"

namespace pmusim {

class Machine;

/// Intel 8254 PIT (datasheet 231164) at 0x40-0x43, as a stub: the counters do not
/// count and raise no IRQ 0. Timing belongs to the timing model.
///
/// | port | read | write                               |
/// |------|------|-------------------------------------|
/// | 0x40 | 0    | counter 0 (accepted, ignored)       |
/// | 0x41 | 0    | counter 1 (accepted, ignored)       |
/// | 0x42 | 0    | counter 2 (accepted, ignored)       |
/// | 0x43 | 0    | control word (accepted, ignored)    |
class Pit8254 : public BytePortDevice {
public:
    static constexpr u16 kBase = 0x40;

    const char* name() const override { return "pit8254"; }
    /// Maps ports 0x40-0x43.
    void attach(Machine& m);
    /// Bytes written to the PIT so far (for reports: the guest tried to program it).
    u64 writes() const { return writes_; }

protected:
    u8 read_byte(u16) override { return 0; }
    void write_byte(u16, u8) override { ++writes_; }

private:
    u64 writes_ = 0;
};

}  // namespace pmusim
