// The interface between the core and whatever delivers maskable interrupts to it.
#pragma once
#include <optional>
#include <set>

#include "sim/types.h"

namespace pmusim {

/// Source of maskable external interrupts (INTR), e.g. the local APIC model.
/// The core asks for the highest-priority vector ready for delivery at each
/// instruction boundary where RFLAGS.IF = 1 and no shadow blocks (SDM Vol. 3,
/// 6.8.1), and acknowledges the one it takes. After raising a request, the
/// controller calls the notify function the Machine gave it, so the core leaves
/// its block loop and looks.
class InterruptController {
public:
    virtual ~InterruptController() = default;
    /// The vector the controller would deliver now, if any.
    virtual std::optional<u8> pending() const = 0;
    /// The core accepted `vector` (the interrupt-acknowledge cycle).
    virtual void acknowledge(u8 vector) = 0;
};

/// The default controller: an INTR line holding raised vectors; the highest is
/// delivered first and leaves the set when acknowledged (no EOI, no masking).
class SimpleInterruptLine : public InterruptController {
public:
    void raise(u8 vector) { raised_.insert(vector); }
    std::optional<u8> pending() const override {
        if (raised_.empty()) return std::nullopt;
        return *raised_.rbegin();
    }
    void acknowledge(u8 vector) override { raised_.erase(vector); }

private:
    std::set<u8> raised_;
};

}  // namespace pmusim
