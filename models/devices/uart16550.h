// A 16550 UART (COM1) that transmits into a text buffer.
#pragma once
#include "models/devices/byte_port_device.h"
#include "models/devices/text_buffer.h"

namespace pmusim {

class Machine;

/// NS16550A / TI PC16550D UART (datasheet, "Register Summary"), transmit only,
/// at the COM1 base 0x3F8. Offsets from the base, DLAB = LCR bit 7:
///
/// | off | DLAB | read                               | write                          |
/// |-----|------|------------------------------------|--------------------------------|
/// | 0   | 0    | RBR: 0 (nothing received)          | THR: appends the byte to text  |
/// | 0   | 1    | DLL                                | DLL (divisor latch, low byte)  |
/// | 1   | 0    | IER (bits 3-0; 7-4 read 0)         | IER                            |
/// | 1   | 1    | DLM                                | DLM (divisor latch, high byte) |
/// | 2   | -    | IIR: 0x01, 0xC1 with FIFOs enabled | FCR (bits 7-6, 3, 0 kept)      |
/// | 3   | -    | LCR                                | LCR                            |
/// | 4   | -    | MCR (bits 4-0; 7-5 read 0)         | MCR                            |
/// | 5   | -    | LSR: 0x60 (THRE, TEMT)             | ignored (factory test)         |
/// | 6   | -    | MSR: 0xB0 (DCD, DSR, CTS)          | ignored                        |
/// | 7   | -    | SCR                                | SCR                            |
///
/// IIR 0x01 = no interrupt pending; FCR bits 2-1 (FIFO resets) clear themselves.
/// The transmitter is infinitely fast: LSR always reports the holding register
/// and the shift register empty, so a guest polling LSR bit 5 before each byte
/// never waits. Nothing is ever received (LSR.DR = 0), no interrupt is raised.
/// In loopback mode (MCR bit 4) transmitted bytes do not reach the line (the
/// datasheet holds the serial output marking) and MSR bits 7-4 follow MCR
/// OUT2, OUT1, DTR, RTS as the datasheet wires them.
/// Reset values: the datasheet's "UART Reset Configuration" (IER, IIR, FCR, LCR,
/// MCR, LSR); where it leaves them open, QEMU's serial_reset (divisor 0x000C =
/// 9600 baud, modem inputs CTS, DSR and DCD asserted); SCR 0.
class Uart16550 : public BytePortDevice {
public:
    static constexpr u16 kCom1Base = 0x3F8;
    // Register offsets (datasheet names).
    static constexpr u16 kRbrThrDll = 0, kIerDlm = 1, kIirFcr = 2, kLcr = 3, kMcr = 4, kLsr = 5,
                         kMsr = 6, kScr = 7;
    static constexpr u8 kLcrDlab = 0x80, kMcrLoop = 0x10, kFcrFifoEnable = 0x01;
    static constexpr u8 kLsrThre = 0x20, kLsrTemt = 0x40;
    static constexpr u8 kIirNoInterrupt = 0x01, kIirFifosEnabled = 0xC0;
    static constexpr u8 kMsrCts = 0x10, kMsrDsr = 0x20, kMsrDcd = 0x80;

    explicit Uart16550(u16 base = kCom1Base) : base_(base) {}
    const char* name() const override { return "uart16550"; }
    /// Maps the 8 registers at the base port.
    void attach(Machine& m);

    const TextBuffer& output() const { return out_; }
    const std::string& text() const { return out_.text(); }
    u16 divisor() const { return divisor_; }

protected:
    u8 read_byte(u16 port) override;
    void write_byte(u16 port, u8 value) override;

private:
    bool dlab() const { return lcr_ & kLcrDlab; }
    u8 modem_status() const;

    u16 base_;
    TextBuffer out_;
    u16 divisor_ = 0x000C;
    u8 ier_ = 0, fcr_ = 0, lcr_ = 0, mcr_ = 0, scr_ = 0;
    u8 msr_ = kMsrDcd | kMsrDsr | kMsrCts;  ///< modem inputs when not in loopback
};

}  // namespace pmusim
