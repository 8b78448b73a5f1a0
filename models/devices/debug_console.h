// The Bochs/QEMU debug console ("port E9 hack") at I/O port 0xE9.
#pragma once
#include "models/devices/byte_port_device.h"
#include "models/devices/text_buffer.h"

namespace pmusim {

class Machine;

/// Debug console, Bochs convention (iodev/unmapped.cc, "port e9 hack"; QEMU
/// isa-debugcon with its default iobase 0xE9 and readback 0xE9):
///
/// | port | read                  | write                          |
/// |------|-----------------------|--------------------------------|
/// | 0xE9 | 0xE9 (device present) | appends the byte to the text   |
///
/// Wider accesses are split into bytes (BytePortDevice), as QEMU's isa-debugcon
/// does: OUT DX, AX appends AL then AH; IN AX, DX reads 0xE9E9.
class DebugConsole : public BytePortDevice {
public:
    static constexpr u16 kPort = 0xE9;
    static constexpr u8 kReadback = 0xE9;

    const char* name() const override { return "debugcon"; }
    /// Maps the console at port 0xE9.
    void attach(Machine& m);
    const TextBuffer& output() const { return out_; }
    const std::string& text() const { return out_.text(); }

protected:
    u8 read_byte(u16) override { return kReadback; }
    void write_byte(u16, u8 value) override { out_.append(value); }

private:
    TextBuffer out_;
};

}  // namespace pmusim
