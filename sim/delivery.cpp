#include "sim/delivery.h"

#include "sim/fault.h"
#include "sim/frame_writer.h"

namespace pmusim {

ExceptionClass exception_class(u8 v) {
    switch (v) {
        case vec::DE: case vec::TS: case vec::NP: case vec::SS: case vec::GP: return ExceptionClass::kContributory;
        case vec::PF: return ExceptionClass::kPageFault;
        case vec::DF: return ExceptionClass::kDoubleFault;
        default: return ExceptionClass::kBenign;
    }
}

bool is_double_fault(u8 first, u8 second) {
    const ExceptionClass a = exception_class(first), b = exception_class(second);
    if (a == ExceptionClass::kContributory) return b == ExceptionClass::kContributory;
    if (a == ExceptionClass::kPageFault)
        return b == ExceptionClass::kContributory || b == ExceptionClass::kPageFault;
    return false;
}

bool has_error_code(u8 v) {
    return v == vec::DF || v == vec::TS || v == vec::NP || v == vec::SS || v == vec::GP ||
           v == vec::PF || v == vec::AC || v == 21;
}

namespace {

bool is_software(EventSource s) { return s == EventSource::kSoftwareInt || s == EventSource::kSoftwareException; }

void emit(Cpu& c, const DeliveryRequest& r, u64 target) {
    const bool exception = r.source == EventSource::kException ||
                           r.source == EventSource::kSoftwareException || r.source == EventSource::kIcebp;
    const EventKind kind = exception ? EventKind::kException : EventKind::kInterrupt;
    if (c.events.wants(kind)) {
        Event e;
        e.kind = kind;
        e.vector = r.vector;
        e.has_error_code = r.has_error_code;
        e.error_code = r.error_code;
        e.rip = r.return_rip;
        e.to = target;
        e.addr = r.cr2;
        c.events.emit(e);
    }
    c.branch(exception ? BranchKind::kException : BranchKind::kInterrupt, r.return_rip, target);
}

void deliver_real(Cpu& c, const DeliveryRequest& r) {
    // SDM Vol. 3, 20.1.4: the IVT entry is 4 bytes (offset, segment).
    if (u32(r.vector) * 4 + 3 > c.idtr.limit) raise_fault(vec::GP, 0);
    const u64 entry = (c.idtr.base + r.vector * 4u) & c.lin_mask;
    const u16 ip = c.mmu.read_system<u16>(entry), cs = c.mmu.read_system<u16>(entry + 2);
    const u64 mask = kAddrMask[c.stack_bytes];
    FrameWriter w{c, false, c.gpr[RSP] & mask, mask, c.seg[SS].base, &c.seg[SS]};  // beyond the limit: #SS
    w.push(2, c.rflags());
    w.push(2, c.seg[CS].selector);
    w.push(2, r.return_rip);
    c.gpr[RSP] = (c.gpr[RSP] & ~mask) | w.sp;
    c.rflags_other &= ~(kIF | kTF | kAC);
    c.seg[CS].selector = cs;
    c.seg[CS].base = u64(cs) << 4;
    c.update_mode();
    c.rip = ip;
    emit(c, r, ip);
}

void deliver_protected(Cpu& c, const DeliveryRequest& r) {
    const bool ia32e = c.long_mode();
    const bool ext = !is_software(r.source);
    const u32 idt_err = u32(r.vector) * 8 + 2 + (ext ? 1 : 0);
    const unsigned gate_size = ia32e ? 16 : 8;
    if (u32(r.vector) * gate_size + gate_size - 1 > c.idtr.limit) raise_fault(vec::GP, idt_err);
    Descriptor gate;
    const u64 gate_lin = c.idtr.base + u64(r.vector) * gate_size;
    gate.lo = c.mmu.read_system<u64>(gate_lin & c.lin_mask);
    if (ia32e) gate.hi = c.mmu.read_system<u64>((gate_lin + 8) & c.lin_mask) & 0xFFFFFFFF;
    const unsigned type = gate.type();
    if (type == 0x5) throw UnsupportedFeature("task gate in the IDT (hardware task switching is not modelled)");
    bool gate32 = true;
    if (ia32e) {
        if (gate.s() || (type != 0xE && type != 0xF)) raise_fault(vec::GP, idt_err);
    } else {
        if (gate.s() || (type != 0x6 && type != 0x7 && type != 0xE && type != 0xF)) raise_fault(vec::GP, idt_err);
        gate32 = type & 8;
    }
    const bool trap_gate = type & 1;
    if (is_software(r.source) && gate.dpl() < c.cpl) raise_fault(vec::GP, idt_err);
    if (!gate.present()) raise_fault(vec::NP, idt_err);

    const u16 sel = gate.gate_selector();
    if ((sel & 0xFFFC) == 0) raise_fault(vec::GP, ext ? 1 : 0);
    Descriptor code = read_descriptor(c, sel, false, vec::GP);
    if (!code.is_code() || code.dpl() > c.cpl) raise_fault(vec::GP, sel_error(sel, ext));
    if (!code.present()) raise_fault(vec::NP, sel_error(sel, ext));
    if (ia32e && (!(code.lo & (1ull << 53)) || (code.lo & (1ull << 54)))) raise_fault(vec::GP, sel_error(sel, ext));
    if (c.rflags_other & kVM) throw UnsupportedFeature("interrupt in virtual-8086 mode");

    const bool conforming = code.type() & seg_attr::kConforming;
    const unsigned new_cpl = conforming ? c.cpl : code.dpl();
    const bool inner = new_cpl < c.cpl;
    const u64 target = ia32e ? gate.gate_offset() : gate32 ? (gate.gate_offset() & 0xFFFFFFFF)
                                                           : (gate.gate_offset() & 0xFFFF);
    const u64 old_rflags = c.rflags();
    SegmentCache new_ss = c.seg[SS];
    FrameWriter w{c, new_cpl == 3, c.gpr[RSP], kAddrMask[c.stack_bytes], c.seg[SS].base};
    unsigned width = 8;

    if (ia32e) {
        // SDM Vol. 3, 6.14.2-6.14.5: 64-bit TSS gives RSPn or ISTn; RSP aligned to 16.
        const unsigned ist = gate.gate_ist();
        u64 rsp = c.gpr[RSP];
        if (inner || ist) {
            const u32 off = ist ? 0x24 + (ist - 1) * 8 : 4 + new_cpl * 8;
            if (off + 7 > c.tr.limit) raise_fault(vec::TS, sel_error(c.tr.selector, ext));
            rsp = c.mmu.read_system<u64>(c.tr.base + off);
        }
        if (inner) new_ss = null_segment(u16(new_cpl)), new_ss.attr |= u32(new_cpl) << seg_attr::kDplShift;
        if (!is_canonical(rsp)) raise_fault(vec::SS, ext ? 1 : 0);
        w.sp = rsp & ~0xFull, w.mask = ~0ull, w.base = 0;
        w.push(8, c.seg[SS].selector);
        w.push(8, c.gpr[RSP]);
    } else {
        width = gate32 ? 4 : 2;
        if (inner) {
            // 32-bit TSS: ESPn at 4 + 8n, SSn at 8 + 8n (SDM Vol. 3, 7.2.1).
            const u32 off = 4 + new_cpl * 8;
            if (off + 5 > c.tr.limit) raise_fault(vec::TS, sel_error(c.tr.selector, ext));
            const u32 esp = c.mmu.read_system<u32>(c.tr.base + off);
            const u16 ss_sel = c.mmu.read_system<u16>(c.tr.base + off + 4);
            if ((ss_sel & 0xFFFC) == 0) raise_fault(vec::TS, ext ? 1 : 0);
            Descriptor ssd = read_descriptor(c, ss_sel, false, vec::TS);
            if ((ss_sel & 3) != new_cpl || ssd.dpl() != new_cpl || !ssd.is_data() ||
                !(ssd.type() & seg_attr::kWritable))
                raise_fault(vec::TS, sel_error(ss_sel, ext));
            if (!ssd.present()) raise_fault(vec::SS, sel_error(ss_sel, ext));
            new_ss = to_cache(ss_sel, ssd);
            const u64 mask = (new_ss.attr & seg_attr::kDB) ? 0xFFFFFFFFull : 0xFFFFull;
            // SDM Vol. 2, INT n: no room on the new stack -> #SS(new SS + EXT).
            w.sp = esp & mask, w.mask = mask, w.base = new_ss.base;
            w.ss = &new_ss, w.ss_error = sel_error(ss_sel, ext);
            w.push(width, c.seg[SS].selector);
            w.push(width, c.gpr[RSP]);
        } else {
            w.ss = &c.seg[SS];  // same stack: #SS(EXT) if the frame does not fit
            w.ss_error = ext ? 1 : 0;
        }
        if (target > code.limit()) raise_fault(vec::GP, ext ? 1 : 0);
    }
    w.push(width, old_rflags);
    w.push(width, c.seg[CS].selector);
    w.push(width, r.return_rip);
    if (r.has_error_code) w.push(width, r.error_code);
    if (ia32e && !is_canonical(target)) raise_fault(vec::GP, ext ? 1 : 0);

    // Commit (SDM Vol. 3, 6.12.1): new stack, CS, RIP, flags.
    set_accessed(c, sel, code);
    if (inner || ia32e) c.seg[SS] = new_ss;
    c.gpr[RSP] = ia32e ? w.sp : (c.gpr[RSP] & ~w.mask) | w.sp;
    c.seg[CS] = to_cache(u16((sel & 0xFFFC) | new_cpl), code);
    c.cpl = u8(new_cpl);
    c.rflags_other &= ~(kTF | kNT | kRF | kVM);
    if (!trap_gate) c.rflags_other &= ~kIF;
    c.update_mode();
    c.rip = target;
    emit(c, r, target);
}

}  // namespace

void deliver(Cpu& c, const DeliveryRequest& r) {
    if (r.vector == vec::PF) c.cr2 = r.cr2;
    if (r.source == EventSource::kNmi) c.nmi_blocked = true;
    if (!c.protected_mode()) deliver_real(c, r);
    else deliver_protected(c, r);
    c.pending |= kPendingModeChange;
}

}  // namespace pmusim
