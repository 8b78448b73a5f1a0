#include "models/devices/pic8259.h"

#include "sim/machine.h"

namespace pmusim {

void Pic8259::attach(Machine& m) { m.port_bus().map(base_, 2, *this); }

void Pic8259::write_byte(u16 port, u8 value) {
    if (((port - base_) & 1) == 0) {
        // A0 = 0: ICW1 if bit 4 is set; otherwise OCW2/OCW3, which change nothing
        // the stub models (no interrupt is ever in service or requested).
        if (value & kIcw1) {
            icw1_ = value;
            imr_ = 0;  // datasheet, ICW1: "the Interrupt Mask Register is cleared"
            expect_ = Expect::kIcw2;
        }
        return;
    }
    switch (expect_) {
        case Expect::kOcw1:
            imr_ = value;
            break;
        case Expect::kIcw2:
            vector_base_ = value & 0xF8;
            expect_ = !(icw1_ & kIcw1Sngl) ? Expect::kIcw3
                      : (icw1_ & kIcw1Ic4) ? Expect::kIcw4
                                           : Expect::kOcw1;
            break;
        case Expect::kIcw3:
            expect_ = (icw1_ & kIcw1Ic4) ? Expect::kIcw4 : Expect::kOcw1;
            break;
        case Expect::kIcw4:
            expect_ = Expect::kOcw1;
            break;
    }
}

}  // namespace pmusim
