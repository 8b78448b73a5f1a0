// The local APIC in xAPIC mode (SDM Vol. 3, chapter 10): memory-mapped registers,
// interrupt priority and acceptance, the APIC timer, the local vector table with
// the performance-monitoring interrupt path, and self-IPIs.
#pragma once
#include <array>
#include <map>
#include <memory>
#include <optional>

#include "sim/bus.h"
#include "sim/interrupt_controller.h"
#include "sim/types.h"

namespace pmusim {

class Machine;

/// One local APIC in xAPIC mode (x2APIC is not modelled; the CPU profiles clear
/// CPUID.01H:ECX[21]), attached to one Machine.
///
/// Registers (SDM Vol. 3, 10.4.1, Table 10-1) sit in a 4 KiB page at the address
/// IA32_APIC_BASE (MSR 1BH) holds, 0xFEE00000 after reset. Each register is the
/// first 32 bits of a 16-byte slot; see docs/semantics/apic.md for every rule and
/// its SDM section.
///
/// Time: the APIC timer counts down once per `divisor` units of the core time base
/// (divisor from the divide configuration register, SDM 10.5.4). Until pmusim has a
/// timing model the time base is the Machine's: one unit per retired instruction
/// plus the time spent in HLT (Machine::now(), Machine::schedule()). A count armed
/// by a write to the initial-count register starts when that write's instruction
/// retires, so initial count N with divisor D raises the timer interrupt after N*D
/// more instructions (or halted units). TSC-deadline mode is not modelled (the
/// profiles clear CPUID.01H:ECX[24]): LVT timer bit 18 is reserved and reads 0.
///
/// Lifetime: MemoryBus has no unmap, so the bus keeps pointers to this object's
/// MMIO windows. Destroy the LocalApic only when the Machine will not run or be
/// accessed again (e.g. declare the Machine first); the destructor does not touch
/// the Machine, and pending timer callbacks become no-ops.
class LocalApic final : public InterruptController {
  public:
    /// Local vector table entries (SDM 10.5.1, Figure 10-8).
    enum class Lvt : u8 { kTimer, kThermal, kPerfmon, kLint0, kLint1, kError, kCmci, kCount };

    static constexpr u32 kApicBaseMsr = 0x1B;          ///< IA32_APIC_BASE
    static constexpr u64 kDefaultBase = 0xFEE00000;    ///< SDM 10.4.1
    static constexpr u64 kApicBaseReset = 0xFEE00900;  ///< base | EN (bit 11) | BSP (bit 8)
    static constexpr u64 kBsp = 1u << 8, kGlobalEnable = 1u << 11;
    /// Version register (SDM 10.4.8): version 14H, Max LVT Entry = 7 entries - 1 = 6
    /// (CMCI, timer, thermal, performance monitor, LINT0, LINT1, error), no
    /// EOI-broadcast suppression (bit 24 = 0).
    static constexpr u32 kVersion = 0x00060014;

    /// Register offsets in the APIC page (SDM 10.4.1, Table 10-1).
    enum Reg : u32 {
        kId = 0x20,
        kVer = 0x30,
        kTpr = 0x80,
        kApr = 0x90,
        kPpr = 0xA0,
        kEoi = 0xB0,
        kRrd = 0xC0,
        kLdr = 0xD0,
        kDfr = 0xE0,
        kSvr = 0xF0,
        kIsr = 0x100,
        kTmr = 0x180,
        kIrr = 0x200,
        kEsr = 0x280,
        kLvtCmci = 0x2F0,
        kIcrLow = 0x300,
        kIcrHigh = 0x310,
        kLvtTimer = 0x320,
        kLvtThermal = 0x330,
        kLvtPerfmon = 0x340,
        kLvtLint0 = 0x350,
        kLvtLint1 = 0x360,
        kLvtError = 0x370,
        kTimerInitial = 0x380,
        kTimerCurrent = 0x390,
        kTimerDivide = 0x3E0,
    };
    /// LVT and ICR fields (SDM 10.5.1, 10.6.1).
    static constexpr u32 kLvtMask = 1u << 16, kLvtPeriodic = 1u << 17;
    static constexpr u32 kSvrEnable = 1u << 8;
    /// ESR bits (SDM 10.5.3, Figure 10-9) this model can set.
    static constexpr u32 kEsrSendIllegalVector = 1u << 5, kEsrReceiveIllegalVector = 1u << 6,
                         kEsrIllegalRegister = 1u << 7;

    /// A local APIC in its power-up state (SDM 10.4.7.1). The APIC ID is taken from
    /// the profile's CPUID.01H:EBX[31:24] at attach().
    LocalApic();
    ~LocalApic() override;
    LocalApic(const LocalApic&) = delete;
    LocalApic& operator=(const LocalApic&) = delete;

    /// Registers IA32_APIC_BASE on m.cpu().msrs, maps the MMIO page at 0xFEE00000
    /// and makes this APIC the Machine's interrupt controller. Call once.
    void attach(Machine& m);

    /// Power-up/RESET state of the APIC registers (SDM 10.4.7.1); IA32_APIC_BASE
    /// returns to 0xFEE00900 (the MMIO page moves back to 0xFEE00000).
    void reset();

    /// A local interrupt source signals its LVT entry (what the PMU and Debug Store
    /// models call for a PMI, the timer for its expiry, ...). Per SDM 10.5.1 the
    /// mask bit "inhibits reception": a request that finds the entry masked (or the
    /// APIC globally disabled) is not received and is dropped, it is not latched.
    /// Otherwise the entry's delivery mode decides: Fixed (000b) sets the vector in
    /// the IRR (vectors 0-15: "receive illegal vector" in the ESR and no IRR bit,
    /// SDM 10.5.2); NMI (100b) raises NMI on the core (Machine::raise_nmi()). SMI,
    /// INIT, ExtINT and reserved modes are not modelled: the request is dropped and
    /// counted in unmodelled_requests(). For the performance-monitor entry, a
    /// received request sets the entry's mask bit (SDM 10.5.1, Mask: "When the local
    /// APIC handles a performance-monitoring counters interrupt, it automatically
    /// sets the mask flag"); software clears it (and writes EOI for Fixed mode).
    /// Returns true if the request was received.
    bool raise_lvt(Lvt which);
    bool raise_perfmon() { return raise_lvt(Lvt::kPerfmon); }

    /// An interrupt message for this APIC with Fixed delivery mode and edge trigger
    /// (as an I/O APIC or another processor would send): sets the IRR bit of
    /// `vector` (SDM 10.8.4). Not received while the APIC is globally or software
    /// disabled; vectors 0-15 set "receive illegal vector" instead. Returns true if
    /// the vector was set in the IRR.
    bool accept_fixed(u8 vector);

    // ---- InterruptController ----------------------------------------------------
    /// The highest IRR vector whose priority class is above the PPR class (SDM 10.8.3.1).
    std::optional<u8> pending() const override;
    /// INTA: the vector moves from the IRR to the ISR (SDM 10.8.4).
    void acknowledge(u8 vector) override;

    // ---- Host-side inspection (no side effects) ---------------------------------
    /// The value a 32-bit guest read of register `offset` would return, without
    /// recording an illegal-register error. 0 for unimplemented offsets.
    u32 read_register(u32 offset) const;
    u64 apic_base_msr() const { return base_msr_; }
    u64 base() const { return base_msr_ & base_mask_; }
    bool globally_enabled() const { return base_msr_ & kGlobalEnable; }
    bool software_enabled() const { return svr_ & kSvrEnable; }
    bool irr(u8 v) const { return irr_[v >> 5] >> (v & 31) & 1; }
    bool isr(u8 v) const { return isr_[v >> 5] >> (v & 31) & 1; }
    u32 lvt(Lvt which) const { return lvt_[unsigned(which)]; }
    /// Requests dropped because their delivery mode is not modelled (SMI, INIT,
    /// ExtINT, reserved), and ICR commands ignored for the same reason.
    u64 unmodelled_requests() const { return unmodelled_; }

  private:
    class Window;

    u32 read_reg(u32 offset);
    void write_reg(u32 offset, u32 value);
    u64 mmio_read(u64 offset, unsigned size);
    void mmio_write(u64 offset, unsigned size, u64 value);
    void write_base_msr(u64 value);
    void map_window();
    void reset_registers();

    u8 tpr() const;  ///< TPR, following MOV CR8 writes (SDM 10.8.6.1)
    void set_tpr(u8 v);
    u8 ppr() const;
    u8 apr() const;
    static int highest(const std::array<u32, 8>& bits);
    static void set_bit(std::array<u32, 8>& bits, u8 v) { bits[v >> 5] |= 1u << (v & 31); }
    static void clear_bit(std::array<u32, 8>& bits, u8 v) { bits[v >> 5] &= ~(1u << (v & 31)); }

    void eoi();
    void send_ipi();
    void record_error(u32 bits);
    void notify();
    void write_lvt(Lvt which, u32 value);

    // APIC timer (SDM 10.5.4)
    u32 divisor() const;
    u32 current_count() const;
    void after_retire(void (LocalApic::*fn)());
    void arm_timer();
    void start_timer();
    void change_divisor();
    void rebase_divisor();
    void stop_timer();
    u64 timer_due() const;
    void schedule_expiry();
    void expire();

    Machine* m_ = nullptr;
    std::shared_ptr<LocalApic*> self_;                ///< timer callbacks hold a weak_ptr to it
    std::map<u64, std::unique_ptr<Window>> windows_;  ///< by base; only one is active
    u64 base_msr_ = kApicBaseReset;
    u64 base_mask_ = 0xFFFFFF000ull;  ///< IA32_APIC_BASE bits MAXPHYADDR-1:12
    u8 initial_id_ = 0;

    u32 id_ = 0, ldr_ = 0, dfr_ = 0xFFFFFFFF, svr_ = 0xFF;
    mutable u8 tpr_ = 0;
    mutable u64 cr8_seen_ = 0;  ///< the CR8 value matching tpr_[7:4]
    std::array<u32, 8> irr_{}, isr_{}, tmr_{};
    u32 esr_ = 0, esr_pending_ = 0;
    bool error_armed_ = true;
    u32 icr_low_ = 0, icr_high_ = 0;
    std::array<u32, unsigned(Lvt::kCount)> lvt_{};
    u32 timer_initial_ = 0, dcr_ = 0;

    // Timer state: counting since timer_start_ (in Machine::now() units) with
    // timer_divisor_; timer_gen_ invalidates callbacks scheduled for an older count.
    enum class TimerState : u8 { kStopped, kStarting, kCounting };
    TimerState timer_state_ = TimerState::kStopped;
    u64 timer_start_ = 0;
    u32 timer_divisor_ = 2;
    u32 timer_count_at_start_ = 0;  ///< count value at timer_start_
    u64 timer_gen_ = 0;
    u64 unmodelled_ = 0;
};

}  // namespace pmusim
