// The local APIC in xAPIC mode. Section numbers refer to the Intel SDM Vol. 3,
// chapter 10 ("Advanced Programmable Interrupt Controller"); the rules and the
// choices made where the SDM leaves room are listed in docs/semantics/apic.md.
#include "models/apic/local_apic.h"

#include <algorithm>
#include <cstring>

#include "sim/cpu_profile.h"
#include "sim/machine.h"

namespace pmusim {

namespace {
// Writable bits of each LVT entry (10.5.1, Figure 10-8). Delivery status (bit 12)
// and remote IRR (bit 14) are read-only; timer bit 18 (TSC-deadline) is reserved
// because the profiles do not report TSC-deadline support (10.5.4.1).
constexpr u32 kLvtWritable[] = {
    0x000300FF,  // timer: vector, mask, timer mode (one-shot/periodic)
    0x000107FF,  // thermal: vector, delivery mode, mask
    0x000107FF,  // performance monitor
    0x0001A7FF,  // LINT0: vector, delivery mode, polarity, trigger mode, mask
    0x0001A7FF,  // LINT1
    0x000100FF,  // error: vector, mask
    0x000107FF,  // CMCI
};
constexpr u32 kLvtOffset[] = {LocalApic::kLvtTimer, LocalApic::kLvtThermal, LocalApic::kLvtPerfmon,
                              LocalApic::kLvtLint0, LocalApic::kLvtLint1,   LocalApic::kLvtError,
                              LocalApic::kLvtCmci};
constexpr u32 kIcrLowWritable =
    0x000CCFFF;  // vector, mode, dest mode, level, trigger, shorthand (10.6.1)
constexpr u32 kIcrHighWritable = 0xFF000000;  // destination field (xAPIC: 8 bits)
constexpr u32 kSvrWritable = 0x1FF;           // spurious vector, APIC software enable (10.9)
constexpr unsigned kModeFixed = 0, kModeLowest = 1, kModeNmi = 4;
}  // namespace

/// The APIC's view of one 4 KiB page of the physical address space. MemoryBus
/// cannot unmap, so relocating IA32_APIC_BASE maps a new window and leaves the old
/// one in place; a window that is not the current base, or any window while the
/// APIC is globally disabled, forwards accesses to RAM (or open bus above RAM) as if
/// nothing decoded the address (10.4.3, 10.4.5).
class LocalApic::Window final : public MmioDevice {
  public:
    Window(LocalApic& apic, u64 base) : apic_(apic), base_(base) {}
    const char* name() const override { return "local-apic"; }

    u64 mmio_read(u64 offset, unsigned size) override {
        if (active()) return apic_.mmio_read(offset, size);
        const u64 pa = base_ + offset;
        PhysicalMemory& ram = apic_.m_->ram();
        if (pa / kPageSize >= ram.page_count()) return size == 8 ? ~0ull : (1ull << (size * 8)) - 1;
        u64 v = 0;
        std::memcpy(&v, ram.page_for_read(pa / kPageSize) + (pa & kPageMask), size);
        return v;
    }
    void mmio_write(u64 offset, unsigned size, u64 value) override {
        if (active()) return apic_.mmio_write(offset, size, value);
        const u64 pa = base_ + offset;
        PhysicalMemory& ram = apic_.m_->ram();
        if (pa / kPageSize >= ram.page_count()) return;
        std::memcpy(ram.page_for_write(pa / kPageSize) + (pa & kPageMask), &value, size);
    }

  private:
    bool active() const { return apic_.globally_enabled() && apic_.base() == base_; }
    LocalApic& apic_;
    u64 base_;
};

LocalApic::LocalApic() : self_(std::make_shared<LocalApic*>(this)) { reset_registers(); }

LocalApic::~LocalApic() { *self_ = nullptr; }

void LocalApic::attach(Machine& m) {
    m_ = &m;
    Cpu& c = m.cpu();
    // IA32_APIC_BASE (10.4.4, Figure 10-5): BSP flag bit 8, global enable bit 11,
    // base bits MAXPHYADDR-1:12. Bits 7:0, 9 and 10 (EXTD: no x2APIC) and bits at
    // and above MAXPHYADDR are reserved (#GP(0) from the MSR bus).
    const unsigned maxphy = c.profile ? c.profile->physical_address_bits : 36;
    base_mask_ = ((1ull << maxphy) - 1) & ~kPageMask;
    initial_id_ = c.profile ? u8(c.profile->query(1, 0).ebx >> 24) : 0;
    id_ = u32(initial_id_) << 24;
    c.msrs.add({kApicBaseMsr, "IA32_APIC_BASE", kApicBaseReset,
                ~(base_mask_ | kBsp | kGlobalEnable), false, [this] { return base_msr_; },
                [this](u64 v) { write_base_msr(v); }});
    set_tpr(tpr_);
    map_window();
    m.set_interrupt_controller(this);
}

void LocalApic::reset() {
    reset_registers();
    const u64 old = base();
    base_msr_ = kApicBaseReset;
    if (base() != old) map_window();
}

void LocalApic::reset_registers() {
    // Power-up/RESET state (10.4.7.1): IRR, ISR, TMR, ICR, LDR, TPR, timer counts and
    // divide configuration 0; DFR all ones; LVT entries masked; SVR 000000FFH.
    id_ = u32(initial_id_) << 24;
    ldr_ = 0;
    dfr_ = 0xFFFFFFFF;
    svr_ = 0xFF;
    irr_ = {};
    isr_ = {};
    tmr_ = {};
    esr_ = esr_pending_ = 0;
    error_armed_ = true;
    icr_low_ = icr_high_ = 0;
    lvt_.fill(kLvtMask);
    timer_initial_ = dcr_ = 0;
    stop_timer();
    set_tpr(0);
}

// ---- IA32_APIC_BASE and the MMIO window ---------------------------------------

void LocalApic::write_base_msr(u64 v) {
    const bool was_enabled = globally_enabled();
    const u64 old_base = base();
    // The BSP flag reflects what the processor is (8.4.1, 10.4.4): writes ignore it.
    base_msr_ = (v & (base_mask_ | kGlobalEnable)) | (base_msr_ & kBsp);
    // Clearing the global enable flag returns the APIC to its power-up state (10.4.3);
    // setting it again gives an APIC in that state (xAPIC disabled -> enabled, 10.12.5).
    if (was_enabled != globally_enabled()) reset_registers();
    if (base() != old_base) map_window();
    notify();
}

void LocalApic::map_window() {
    if (!m_ || windows_.count(base())) return;
    auto w = std::make_unique<Window>(*this, base());
    try {
        m_->memory_bus().map(base(), kPageSize, *w);
    } catch (const BusConflict&) {
        return;  // another device decodes that page: the APIC registers are not reachable there
    }
    windows_.emplace(base(), std::move(w));
    m_->cpu().mmu.flush_tlb();  // the page may have been cached as RAM
}

u64 LocalApic::mmio_read(u64 offset, unsigned size) {
    // Registers are the first 4 bytes of 16-byte-aligned slots; 32-bit aligned access
    // is the architectural one (10.4.1). Narrower or wider reads see the slot's bytes,
    // with bytes 4-15 reading 0.
    const unsigned within = offset & 0xF;
    if (within >= 4) return 0;
    const u64 v = u64(read_reg(u32(offset & 0xFF0))) >> (within * 8);
    return size == 8 ? v : v & ((1ull << (size * 8)) - 1);
}

void LocalApic::mmio_write(u64 offset, unsigned size, u64 value) {
    // Only 32-bit (or wider) stores at the start of a slot reach a register; other
    // stores are not architectural (10.4.1) and are ignored.
    if ((offset & 0xF) != 0 || size < 4) return;
    write_reg(u32(offset & 0xFF0), u32(value));
}

// ---- Registers ----------------------------------------------------------------

u32 LocalApic::read_register(u32 offset) const {
    switch (offset) {
        case kId:
            return id_;
        case kVer:
            return kVersion;
        case kTpr:
            return tpr();
        case kApr:
            return apr();
        case kPpr:
            return ppr();
        case kEoi:
            return 0;
        case kRrd:
            return 0;
        case kLdr:
            return ldr_;
        case kDfr:
            return dfr_;
        case kSvr:
            return svr_;
        case kEsr:
            return esr_;
        case kIcrLow:
            return icr_low_;  // delivery status (bit 12) is always idle
        case kIcrHigh:
            return icr_high_;
        case kTimerInitial:
            return timer_initial_;
        case kTimerCurrent:
            return current_count();
        case kTimerDivide:
            return dcr_;
        default:
            break;
    }
    if (offset >= kIsr && offset < kIsr + 0x80) return isr_[(offset - kIsr) >> 4];
    if (offset >= kTmr && offset < kTmr + 0x80) return tmr_[(offset - kTmr) >> 4];
    if (offset >= kIrr && offset < kIrr + 0x80) return irr_[(offset - kIrr) >> 4];
    for (unsigned k = 0; k < unsigned(Lvt::kCount); ++k)
        if (offset == kLvtOffset[k]) return lvt_[k];
    return 0;
}

namespace {
bool implemented(u32 offset) {
    switch (offset) {
        case LocalApic::kId:
        case LocalApic::kVer:
        case LocalApic::kTpr:
        case LocalApic::kApr:
        case LocalApic::kPpr:
        case LocalApic::kEoi:
        case LocalApic::kRrd:
        case LocalApic::kLdr:
        case LocalApic::kDfr:
        case LocalApic::kSvr:
        case LocalApic::kEsr:
        case LocalApic::kLvtCmci:
        case LocalApic::kIcrLow:
        case LocalApic::kIcrHigh:
        case LocalApic::kTimerInitial:
        case LocalApic::kTimerCurrent:
        case LocalApic::kTimerDivide:
            return true;
        default:
            break;
    }
    if (offset >= LocalApic::kIsr && offset < LocalApic::kIrr + 0x80) return true;  // ISR, TMR, IRR
    return offset >= LocalApic::kLvtTimer && offset <= LocalApic::kLvtError;
}
}  // namespace

u32 LocalApic::read_reg(u32 offset) {
    // An access to an unimplemented register sets "illegal register address" (10.5.3).
    if (!implemented(offset)) {
        record_error(kEsrIllegalRegister);
        return 0;
    }
    return read_register(offset);
}

void LocalApic::write_reg(u32 offset, u32 v) {
    if (!implemented(offset)) return record_error(kEsrIllegalRegister);
    switch (offset) {
        case kId:  // software may change the ID (10.4.6: model specific)
            id_ = v & 0xFF000000;
            return;
        case kTpr:
            set_tpr(u8(v));
            return notify();
        case kEoi:
            return eoi();
        case kLdr:  // 10.6.2.2, Figure 10-13
            ldr_ = v & 0xFF000000;
            return;
        case kDfr:  // bits 27:0 read as 1 (Figure 10-14)
            dfr_ = (v & 0xF0000000) | 0x0FFFFFFF;
            return;
        case kSvr: {
            svr_ = v & kSvrWritable;
            // Software disable masks every LVT entry (10.4.7.2).
            if (!software_enabled())
                for (u32& e : lvt_) e |= kLvtMask;
            return notify();
        }
        case kEsr:
            // A write latches the errors detected since the previous write and rearms
            // the error interrupt (10.5.3).
            esr_ = esr_pending_;
            esr_pending_ = 0;
            error_armed_ = true;
            return;
        case kIcrHigh:
            icr_high_ = v & kIcrHighWritable;
            return;
        case kIcrLow:
            icr_low_ = v & kIcrLowWritable;
            return send_ipi();
        case kTimerInitial:
            timer_initial_ = v;
            return arm_timer();
        case kTimerDivide:
            dcr_ = v & 0xB;
            return change_divisor();
        default:
            break;
    }
    for (unsigned k = 0; k < unsigned(Lvt::kCount); ++k)
        if (offset == kLvtOffset[k]) return write_lvt(Lvt(k), v);
    // Version, APR, PPR, RRD, ISR, TMR, IRR and the current count are read-only.
}

void LocalApic::write_lvt(Lvt which, u32 v) {
    u32 e = v & kLvtWritable[unsigned(which)];
    if (!software_enabled()) e |= kLvtMask;  // the mask cannot be cleared while disabled (10.4.7.2)
    lvt_[unsigned(which)] = e;
}

// ---- Priorities (10.8.3) --------------------------------------------------------

int LocalApic::highest(const std::array<u32, 8>& bits) {
    for (int w = 7; w >= 0; --w)
        if (bits[w]) return w * 32 + 31 - __builtin_clz(bits[w]);
    return -1;
}

u8 LocalApic::tpr() const {
    // In 64-bit mode MOV CR8 writes TPR[7:4] and clears TPR[3:0]; a read of CR8
    // returns TPR[7:4] (10.8.6.1). The core keeps CR8 in Cpu::cr8; a value there that
    // differs from what the APIC last put there is a MOV CR8 write.
    if (m_ && globally_enabled() && m_->cpu().cr8 != cr8_seen_) {
        cr8_seen_ = m_->cpu().cr8;
        tpr_ = u8(cr8_seen_ << 4);
    }
    return tpr_;
}

void LocalApic::set_tpr(u8 v) {
    tpr_ = v;
    cr8_seen_ = v >> 4;
    if (m_) m_->cpu().cr8 = cr8_seen_;
}

u8 LocalApic::ppr() const {
    // 10.8.3.1: PPR[7:4] = max(TPR[7:4], ISRV[7:4]); PPR[3:0] = TPR[3:0] when
    // TPR[7:4] > ISRV[7:4], 0 when less; for equal classes (model specific) this model
    // uses TPR[3:0], the rule of the earlier SDM editions ("IF TPR[7:4] >= ISRV[7:4]").
    const u8 t = tpr();
    const int s = highest(isr_);
    const u8 isrv = s < 0 ? 0 : u8(s);
    return (t >> 4) >= (isrv >> 4) ? t : u8(isrv & 0xF0);
}

u8 LocalApic::apr() const {
    // Arbitration priority (Figure 10-15; formula of the P6 / Pentium 4 documentation
    // of lowest-priority arbitration): TPR if TPR[7:4] >= IRRV[7:4] and TPR[7:4] >
    // ISRV[7:4], else max(TPR[7:4] & ISRV[7:4], IRRV[7:4]) in bits 7:4.
    const u8 t = tpr();
    const int s = highest(isr_), r = highest(irr_);
    const unsigned tc = t >> 4, sc = s < 0 ? 0 : unsigned(s) >> 4,
                   rc = r < 0 ? 0 : unsigned(r) >> 4;
    if (tc >= rc && tc > sc) return t;
    return u8(std::max(tc & sc, rc) << 4);
}

std::optional<u8> LocalApic::pending() const {
    // 10.8.4: the highest-priority IRR bit is dispatched when its priority class is
    // above the processor-priority class. A software-disabled APIC still holds (and
    // delivers) what its IRR already contains (10.4.7.2); it receives nothing new.
    if (!globally_enabled()) return std::nullopt;
    const int v = highest(irr_);
    if (v < 0 || (unsigned(v) >> 4) <= unsigned(ppr() >> 4)) return std::nullopt;
    return u8(v);
}

void LocalApic::acknowledge(u8 vector) {
    // 10.8.4: on acknowledge the IRR bit moves to the ISR.
    clear_bit(irr_, vector);
    set_bit(isr_, vector);
}

void LocalApic::eoi() {
    // 10.8.5: EOI retires the highest-priority ISR bit; a lower pending vector may now
    // be above the PPR.
    const int v = highest(isr_);
    if (v < 0) return;
    clear_bit(isr_, u8(v));
    clear_bit(tmr_, u8(v));
    notify();
}

void LocalApic::notify() {
    if (m_ && pending()) m_->interrupt_requested();
}

// ---- Receiving interrupts -----------------------------------------------------

bool LocalApic::accept_fixed(u8 vector) {
    if (!globally_enabled() || !software_enabled()) return false;
    if (vector < 16) {  // 10.5.2: vectors 0-15 are never set in the IRR
        record_error(kEsrReceiveIllegalVector);
        return false;
    }
    set_bit(irr_, vector);  // a second request for a set IRR bit collapses into it (10.8.4)
    notify();
    return true;
}

bool LocalApic::raise_lvt(Lvt which) {
    if (!globally_enabled()) return false;
    u32& e = lvt_[unsigned(which)];
    if (e & kLvtMask) return false;  // 10.5.1 Mask: "inhibits reception of the interrupt"
    // The timer and error entries have no delivery-mode field: always Fixed (10.5.1).
    const unsigned mode =
        (which == Lvt::kTimer || which == Lvt::kError) ? kModeFixed : (e >> 8) & 7;
    if (mode == kModeFixed) {
        const u8 vector = u8(e);
        if (vector < 16) {  // 10.5.2: a locally generated illegal vector is not delivered
            record_error(kEsrReceiveIllegalVector);
            return false;
        }
        set_bit(irr_, vector);
    } else if (mode == kModeNmi) {
        if (!m_) return false;
        m_->raise_nmi();  // NMI bypasses IRR/ISR; the vector field is ignored (10.5.1)
    } else {
        ++unmodelled_;  // SMI, INIT, ExtINT, reserved: not modelled
        return false;
    }
    // 10.5.1 Mask: the APIC sets the mask when it handles a performance-monitoring
    // counters interrupt; software clears it.
    if (which == Lvt::kPerfmon) e |= kLvtMask;
    notify();
    return true;
}

void LocalApic::record_error(u32 bits) {
    // 10.5.3: errors accumulate until the next ESR write; the first one after a write
    // signals the LVT error entry.
    esr_pending_ |= bits;
    if (!error_armed_) return;
    error_armed_ = false;
    raise_lvt(Lvt::kError);
}

void LocalApic::send_ipi() {
    // 10.6.1: a write to ICR[31:0] sends the IPI. This processor is the only one in
    // the system, so only messages that reach this APIC have an effect.
    const u8 vector = u8(icr_low_);
    const unsigned mode = (icr_low_ >> 8) & 7;
    const bool logical = icr_low_ & (1u << 11);
    const unsigned shorthand = (icr_low_ >> 18) & 3;
    const u8 dest = u8(icr_high_ >> 24);
    // Destination shorthands and the delivery modes valid with them: Table 10-3
    // (invalid combinations are ignored; level trigger is sent as edge).
    bool to_self = false;
    switch (shorthand) {
        case 0: {  // destination field (10.6.2.1 physical, 10.6.2.2 logical)
            const u8 id = u8(id_ >> 24), lid = u8(ldr_ >> 24);
            if (dest == 0xFF)
                to_self = true;  // broadcast
            else if (!logical)
                to_self = dest == id;
            else if ((dfr_ >> 28) == 0xF)
                to_self = (dest & lid) != 0;  // flat model
            else if ((dfr_ >> 28) == 0x0)     // cluster model
                to_self = (dest >> 4) == (lid >> 4) && (dest & lid & 0xF) != 0;
            break;
        }
        case 1:  // self
        case 2:  // all including self: Fixed only
            if (mode != kModeFixed) return;
            to_self = true;
            break;
        case 3:
            break;  // all excluding self: there is no other processor
    }
    if (mode == kModeFixed || mode == kModeLowest) {
        // An illegal vector is detected by the sender and the IPI is not sent (10.5.3).
        if (vector < 16) return record_error(kEsrSendIllegalVector);
        if (to_self) accept_fixed(vector);  // lowest priority among one processor: this one
    } else if (mode == kModeNmi) {
        if (to_self && m_) m_->raise_nmi();
    } else if (to_self) {
        ++unmodelled_;  // SMI, INIT, start-up, reserved: not modelled
    }
}

// ---- APIC timer (10.5.4) ----------------------------------------------------------

u32 LocalApic::divisor() const {
    // Divide configuration bits 3, 1:0 (Figure 10-10): 000b = 2 ... 110b = 128, 111b = 1.
    const unsigned code = ((dcr_ >> 1) & 4) | (dcr_ & 3);
    return code == 7 ? 1 : 2u << code;
}

u32 LocalApic::current_count() const {
    switch (timer_state_) {
        case TimerState::kStopped:
            return 0;
        case TimerState::kStarting:
            return timer_initial_;
        case TimerState::kCounting:
            break;
    }
    const u64 ticks = (m_->now() - timer_start_) / timer_divisor_;
    if (ticks < timer_count_at_start_) return u32(timer_count_at_start_ - ticks);
    if (!(lvt_[unsigned(Lvt::kTimer)] & kLvtPeriodic) || timer_initial_ == 0) return 0;
    return u32(timer_initial_ - (ticks - timer_count_at_start_) % timer_initial_);
}

void LocalApic::after_retire(void (LocalApic::*fn)()) {
    // Machine::now() inside an instruction can lag (the fast loop counts retired
    // instructions per block), so time-dependent register writes take effect when the
    // writing instruction retires: a callback due now runs at the next instruction
    // boundary, and the pending bit ends the current block so that boundary comes
    // right after this instruction.
    std::weak_ptr<LocalApic*> self = self_;
    const u64 gen = timer_gen_;
    m_->schedule(0, [self, gen, fn] {
        if (auto p = self.lock(); p && *p && (*p)->timer_gen_ == gen) ((*p)->*fn)();
    });
    m_->cpu().pending |= kPendingInterrupt;
}

void LocalApic::arm_timer() {
    // A write of the initial count (re)starts the count; 0 stops the timer (10.5.4).
    ++timer_gen_;
    if (timer_initial_ == 0) {
        timer_state_ = TimerState::kStopped;
        return;
    }
    timer_state_ = TimerState::kStarting;
    if (m_) after_retire(&LocalApic::start_timer);
}

void LocalApic::start_timer() {
    timer_state_ = TimerState::kCounting;
    timer_start_ = m_->now();
    timer_count_at_start_ = timer_initial_;
    timer_divisor_ = divisor();
    schedule_expiry();
}

void LocalApic::change_divisor() {
    // A new divisor applies from the retirement of the write on; the count reached
    // by then is kept, a partial tick of the old divisor is dropped (10.5.4 leaves
    // this open).
    if (timer_state_ != TimerState::kCounting) return;  // a starting count reads the DCR at start
    ++timer_gen_;
    after_retire(&LocalApic::rebase_divisor);
}

void LocalApic::rebase_divisor() {
    ++timer_gen_;  // drop the pending expiry callback; expiries already due happen first
    while (timer_state_ == TimerState::kCounting && timer_due() <= m_->now()) expire();
    if (timer_state_ != TimerState::kCounting) return;
    const u32 count = current_count();
    timer_start_ = m_->now();
    timer_count_at_start_ = count;
    timer_divisor_ = divisor();
    schedule_expiry();
}

void LocalApic::stop_timer() {
    ++timer_gen_;
    timer_state_ = TimerState::kStopped;
}

u64 LocalApic::timer_due() const {
    return timer_start_ + u64(timer_count_at_start_) * timer_divisor_;
}

void LocalApic::schedule_expiry() {
    const u64 due = timer_due(), now = m_->now();
    std::weak_ptr<LocalApic*> self = self_;
    const u64 gen = timer_gen_;
    m_->schedule(due > now ? due - now : 0, [self, gen] {
        if (auto p = self.lock(); p && *p && (*p)->timer_gen_ == gen) {
            (*p)->expire();
            if ((*p)->timer_state_ == TimerState::kCounting) (*p)->schedule_expiry();
        }
    });
}

void LocalApic::expire() {
    // Periodic mode reloads the initial count and goes on; one-shot stays at 0. The
    // mode is the one the LVT timer entry holds at expiry.
    if ((lvt_[unsigned(Lvt::kTimer)] & kLvtPeriodic) && timer_initial_ != 0) {
        timer_start_ = timer_due();
        timer_count_at_start_ = timer_initial_;
    } else {
        timer_state_ = TimerState::kStopped;
    }
    raise_lvt(Lvt::kTimer);  // the timer counts while masked; only the interrupt is masked
}

}  // namespace pmusim
