// Delivery of interrupts and exceptions through the IVT or IDT (SDM Vol. 3, ch. 6; 20.1.4).
#pragma once
#include <stdexcept>

#include "sim/cpu.h"

namespace pmusim {

/// Where an event comes from; decides the gate DPL check and the EXT bit (SDM Vol. 3, 6.12.1.1, 6.13).
enum class EventSource : u8 {
    kExternal,           ///< INTR from a device or the local APIC
    kNmi,
    kException,          ///< raised by the processor (faults and traps)
    kSoftwareInt,        ///< INT n
    kSoftwareException,  ///< INT3, INTO
    kIcebp,              ///< INT1 (F1): no gate DPL check
};

struct DeliveryRequest {
    u8 vector = 0;
    EventSource source = EventSource::kException;
    bool has_error_code = false;
    u32 error_code = 0;
    u64 return_rip = 0;  ///< RIP pushed: the faulting instruction (faults) or the next one (traps, INT n)
    u64 cr2 = 0;         ///< for #PF: loaded into CR2 before delivery
};

/// Thrown for architectural features pmusim does not model (task gates and task
/// switches, virtual-8086 mode). The run stops with a clear message; never silently wrong.
struct UnsupportedFeature : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Delivers an event: real-mode IVT, protected-mode IDT with interrupt and trap
/// gates (16- and 32-bit) and stack switch from the TSS, or IA-32e IDT (64-bit
/// gates, IST, 16-byte stack alignment, SS:RSP always pushed). All checks and
/// stack writes happen before any register changes, so a fault raised here
/// (thrown as GuestFault) leaves the interrupted state intact for #DF handling.
void deliver(Cpu& c, const DeliveryRequest& r);

/// Exception classes for the double-fault rules (SDM Vol. 3, 6.15, Table 6-4/6-5).
enum class ExceptionClass : u8 { kBenign, kContributory, kPageFault, kDoubleFault };
ExceptionClass exception_class(u8 vector);
/// True if an exception of vector `second`, raised while delivering `first`,
/// turns into #DF (SDM Vol. 3, Table 6-5).
bool is_double_fault(u8 first, u8 second);
/// Exceptions that push an error code (SDM Vol. 3, Table 6-1).
bool has_error_code(u8 vector);

}  // namespace pmusim
