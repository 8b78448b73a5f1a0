// QEMU's isa-debug-exit device at I/O port 0xF4.
#pragma once
#include "sim/bus.h"

namespace pmusim {

class Machine;

/// isa-debug-exit as QEMU configures it with `-device isa-debug-exit,iobase=0xf4,
/// iosize=0x04` (hw/misc/debugexit.c):
///
/// | port      | read | write                                                   |
/// |-----------|------|---------------------------------------------------------|
/// | 0xF4-0xF7 | 0    | value v (1, 2 or 4 bytes) ends the run: exit status     |
/// |           |      | (v << 1) \| 1                                           |
///
/// QEMU calls exit((v << 1) | 1); here Machine::request_exit ends the run with
/// StopReason::kGuestExit and that status (computed in 32 bits; a host process
/// would see its low 8 bits). The status is always odd, so it never collides
/// with a clean exit 0.
class IsaDebugExit : public PortDevice {
public:
    static constexpr u16 kPort = 0xF4, kPortCount = 4;

    const char* name() const override { return "isa-debug-exit"; }
    /// Maps ports 0xF4-0xF7 and remembers `m` as the machine to stop.
    void attach(Machine& m);
    /// The exit status QEMU reports for a written value.
    static int exit_status(u32 value) { return int(u32(value << 1) | 1u); }

    u32 port_read(u16, unsigned) override { return 0; }
    void port_write(u16 port, unsigned size, u32 value) override;

private:
    Machine* machine_ = nullptr;
};

}  // namespace pmusim
