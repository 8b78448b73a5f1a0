// A stub of the 8259A programmable interrupt controller (the PC's master and slave PIC).
#pragma once
#include "models/devices/byte_port_device.h"

namespace pmusim {

class Machine;

/// Intel 8259A PIC (datasheet 231468, "Programming the 8259A"), as a stub that
/// accepts the initialization and operation command words and raises no
/// interrupts. The PC has a master at 0x20 and a slave at 0xA0.
///
/// | port (A0) | read                          | write                              |
/// |-----------|-------------------------------|------------------------------------|
/// | base  (0) | IRR or ISR (OCW3): always 0   | ICW1 (bit 4 = 1), OCW2 (bits 4-3 = |
/// |           |                               | 00, ignored), OCW3 (01, ignored)   |
/// | base+1(1) | IMR                           | ICW2, ICW3, ICW4 during the        |
/// |           |                               | initialization sequence, else OCW1 |
/// |           |                               | (the IMR)                          |
///
/// ICW1 clears the IMR and starts the sequence: ICW2 (vector base, bits 7-3),
/// then ICW3 unless ICW1.SNGL (bit 1), then ICW4 if ICW1.IC4 (bit 0). Poll
/// commands read 0 (no interrupt).
class Pic8259 : public BytePortDevice {
public:
    static constexpr u16 kMasterBase = 0x20, kSlaveBase = 0xA0;

    explicit Pic8259(u16 base) : base_(base) {}
    const char* name() const override { return base_ == kSlaveBase ? "pic-slave" : "pic-master"; }
    /// Maps the two ports at the base.
    void attach(Machine& m);

    u8 imr() const { return imr_; }
    /// Vector of IR0 (ICW2 bits 7-3).
    u8 vector_base() const { return vector_base_; }
    /// True between ICW1 and the last ICW of the sequence.
    bool initializing() const { return expect_ != Expect::kOcw1; }

protected:
    u8 read_byte(u16 port) override { return (port - base_) & 1 ? imr_ : 0; }
    void write_byte(u16 port, u8 value) override;

private:
    enum class Expect : u8 { kOcw1, kIcw2, kIcw3, kIcw4 };
    static constexpr u8 kIcw1 = 0x10, kIcw1Sngl = 0x02, kIcw1Ic4 = 0x01;

    u16 base_;
    Expect expect_ = Expect::kOcw1;
    u8 icw1_ = 0;
    u8 imr_ = 0;
    u8 vector_base_ = 0;
};

}  // namespace pmusim
