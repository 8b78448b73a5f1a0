// The Bochs shutdown port at I/O port 0x8900.
#pragma once
#include "sim/bus.h"

namespace pmusim {

class Machine;

/// Bochs' shutdown port (iodev/unmapped.cc, port 0x8900; Pintos powers off
/// through it under Bochs):
///
/// | port   | read      | write                                                  |
/// |--------|-----------|--------------------------------------------------------|
/// | 0x8900 | all ones  | the bytes 'S','h','u','t','d','o','w','n' in sequence  |
/// |        | (Bochs:   | end the run with exit status 0 ("Shutdown port:        |
/// |        | unmapped) | shutdown requested")                                   |
///
/// Matching follows Bochs exactly: each letter of "Shutdown" advances the match
/// only when it is the next expected letter and leaves it unchanged otherwise;
/// any other value (compared in full, so a 16-bit 0x0053 is 'S' but 0x4153 is
/// not) restarts it.
class ShutdownPort : public PortDevice {
public:
    static constexpr u16 kPort = 0x8900;
    static constexpr char kSequence[] = "Shutdown";

    const char* name() const override { return "bochs-shutdown"; }
    /// Maps port 0x8900 and remembers `m` as the machine to stop.
    void attach(Machine& m);
    /// Letters of "Shutdown" matched so far (0-7).
    unsigned matched() const { return matched_; }

    u32 port_read(u16, unsigned size) override { return size == 4 ? ~0u : (1u << (8 * size)) - 1; }
    void port_write(u16 port, unsigned size, u32 value) override;

private:
    Machine* machine_ = nullptr;
    unsigned matched_ = 0;
};

}  // namespace pmusim
