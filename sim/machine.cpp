#include "sim/machine.h"

#include <cstring>
#include <stdexcept>

namespace pmusim {

const char* stop_reason_name(StopReason r) {
    switch (r) {
        case StopReason::kInstructionLimit: return "instruction-limit";
        case StopReason::kHalt: return "halt";
        case StopReason::kStopAddress: return "stop-address";
        case StopReason::kException: return "exception";
        case StopReason::kHostRequest: return "host-request";
    }
    return "?";
}

Machine::Machine(const MachineConfig& cfg)
    : ram_(cfg.memory_bytes), bus_(ram_), cpu_(bus_), cache_(cpu_) {
    set_flat_mode(CodeBits::k32);
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

void Machine::set_flat_mode(CodeBits bits) {
    cpu_.code_bits = bits;
    cpu_.stack_bytes = bits == CodeBits::k64 ? 8 : bits == CodeBits::k32 ? 4 : 2;
    cpu_.lin_mask = bits == CodeBits::k64 ? ~0ull : 0xFFFFFFFFull;
    cpu_.mmu.set_long_mode(bits == CodeBits::k64);
    for (u8 s = 0; s < 6; ++s) {
        cpu_.seg[s] = SegmentCache{};
        cpu_.seg[s].limit = 0xFFFFFFFF;
        cpu_.seg_base[s] = 0;
    }
    cpu_.seg_base[kNoSeg] = 0;
    cpu_.cpl = 0;
    cpu_.pending |= kPendingModeChange;
}

std::optional<StopReason> Machine::on_fault(const GuestFault& f, RunResult& r) {
    r.fault = f;
    if (cpu_.events.wants(EventKind::kException)) {
        Event e;
        e.kind = EventKind::kException;
        e.vector = f.vector;
        e.has_error_code = f.has_error_code;
        e.error_code = f.error_code;
        e.rip = cpu_.rip;
        e.addr = f.fault_address;
        cpu_.events.emit(e);
    }
    return StopReason::kException;
}

std::optional<StopReason> Machine::exec_block(Block* b, u64 end, RunResult& r) {
    const Insn* const first = b->insns.get();
    const Insn* const last = first + b->count - 1;
    const Insn* in = first;
    const bool per_insn = cpu_.events.wants(EventKind::kInsnRetired) || cpu_.retired + b->count > end;
    try {
        if (!per_insn) {
            // Fast loop: no per-instruction work besides the handler call.
            for (;;) {
                in->fn(cpu_, *in);
                if (__builtin_expect(cpu_.pending != 0, 0) || in == last) break;
                ++in;
            }
            if (!in->ends_block) cpu_.rip = in->next;
            cpu_.retired += u64(in - first) + 1;
            return std::nullopt;
        }
        // Slow loop: instruction-retired events and exact instruction limits.
        for (;;) {
            if (cpu_.retired >= end) {
                cpu_.rip = in->addr();
                return StopReason::kInstructionLimit;
            }
            in->fn(cpu_, *in);
            if (!in->ends_block) cpu_.rip = in->next;
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
        if (!per_insn) cpu_.retired += u64(in - first);
        cpu_.rip = in->addr();
        return on_fault(f, r);
    }
}

RunResult Machine::run(const RunLimits& limits) {
    RunResult r;
    const u64 start = cpu_.retired;
    const u64 end = limits.max_instructions > ~0ull - start ? ~0ull : start + limits.max_instructions;
    bool first = true;
    auto finish = [&](StopReason why) {
        r.reason = why;
        r.instructions = cpu_.retired - start;
        r.rip = cpu_.rip;
        return r;
    };
    for (;;) {
        if (cpu_.pending) {
            const u32 p = __atomic_exchange_n(&cpu_.pending, 0u, __ATOMIC_RELAXED);
            cache_.collect_garbage();
            if (p & kPendingModeChange) cpu_.mmu.flush_tlb();
            if (p & kPendingStop) return finish(StopReason::kHostRequest);
            if (p & kPendingHalt) return finish(StopReason::kHalt);
        }
        if (cpu_.retired >= end) return finish(StopReason::kInstructionLimit);
        Block* b;
        try {
            b = cache_.lookup();
        } catch (const GuestFault& f) {
            if (auto why = on_fault(f, r)) return finish(*why);
            continue;
        }
        if (b->stop_here && !first) return finish(StopReason::kStopAddress);
        first = false;
        if (auto why = exec_block(b, end, r)) return finish(*why);
    }
}

}  // namespace pmusim
