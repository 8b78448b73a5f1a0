// The small PC devices a guest expects, in one aggregate.
#pragma once
#include <string>
#include <vector>

#include "models/devices/cmos_rtc.h"
#include "models/devices/debug_console.h"
#include "models/devices/fw_cfg.h"
#include "models/devices/isa_debug_exit.h"
#include "models/devices/pic8259.h"
#include "models/devices/pit8254.h"
#include "models/devices/port92.h"
#include "models/devices/shutdown_port.h"
#include "models/devices/uart16550.h"
#include "models/devices/vga_text.h"

namespace pmusim {

class Machine;

/// One of each small device at its PC address:
///
/// | address             | device                                        |
/// |---------------------|-----------------------------------------------|
/// | ports 0x20-0x21     | master 8259A PIC (stub)                       |
/// | ports 0x40-0x43     | 8254 PIT (stub)                               |
/// | ports 0x70-0x71     | MC146818 CMOS and RTC (fixed time)            |
/// | port 0x92           | system control port A (A20, reset)            |
/// | ports 0xA0-0xA1     | slave 8259A PIC (stub)                        |
/// | port 0xE9           | debug console                                 |
/// | ports 0xF4-0xF7     | isa-debug-exit                                |
/// | ports 0x3F8-0x3FF   | 16550 UART (COM1)                             |
/// | ports 0x510-0x511   | QEMU fw_cfg                                   |
/// | port 0x8900         | Bochs shutdown port                           |
/// | 0xB8000-0xBFFFF     | VGA text memory (physical addresses, MMIO)    |
///
/// The aggregate must outlive the machine's runs (the buses keep pointers).
class StandardDevices {
public:
    StandardDevices() = default;
    StandardDevices(const StandardDevices&) = delete;
    StandardDevices& operator=(const StandardDevices&) = delete;

    /// Maps every device on `m`'s buses, before the first run (a TLB that already
    /// holds the VGA pages as RAM would bypass the device). Throws BusConflict if
    /// something already claims one of the addresses; attach once per machine.
    void attach(Machine& m);

    /// For reports: what the guest wrote to port 0xE9 and to COM1, and the screen.
    const std::string& console_text() const { return console.text(); }
    const std::string& serial_text() const { return uart.text(); }
    std::vector<std::string> screen_lines() const { return vga.lines(); }
    bool screen_written() const { return vga.written(); }

    DebugConsole console;
    Uart16550 uart;
    IsaDebugExit debug_exit;
    ShutdownPort shutdown;
    Pic8259 pic_master{Pic8259::kMasterBase};
    Pic8259 pic_slave{Pic8259::kSlaveBase};
    Pit8254 pit;
    Port92 port92;
    CmosRtc cmos;
    FwCfg fw_cfg;
    VgaTextMemory vga;
};

}  // namespace pmusim
