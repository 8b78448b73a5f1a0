// A port device whose registers are all one byte wide.
#pragma once
#include "sim/bus.h"

namespace pmusim {

/// Base for devices whose registers are bytes (8250/16550 UART, 8259A PIC, 8254 PIT,
/// MC146818 CMOS, the debug console). A 2- or 4-byte access is split into byte
/// accesses at consecutive ports, lowest byte first, as QEMU does for devices
/// declaring `impl.max_access_size = 1` (memory.c, access_with_adjusted_size).
/// The device sees the port number and decodes it itself.
class BytePortDevice : public PortDevice {
public:
    u32 port_read(u16 port, unsigned size) final;
    void port_write(u16 port, unsigned size, u32 value) final;

protected:
    virtual u8 read_byte(u16 port) = 0;
    virtual void write_byte(u16 port, u8 value) = 0;
};

}  // namespace pmusim
