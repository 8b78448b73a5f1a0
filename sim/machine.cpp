#include "sim/machine.h"

#include <cstring>
#include <stdexcept>

#include "sim/core_msrs.h"

namespace pmusim {

const char* stop_reason_name(StopReason r) {
    switch (r) {
        case StopReason::kInstructionLimit: return "instruction-limit";
        case StopReason::kHalt: return "halt";
        case StopReason::kStopAddress: return "stop-address";
        case StopReason::kException: return "exception";
        case StopReason::kTripleFault: return "triple-fault";
        case StopReason::kUnsupported: return "unsupported";
        case StopReason::kHostRequest: return "host-request";
        case StopReason::kGuestExit: return "guest-exit";
        case StopReason::kIdleLoop: return "idle-loop";
    }
    return "?";
}

Machine::Machine(const MachineConfig& cfg)
    : ram_(cfg.memory_bytes), bus_(ram_), cpu_(bus_), cache_(cpu_) {
    cpu_.ports = &ports_;
    cpu_.profile = cfg.profile ? cfg.profile : &generic_intel_profile();
    register_core_msrs(cpu_, [this] { return now(); });
    reset();
}

void Machine::load(u64 pa, const void* data, size_t n) {
    if (pa > ram_.size() || n > ram_.size() - pa)
        throw std::out_of_range("load: [" + std::to_string(pa) + ", +" + std::to_string(n) +
                                ") lies outside guest RAM");
    const u8* src = static_cast<const u8*>(data);
    while (n) {
        const u64 pfn = pa / kPageSize;
        const size_t chunk = std::min<size_t>(n, kPageSize - (pa & kPageMask));
        std::memcpy(ram_.page_for_write(pfn) + (pa & kPageMask), src, chunk);
        cache_.invalidate_page(pfn);
        pa += chunk, src += chunk, n -= chunk;
    }
    cpu_.mmu.flush_tlb();
}

void Machine::peek(u64 pa, void* out, size_t n) {
    if (pa > ram_.size() || n > ram_.size() - pa) throw std::out_of_range("peek outside guest RAM");
    u8* dst = static_cast<u8*>(out);
    while (n) {
        const size_t chunk = std::min<size_t>(n, kPageSize - (pa & kPageMask));
        std::memcpy(dst, ram_.page_for_read(pa / kPageSize) + (pa & kPageMask), chunk);
        pa += chunk, dst += chunk, n -= chunk;
    }
}

void Machine::reset() {
    Cpu& c = cpu_;
    for (u64& r : c.gpr) r = 0;
    c.gpr[RDX] = c.profile->query(1, 0).eax;  // EDX holds the processor signature (Table 9-1)
    c.set_rflags(kFixed1);
    c.cr0 = cr0::kET | cr0::kCD | cr0::kNW;  // 60000010H
    c.cr2 = c.cr3 = c.cr4 = c.cr8 = c.efer = 0;
    c.fpu_cw = 0x0040, c.fpu_sw = 0, c.fpu_tw = 0x5555;
    for (u8 s = 0; s < 6; ++s) {
        c.seg[s] = SegmentCache{};
        c.seg[s].attr = seg_attr::kP | seg_attr::kS | 0x3;  // present, read/write, accessed
    }
    c.seg[CS].selector = 0xF000;
    c.seg[CS].base = 0xFFFF0000;
    c.seg[CS].attr = seg_attr::kP | seg_attr::kS | 0xB;  // present, execute/read, accessed
    c.ldtr = SegmentCache{};
    c.ldtr.attr = seg_attr::kP | 0x2;
    c.tr = SegmentCache{};
    c.tr.attr = seg_attr::kP | 0xB;
    c.gdtr = c.idtr = TableRegister{};
    c.rip = 0xFFF0;
    c.cpl = 0;
    c.nmi_blocked = false;
    c.shadow_at = ~0ull;
    c.mmu.flush_tlb();
    c.update_mode();
    c.pending |= kPendingPagingChange;
}

void Machine::start_real_mode(u16 cs, u16 ip) {
    reset();
    cpu_.seg[CS].selector = cs;
    cpu_.seg[CS].base = u64(cs) << 4;
    cpu_.rip = ip;
    cpu_.update_mode();
    stop_on_exception_ = false;
}

void Machine::build_identity_page_tables() {
    const u64 top = ram_.size() - 6 * kPageSize;
    const std::vector<u64> tables = identity_map_4gib(top, true);
    load(top, tables.data(), tables.size() * 8);
    cpu_.cr3 = top;
}

void Machine::set_flat_mode(CodeBits bits) {
    Cpu& c = cpu_;
    for (u8 s = 0; s < 6; ++s) {
        c.seg[s] = SegmentCache{};
        c.seg[s].selector = s == CS ? 0x08 : 0x10;
        c.seg[s].limit = 0xFFFFFFFF;
        c.seg[s].attr = seg_attr::kP | seg_attr::kS | seg_attr::kG | 0x3 |
                        (bits == CodeBits::k16 ? 0 : seg_attr::kDB);
    }
    c.seg[CS].attr = seg_attr::kP | seg_attr::kS | seg_attr::kG | 0xB;
    if (bits == CodeBits::k64) c.seg[CS].attr |= seg_attr::kL;
    else if (bits == CodeBits::k32) c.seg[CS].attr |= seg_attr::kDB;
    c.cr0 = cr0::kPE | cr0::kET | cr0::kNE;
    c.cr4 = 0;
    c.efer = 0;
    c.cpl = 0;
    if (bits == CodeBits::k64) {
        build_identity_page_tables();
        c.cr4 = cr4::kPAE;
        c.efer = efer::kLME | efer::kLMA | efer::kNXE | efer::kSCE;
        c.cr0 |= cr0::kPG | cr0::kWP;
    }
    c.mmu.flush_tlb();
    c.update_mode();
    c.pending |= kPendingPagingChange;
    stop_on_exception_ = true;
}

void Machine::raise_interrupt(u8 vector) {
    line_.raise(vector);
    interrupt_requested();
}

void Machine::set_interrupt_controller(InterruptController* ic) {
    ic_ = ic ? ic : &line_;
    interrupt_requested();
}

void Machine::interrupt_requested() {
    irq_waiting_ = true;
    __atomic_or_fetch(&cpu_.pending, kPendingInterrupt, __ATOMIC_RELAXED);
}

void Machine::request_exit(int exit_code, std::string message) {
    exit_ = {exit_code, std::move(message)};
    __atomic_or_fetch(&cpu_.pending, kPendingStop, __ATOMIC_RELAXED);
}

void Machine::raise_nmi() {
    nmi_pending_ = true;
    irq_waiting_ = true;
    __atomic_or_fetch(&cpu_.pending, kPendingInterrupt, __ATOMIC_RELAXED);
}

void Machine::schedule(u64 after, std::function<void()> fn) {
    timers_.emplace(now() + after, std::move(fn));
    update_deadline();
}

void Machine::fire_due_events() {
    while (!timers_.empty() && timers_.begin()->first <= now()) {
        auto fn = std::move(timers_.begin()->second);
        timers_.erase(timers_.begin());
        update_deadline();
        fn();
    }
}

bool Machine::interrupt_possible() const {
    return (nmi_pending_ && !cpu_.nmi_blocked) || ((cpu_.rflags_other & kIF) && ic_->pending());
}

bool Machine::accept_interrupt(RunResult& r, std::optional<StopReason>& stop) {
    if (in_shadow()) return false;  // SDM Vol. 3, 6.8.3: STI, MOV SS and POP SS shadows
    DeliveryRequest req;
    if (nmi_pending_ && !cpu_.nmi_blocked) {
        nmi_pending_ = false;
        req.vector = vec::NMI;
        req.source = EventSource::kNmi;
    } else if (const auto v = (cpu_.rflags_other & kIF) ? ic_->pending() : std::nullopt) {
        req.vector = *v;
        ic_->acknowledge(*v);
        req.source = EventSource::kExternal;
    } else {
        return false;
    }
    irq_waiting_ = nmi_pending_ || ic_->pending();
    ++deliveries_;
    req.return_rip = cpu_.rip;
    try {
        deliver(cpu_, req);
    } catch (const GuestFault& f) {
        stop = on_fault(f, r);
    } catch (const UnsupportedFeature& e) {
        r.message = e.what();
        stop = StopReason::kUnsupported;
    }
    return true;
}

std::optional<StopReason> Machine::on_fault(const GuestFault& first, RunResult& r) {
    r.fault = first;
    if (stop_on_exception_) {
        if (cpu_.events.wants(EventKind::kException)) {
            Event e;
            e.kind = EventKind::kException;
            e.vector = first.vector;
            e.has_error_code = first.has_error_code;
            e.error_code = first.error_code;
            e.rip = cpu_.rip;
            e.addr = first.fault_address;
            cpu_.events.emit(e);
        }
        return StopReason::kException;
    }
    // Deliver, turning faults during delivery into #DF and a fault while
    // delivering #DF into a triple fault (SDM Vol. 3, 6.15, Table 6-5; interrupt 8).
    GuestFault f = first;
    ++deliveries_;
    for (int depth = 0; depth < 4; ++depth) {
        DeliveryRequest req{f.vector, EventSource::kException, f.has_error_code, f.error_code, cpu_.rip,
                            f.fault_address};
        try {
            deliver(cpu_, req);
            return std::nullopt;
        } catch (const GuestFault& next) {
            r.fault = next;
            if (f.vector == vec::DF) return StopReason::kTripleFault;
            if (is_double_fault(f.vector, next.vector)) f = GuestFault{vec::DF, true, 0, 0};
            else f = next;  // benign combination: the second exception is handled serially
        } catch (const UnsupportedFeature& e) {
            r.message = e.what();
            return StopReason::kUnsupported;
        }
    }
    return StopReason::kTripleFault;
}

std::optional<StopReason> Machine::exec_block(Block* b, u64 end, RunResult& r) {
    const Insn* in = b->insns.get();
    const Insn* const last = in + b->count - 1;
    const bool per_insn = cpu_.events.wants(EventKind::kInsnRetired) || cpu_.retired + b->count > end;
    try {
        if (!per_insn) {
            // Fast loop: RIP is set to the next instruction before each handler
            // (branch handlers overwrite it); nothing else per instruction.
            // Retirement is counted per instruction so time (now(), RDTSC, APIC timer
            // reads) is exact inside a block; a faulting instruction is not counted.
            for (;;) {
                cpu_.rip = in->next;
                in->fn(cpu_, *in);
                ++cpu_.retired;
                if (__builtin_expect(cpu_.pending != 0, 0) || in == last) break;
                ++in;
            }
            return std::nullopt;
        }
        // Slow loop: instruction-retired events and exact instruction limits.
        for (;;) {
            if (cpu_.retired >= end) {
                cpu_.rip = in->addr();
                return StopReason::kInstructionLimit;
            }
            cpu_.rip = in->next;
            in->fn(cpu_, *in);
            ++cpu_.retired;
            if (cpu_.events.wants(EventKind::kInsnRetired)) {
                Event e;
                e.kind = EventKind::kInsnRetired;
                e.rip = in->addr();
                e.to = cpu_.rip;
                cpu_.events.emit(e);
            }
            if (cpu_.pending != 0 || in == last) return std::nullopt;
            ++in;
        }
    } catch (const GuestFault& f) {
        cpu_.rip = in->addr();
        return on_fault(f, r);
    } catch (const UnsupportedFeature& e) {
        cpu_.rip = in->addr();
        r.message = e.what();
        return StopReason::kUnsupported;
    }
}

std::optional<StopReason> Machine::service(RunResult& r) {
    if (cpu_.pending) {
        const u32 p = __atomic_exchange_n(&cpu_.pending, 0u, __ATOMIC_RELAXED);
        cache_.collect_garbage();
        if (p & kPendingPagingChange) {
            cpu_.mmu.flush_tlb();
            cache_.flush();
            cpu_.pending &= ~kPendingCodeWrite;
        }
        if (p & kPendingShadow) cpu_.shadow_at = cpu_.retired;
        if ((p & kPendingInterrupt) && (nmi_pending_ || ic_->pending())) irq_waiting_ = true;
        if (p & kPendingStop) {
            if (!exit_) return StopReason::kHostRequest;
            r.exit_code = exit_->first;
            r.message = exit_->second;
            exit_.reset();
            return StopReason::kGuestExit;
        }
        // `jmp $` with no interrupt deliverable now and no timer to raise one later
        // never ends; with a timer pending it keeps running until the timer fires.
        if ((p & kPendingIdleLoop) && timers_.empty() && !interrupt_possible()) return StopReason::kIdleLoop;
        if (p & kPendingHalt) {
            // HLT: wait for an interrupt (SDM Vol. 2, HLT), skipping ahead to the next timer.
            for (;;) {
                fire_due_events();
                if (interrupt_possible()) break;
                if (timers_.empty()) return StopReason::kHalt;
                idle_ = timers_.begin()->first - cpu_.retired;
                update_deadline();
            }
        }
    }
    if (cpu_.retired >= deadline_) fire_due_events();
    if (irq_waiting_ && interrupt_possible()) {
        std::optional<StopReason> stop;
        accept_interrupt(r, stop);
        return stop;
    }
    return std::nullopt;
}

RunResult Machine::run(const RunLimits& limits) {
    RunResult r;
    const u64 start = cpu_.retired;
    const u64 end = limits.max_instructions > ~0ull - start ? ~0ull : start + limits.max_instructions;
    bool first = true;
    Block* prev = nullptr;  // the block just run, for chaining
    deliveries_ = 0;
    auto finish = [&](StopReason why) {
        r.reason = why;
        r.instructions = cpu_.retired - start;
        r.rip = cpu_.rip;
        return r;
    };
    for (;;) {
        if (__builtin_expect(cpu_.pending != 0 || irq_waiting_ || cpu_.retired >= deadline_, 0)) {
            prev = nullptr;
            if (auto why = service(r)) return finish(*why);
        }
        if (cpu_.retired >= end || (deliveries_ && cpu_.retired + deliveries_ >= end))
            return finish(StopReason::kInstructionLimit);
        Block* b;
        try {
            b = cache_.next(prev);
        } catch (const GuestFault& f) {
            prev = nullptr;
            if (auto why = on_fault(f, r)) return finish(*why);
            continue;
        }
        if (b->stop_here && !first) return finish(StopReason::kStopAddress);
        first = false;
        u64 block_end = std::min(end, deadline_);
        // An interrupt held by a shadow waits for exactly one more instruction.
        if (irq_waiting_ && in_shadow()) block_end = cpu_.retired + 1;
        if (auto why = exec_block(b, block_end, r)) {
            prev = nullptr;
            if (*why != StopReason::kInstructionLimit || cpu_.retired >= end) return finish(*why);
        } else {
            prev = b;
        }
    }
}

}  // namespace pmusim
