#include "models/devices/uart16550.h"

#include "sim/machine.h"

namespace pmusim {

void Uart16550::attach(Machine& m) { m.port_bus().map(base_, 8, *this); }

u8 Uart16550::modem_status() const {
    if (!(mcr_ & kMcrLoop)) return msr_;
    // Loopback (datasheet, MCR bit 4): CTS <- RTS, DSR <- DTR, RI <- OUT1, DCD <- OUT2.
    return u8(((mcr_ & 0x02) << 3) | ((mcr_ & 0x01) << 5) | ((mcr_ & 0x0C) << 4));
}

u8 Uart16550::read_byte(u16 port) {
    switch ((port - base_) & 7) {
        case kRbrThrDll:
            return dlab() ? u8(divisor_) : 0;
        case kIerDlm:
            return dlab() ? u8(divisor_ >> 8) : ier_;
        case kIirFcr:
            return kIirNoInterrupt | ((fcr_ & kFcrFifoEnable) ? kIirFifosEnabled : 0);
        case kLcr:
            return lcr_;
        case kMcr:
            return mcr_;
        case kLsr:
            return kLsrThre | kLsrTemt;
        case kMsr:
            return modem_status();
        default:
            return scr_;
    }
}

void Uart16550::write_byte(u16 port, u8 value) {
    switch ((port - base_) & 7) {
        case kRbrThrDll:
            if (dlab())
                divisor_ = u16((divisor_ & 0xFF00) | value);
            else if (!(mcr_ & kMcrLoop))
                out_.append(value);
            break;
        case kIerDlm:
            if (dlab())
                divisor_ = u16((divisor_ & 0x00FF) | (value << 8));
            else
                ier_ = value & 0x0F;  // bits 7-4 are always 0 (datasheet, IER)
            break;
        case kIirFcr:
            fcr_ = value & 0xC9;  // bits 2-1 (FIFO resets) clear themselves
            break;
        case kLcr:
            lcr_ = value;
            break;
        case kMcr:
            mcr_ = value & 0x1F;  // bits 7-5 are always 0 (datasheet, MCR)
            break;
        case kLsr:
        case kMsr:
            break;  // status registers: writes ignored, as in QEMU's serial.c
        default:
            scr_ = value;
            break;
    }
}

}  // namespace pmusim
