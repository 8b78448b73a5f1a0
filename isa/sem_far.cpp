// Far control transfers and privilege changes: far JMP/CALL (segments and call
// gates), RETF, IRET/IRETD/IRETQ, INT n/INT3/INT1/INTO, SYSCALL/SYSRET,
// SYSENTER/SYSEXIT. SDM Vol. 2 (instruction pages, Operation sections) and
// Vol. 3, 5.8 (call gates), 6.12-6.14 (interrupts), 5.8.7-5.8.8 (fast system calls).
#include "isa/bind.h"
#include "sim/delivery.h"
#include "sim/frame_writer.h"

namespace pmusim {

namespace {


/// Reads a value of `width` bytes from the current stack at offset `sp`.
u64 stack_read(Cpu& c, u64 sp, unsigned width) {
    const SegAddr lin = linear(c, SS, sp & kAddrMask[c.stack_bytes]);
    return width == 2 ? c.mmu.read<u16>(lin) : width == 4 ? c.mmu.read<u32>(lin) : c.mmu.read<u64>(lin);
}

/// Far CALL on the current stack: pushes CS and the return offset (`width` bytes
/// each); a faulting push leaves rSP unchanged.
void push_return(Cpu& c, const Insn& i, unsigned width) {
    const u64 saved = c.gpr[RSP];
    try {
        for (u64 v : {u64(c.seg[CS].selector), i.next}) {
            if (width == 2) push<u16>(c, u16(v));
            else if (width == 4) push<u32>(c, u32(v));
            else push<u64>(c, v);
        }
    } catch (...) {
        c.gpr[RSP] = saved;
        throw;
    }
}

/// Loads CS for a transfer that keeps or sets privilege level `cpl`.
void commit_cs(Cpu& c, u16 sel, const Descriptor& d, unsigned cpl) {
    Descriptor dd = d;
    set_accessed(c, sel, dd);
    c.seg[CS] = to_cache(u16((sel & 0xFFFC) | cpl), dd);
    c.cpl = u8(cpl);
    c.update_mode();
}

/// Offset check against the new CS limit outside 64-bit code (#GP(0)).
void check_offset(const Cpu& c, const Descriptor& d, u64 off, bool ia32e_target) {
    if (ia32e_target) {
        if (!is_canonical(off)) raise_fault(vec::GP, 0);
    } else if (off > d.limit()) {
        raise_fault(vec::GP, 0);
    }
}

bool is_64bit_code(const Cpu& c, const Descriptor& d) { return c.long_mode() && (d.lo & (1ull << 53)); }

/// Real mode (and the CS part of real-mode IRET/RETF): CS = sel, base = sel * 16.
void real_far(Cpu& c, u16 sel, u64 off) {
    c.seg[CS].selector = sel;
    c.seg[CS].base = u64(sel) << 4;
    c.update_mode();
    c.rip = off;
}

/// Far JMP or CALL to sel:off (SDM Vol. 2, JMP and CALL, protected-mode Operation).
/// `width` is the operand size in bytes (the size of pushed CS:EIP for CALL).
void far_transfer(Cpu& c, const Insn& i, u16 sel, u64 off, unsigned width, bool call) {
    const u64 from = i.addr();
    if (!c.protected_mode()) {
        if (call) push_return(c, i, width);
        real_far(c, sel, off & kAddrMask[width]);
        c.branch(BranchKind::kFar, from, c.rip);
        return;
    }
    if ((sel & 0xFFFC) == 0) raise_fault(vec::GP, 0);
    Descriptor d = read_descriptor(c, sel);
    const unsigned rpl = sel & 3;
    if (d.is_code()) {
        const bool conforming = d.type() & seg_attr::kConforming;
        if (conforming ? d.dpl() > c.cpl : (rpl > c.cpl || d.dpl() != c.cpl)) raise_fault(vec::GP, sel_error(sel));
        if (!d.present()) raise_fault(vec::NP, sel_error(sel));
        const u64 target = is_64bit_code(c, d) ? off : off & kAddrMask[width == 8 ? 4 : width];
        check_offset(c, d, target, is_64bit_code(c, d));
        if (call) push_return(c, i, width);
        commit_cs(c, sel, d, c.cpl);
        c.rip = target;
        c.branch(BranchKind::kFar, from, target);
        return;
    }
    if (d.s()) raise_fault(vec::GP, sel_error(sel));
    const unsigned type = d.type();
    if (type == 5 || type == 1 || type == 9 || type == 3 || type == 11)
        throw UnsupportedFeature("far transfer through a task gate or TSS (task switching is not modelled)");
    const bool ia32e = c.long_mode();
    if (!(type == 0xC || (!ia32e && type == 0x4))) raise_fault(vec::GP, sel_error(sel));
    // Call gate (SDM Vol. 3, 5.8.4): DPL >= CPL and DPL >= RPL; 16 bytes in IA-32e mode.
    if (ia32e) d = read_descriptor(c, sel, true);
    if (d.dpl() < c.cpl || d.dpl() < rpl) raise_fault(vec::GP, sel_error(sel));
    if (!d.present()) raise_fault(vec::NP, sel_error(sel));
    const bool gate32 = type == 0xC;
    const u16 tsel = d.gate_selector();
    u64 target = ia32e ? d.gate_offset() : gate32 ? (d.gate_offset() & 0xFFFFFFFF) : (d.gate_offset() & 0xFFFF);
    if ((tsel & 0xFFFC) == 0) raise_fault(vec::GP, 0);
    Descriptor cd = read_descriptor(c, tsel);
    if (!cd.is_code() || cd.dpl() > c.cpl) raise_fault(vec::GP, sel_error(tsel));
    if (ia32e && (!(cd.lo & (1ull << 53)) || (cd.lo & (1ull << 54)))) raise_fault(vec::GP, sel_error(tsel));
    const bool conforming = cd.type() & seg_attr::kConforming;
    if (!call && !conforming && cd.dpl() != c.cpl) raise_fault(vec::GP, sel_error(tsel));
    if (!cd.present()) raise_fault(vec::NP, sel_error(tsel));
    check_offset(c, cd, target, ia32e);
    const unsigned gw = ia32e ? 8 : gate32 ? 4 : 2;
    if (call && !conforming && cd.dpl() < c.cpl) {
        // More privileged: switch to the TSS stack of the target DPL and copy
        // the gate's parameter count of stack words (none in IA-32e mode).
        const unsigned ncpl = cd.dpl();
        SegmentCache new_ss;
        FrameWriter ns{c, ncpl == 3, 0, ~0ull, 0};
        if (ia32e) {
            ns.sp = c.mmu.read_system<u64>(c.tr.base + 4 + ncpl * 8);
            new_ss = null_segment(u16(ncpl));
            new_ss.attr |= u32(ncpl) << seg_attr::kDplShift;
        } else {
            const u32 esp = c.mmu.read_system<u32>((c.tr.base + 4 + ncpl * 8) & c.lin_mask);
            const u16 ss_sel = c.mmu.read_system<u16>((c.tr.base + 8 + ncpl * 8) & c.lin_mask);
            if ((ss_sel & 0xFFFC) == 0) raise_fault(vec::TS, 0);
            Descriptor ssd = read_descriptor(c, ss_sel, false, vec::TS);
            if ((ss_sel & 3) != ncpl || ssd.dpl() != ncpl || !ssd.is_data() || !(ssd.type() & seg_attr::kWritable))
                raise_fault(vec::TS, sel_error(ss_sel));
            if (!ssd.present()) raise_fault(vec::SS, sel_error(ss_sel));
            new_ss = to_cache(ss_sel, ssd);
            ns.mask = (new_ss.attr & seg_attr::kDB) ? 0xFFFFFFFFull : 0xFFFF;
            ns.sp = esp & ns.mask;
            ns.base = new_ss.base;
            ns.ss = &new_ss;  // SDM Vol. 2, CALL: no room on the new stack -> #SS(SS selector)
            ns.ss_error = sel_error(ss_sel);
        }
        ns.push(gw, c.seg[SS].selector);
        ns.push(gw, c.gpr[RSP]);
        if (!ia32e) {
            const unsigned n = d.gate_params();
            for (unsigned k = n; k-- > 0;) ns.push(gw, stack_read(c, c.gpr[RSP] + k * gw, gw));
        }
        ns.push(gw, c.seg[CS].selector);
        ns.push(gw, i.next);
        c.seg[SS] = new_ss;
        c.gpr[RSP] = ia32e ? ns.sp : (c.gpr[RSP] & ~ns.mask) | ns.sp;
        commit_cs(c, tsel, cd, ncpl);
    } else {
        if (call) push_return(c, i, gw);
        commit_cs(c, tsel, cd, c.cpl);
    }
    c.rip = target;
    c.branch(BranchKind::kFar, from, target);
}

/// Far JMP/CALL ptr16:16/32 (imm = offset, aux16 in disp = selector) or m16:16/32/64.
template <bool Call, bool Mem>
void h_far(Cpu& c, const Insn& i) {
    u16 sel;
    u64 off;
    const unsigned w = i.osize;
    if constexpr (Mem) {
        const SegAddr a = linear(c, i);
        off = w == 2 ? c.mmu.read<u16>(a) : w == 4 ? c.mmu.read<u32>(a) : c.mmu.read<u64>(a);
        sel = c.mmu.read<u16>(a + w);
    } else {
        off = i.imm;
        sel = u16(i.aux | (i.rb << 8));
    }
    far_transfer(c, i, sel, off, w, Call);
}

template <bool Call>
bool bind_far(const DecodedInsn& d, Insn& out) {
    out.ends_block = true;
    out.osize = d.opsize;
    if (d.nops == 2 && is_imm(d.ops[0]) && is_imm(d.ops[1])) {
        const u16 sel = u16(d.ops[0].imm);
        out.aux = u8(sel);
        out.rb = u16(sel >> 8);
        out.imm = u64(d.ops[1].imm) & kAddrMask[d.opsize];
        out.fn = &h_far<Call, false>;
        return true;
    }
    if (d.nops == 1 && is_mem(d.ops[0])) {
        bind_mem(d, d.ops[0], out);
        out.fn = &h_far<Call, true>;
        return true;
    }
    return false;
}

/// Checks the code segment a RETF/IRET returns to (SDM Vol. 2, RET/IRET Operation).
Descriptor check_return_cs(Cpu& c, u16 sel) {
    if ((sel & 0xFFFC) == 0) raise_fault(vec::GP, 0);
    Descriptor d = read_descriptor(c, sel);
    const unsigned rpl = sel & 3;
    if (!d.is_code() || rpl < c.cpl) raise_fault(vec::GP, sel_error(sel));
    const bool conforming = d.type() & seg_attr::kConforming;
    if (conforming ? d.dpl() > rpl : d.dpl() != rpl) raise_fault(vec::GP, sel_error(sel));
    if (!d.present()) raise_fault(vec::NP, sel_error(sel));
    return d;
}

/// Checks the stack segment popped by a return to privilege `rpl`; a null SS is
/// allowed only when returning to 64-bit code at CPL < 3.
SegmentCache check_return_ss(Cpu& c, u16 sel, unsigned rpl, bool to64) {
    if ((sel & 0xFFFC) == 0) {
        if (!(to64 && rpl < 3 && (sel & 3) == rpl)) raise_fault(vec::GP, 0);
        SegmentCache s = null_segment(sel);
        s.attr |= u32(rpl) << seg_attr::kDplShift;
        return s;
    }
    Descriptor d = read_descriptor(c, sel);
    if ((sel & 3) != rpl || !d.is_data() || !(d.type() & seg_attr::kWritable) || d.dpl() != rpl)
        raise_fault(vec::GP, sel_error(sel));
    if (!d.present()) raise_fault(vec::SS, sel_error(sel));
    set_accessed(c, sel, d);
    return to_cache(sel, d);
}

/// RETF / RETF imm16 (SDM Vol. 2, RET, far return Operation). aux = operand size.
void h_retf(Cpu& c, const Insn& i) {
    const unsigned w = i.osize;
    const u64 sp = c.gpr[RSP];
    const u64 off = stack_read(c, sp, w);
    const u16 sel = u16(stack_read(c, sp + w, w));
    const u64 from = i.addr();
    const u64 mask = kAddrMask[c.stack_bytes];
    if (!c.protected_mode()) {
        c.gpr[RSP] = (sp & ~mask) | ((sp + 2 * w + i.imm) & mask);
        real_far(c, sel, off & kAddrMask[w]);
        c.branch(BranchKind::kFar, from, c.rip);
        return;
    }
    const Descriptor d = check_return_cs(c, sel);
    const unsigned rpl = sel & 3;
    const bool to64 = is_64bit_code(c, d);
    const u64 target = to64 ? off : off & kAddrMask[w == 8 ? 4 : w];
    check_offset(c, d, target, to64);
    if (rpl == c.cpl) {
        commit_cs(c, sel, d, rpl);
        c.gpr[RSP] = (sp & ~mask) | ((sp + 2 * w + i.imm) & mask);
    } else {
        // Return to an outer level: pop SS:rSP after the parameters.
        const u64 new_sp = stack_read(c, sp + 2 * w + i.imm, w);
        const u16 ss_sel = u16(stack_read(c, sp + 3 * w + i.imm, w));
        const SegmentCache ss = check_return_ss(c, ss_sel, rpl, to64);
        commit_cs(c, sel, d, rpl);
        c.seg[SS] = ss;
        c.update_mode();
        const u64 m2 = kAddrMask[c.stack_bytes];
        c.gpr[RSP] = c.in_64bit_mode() ? new_sp + i.imm : (c.gpr[RSP] & ~m2) | ((new_sp + i.imm) & m2);
        invalidate_outer_segments(c);
    }
    c.rip = target;
    c.branch(BranchKind::kFar, from, target);
}

/// RFLAGS after IRET (SDM Vol. 2, IRET): IOPL only at CPL 0, IF only when
/// CPL <= IOPL, VIF/VIP only at CPL 0; `cpl` is the privilege before the return.
u64 iret_flags(const Cpu& c, u64 popped, unsigned width, unsigned cpl) {
    u64 changeable = kArithFlags | kTF | kDF | kNT | kRF | kAC | kID | kIF | kIOPL | kVIF | kVIP;
    if (cpl > 0) changeable &= ~(kIOPL | kVIF | kVIP);
    if (cpl > c.iopl()) changeable &= ~kIF;
    if (width == 2) changeable &= 0xFFFF;
    return (c.rflags() & ~changeable) | (popped & changeable) | kFixed1;
}

/// IRET/IRETD/IRETQ (SDM Vol. 2, IRET). aux unused; osize = operand size.
void h_iret(Cpu& c, const Insn& i) {
    const unsigned w = i.osize;
    const u64 sp = c.gpr[RSP];
    const u64 from = i.addr();
    const u64 off = stack_read(c, sp, w);
    const u16 sel = u16(stack_read(c, sp + w, w));
    const u64 fl = stack_read(c, sp + 2 * w, w);
    const u64 mask = kAddrMask[c.stack_bytes];
    c.nmi_blocked = false;  // SDM Vol. 3, 6.7.1: IRET ends NMI blocking
    if (!c.protected_mode()) {
        // Real mode: all flags but VM, VIF, VIP (and the high word for a 16-bit IRET).
        const u64 keep = w == 2 ? ~0xFFFFull : (kVM | kVIF | kVIP | ~0x3FFFFFull);
        c.set_rflags(((c.rflags() & keep) | (fl & ~keep)) | kFixed1);
        c.gpr[RSP] = (sp & ~mask) | ((sp + 3 * w) & mask);
        real_far(c, sel, off & kAddrMask[w]);
        c.branch(BranchKind::kFar, from, c.rip);
        return;
    }
    if (c.rflags_other & kNT && !c.long_mode()) throw UnsupportedFeature("IRET with NT=1 (task return is not modelled)");
    if ((fl & kVM) && c.cpl == 0 && !c.long_mode()) throw UnsupportedFeature("IRET to virtual-8086 mode");
    const Descriptor d = check_return_cs(c, sel);
    const unsigned rpl = sel & 3;
    const bool to64 = is_64bit_code(c, d);
    const u64 target = to64 ? off : off & kAddrMask[w == 8 ? 4 : w];
    check_offset(c, d, target, to64);
    const unsigned old_cpl = c.cpl;
    const u64 new_flags = iret_flags(c, fl, w, old_cpl);
    if (rpl == c.cpl && !c.in_64bit_mode()) {
        commit_cs(c, sel, d, rpl);
        c.set_rflags(new_flags);
        c.gpr[RSP] = (sp & ~mask) | ((sp + 3 * w) & mask);
    } else {
        // Outer level, or any IRET in 64-bit mode: SS:rSP are popped too (SDM Vol. 3, 6.14.3).
        const u64 new_sp = stack_read(c, sp + 3 * w, w);
        const u16 ss_sel = u16(stack_read(c, sp + 4 * w, w));
        const SegmentCache ss = check_return_ss(c, ss_sel, rpl, to64);
        commit_cs(c, sel, d, rpl);
        c.seg[SS] = ss;
        c.set_rflags(new_flags);
        c.update_mode();
        c.gpr[RSP] = w == 2 ? (c.gpr[RSP] & ~0xFFFFull) | (new_sp & 0xFFFF) : new_sp;
        if (w == 4) c.gpr[RSP] = u32(new_sp);
        if (rpl > old_cpl) invalidate_outer_segments(c);
    }
    c.rip = target;
    c.pending |= kPendingModeChange;  // TF/IF may have changed
    c.branch(BranchKind::kFar, from, target);
}

/// INT n / INT3 / INTO / INT1: software interrupts and exceptions delivered with
/// RIP after the instruction (SDM Vol. 2, INT n/INTO/INT3/INT1). aux = vector.
template <EventSource S>
void h_int(Cpu& c, const Insn& i) {
    if (S == EventSource::kSoftwareException && i.aux == vec::OF && !c.lf.of()) {  // INTO, OF = 0: no-op
        return;
    }
    if ((c.rflags_other & kVM)) throw UnsupportedFeature("INT n in virtual-8086 mode");
    DeliveryRequest r;
    r.vector = i.aux;
    r.source = S;
    r.return_rip = i.next;
    deliver(c, r);
}

template <EventSource S, u8 Vector>
bool bind_int(const DecodedInsn& d, Insn& out) {
    out.aux = Vector;
    if (S == EventSource::kSoftwareInt) {
        if (d.nops != 1) return false;
        out.aux = u8(d.ops[0].imm);
    }
    out.fn = &h_int<S>;
    out.ends_block = true;
    return true;
}

/// A flat segment for the fast system calls (SDM Vol. 2, SYSCALL/SYSENTER Operation).
SegmentCache flat_segment(u16 sel, bool code, unsigned dpl, bool l64) {
    SegmentCache s;
    s.selector = sel;
    s.base = 0;
    s.limit = 0xFFFFFFFF;
    s.attr = seg_attr::kP | seg_attr::kS | seg_attr::kG | (u32(dpl) << seg_attr::kDplShift) | (code ? 0xB : 0x3);
    if (code && l64) s.attr |= seg_attr::kL;
    else s.attr |= seg_attr::kDB;
    return s;
}

/// SYSCALL (SDM Vol. 2): 64-bit mode with EFER.SCE, else #UD.
void h_syscall(Cpu& c, const Insn& i) {
    if (!c.in_64bit_mode() || !(c.efer & efer::kSCE)) raise_fault(vec::UD);
    const u64 from = i.addr();
    c.gpr[RCX] = i.next;
    c.gpr[R11] = c.rflags() & ~kRF;
    c.set_rflags((c.rflags() & ~c.sys.fmask & ~kRF) | kFixed1);
    const u16 sel = u16((c.sys.star >> 32) & 0xFFFC);
    c.seg[CS] = flat_segment(sel, true, 0, true);
    c.seg[SS] = flat_segment(u16(sel + 8), false, 0, false);
    c.cpl = 0;
    c.update_mode();
    c.rip = c.sys.lstar;
    c.branch(BranchKind::kFar, from, c.rip);
}

/// SYSRET (SDM Vol. 2): #UD without SCE/IA-32e; #GP(0) at CPL > 0 or, for a
/// return to 64-bit code, a non-canonical RCX (raised at CPL 0, as Intel does).
void h_sysret(Cpu& c, const Insn& i) {
    if (!c.in_64bit_mode() || !(c.efer & efer::kSCE)) raise_fault(vec::UD);
    if (c.cpl != 0) raise_fault(vec::GP, 0);
    const bool to64 = i.osize == 8;
    if (to64 && !is_canonical(c.gpr[RCX])) raise_fault(vec::GP, 0);
    const u64 from = i.addr();
    const u16 base = u16(c.sys.star >> 48);
    c.seg[CS] = flat_segment(u16((to64 ? base + 16 : base) | 3), true, 3, to64);
    c.seg[SS] = flat_segment(u16((base + 8) | 3), false, 3, false);
    c.set_rflags((c.gpr[R11] & 0x3C7FD7) | kFixed1);
    c.cpl = 3;
    c.rip = to64 ? c.gpr[RCX] : u32(c.gpr[RCX]);
    c.update_mode();
    c.branch(BranchKind::kFar, from, c.rip);
}

/// SYSENTER (SDM Vol. 2): #GP(0) in real mode or with a null IA32_SYSENTER_CS.
void h_sysenter(Cpu& c, const Insn& i) {
    if (!c.protected_mode() || (c.sys.sysenter_cs & 0xFFFC) == 0) raise_fault(vec::GP, 0);
    const u64 from = i.addr();
    const bool ia32e = c.long_mode();
    c.rflags_other &= ~(kVM | kIF | kRF);
    const u16 sel = u16(c.sys.sysenter_cs & 0xFFFC);
    c.seg[CS] = flat_segment(sel, true, 0, ia32e);
    c.seg[SS] = flat_segment(u16(sel + 8), false, 0, false);
    c.cpl = 0;
    c.gpr[RSP] = ia32e ? c.sys.sysenter_esp : u32(c.sys.sysenter_esp);
    c.rip = ia32e ? c.sys.sysenter_eip : u32(c.sys.sysenter_eip);
    c.update_mode();
    c.branch(BranchKind::kFar, from, c.rip);
}

/// SYSEXIT (SDM Vol. 2): to 64-bit code with REX.W, else to 32-bit code.
void h_sysexit(Cpu& c, const Insn& i) {
    if (!c.protected_mode() || (c.sys.sysenter_cs & 0xFFFC) == 0 || c.cpl != 0) raise_fault(vec::GP, 0);
    const bool to64 = i.osize == 8;
    if (to64 && (!is_canonical(c.gpr[RCX]) || !is_canonical(c.gpr[RDX]))) raise_fault(vec::GP, 0);
    const u64 from = i.addr();
    const u16 base = u16(c.sys.sysenter_cs);
    c.seg[CS] = flat_segment(u16((base + (to64 ? 32 : 16)) | 3), true, 3, to64);
    c.seg[SS] = flat_segment(u16((base + (to64 ? 40 : 24)) | 3), false, 3, false);
    c.cpl = 3;
    c.gpr[RSP] = to64 ? c.gpr[RCX] : u32(c.gpr[RCX]);
    c.rip = to64 ? c.gpr[RDX] : u32(c.gpr[RDX]);
    c.update_mode();
    c.branch(BranchKind::kFar, from, c.rip);
}

template <Handler H>
bool bind_sized_far(const DecodedInsn& d, Insn& out) {
    out.osize = d.opsize;
    out.imm = d.nops == 1 && is_imm(d.ops[0]) ? u64(d.ops[0].imm) & 0xFFFF : 0;
    out.fn = H;
    out.ends_block = true;
    return true;
}

}  // namespace

void register_far(BinderTable& t) {
    t.add(Op::LJMP, bind_far<false>);
    t.add(Op::LCALL, bind_far<true>);
    t.add(Op::RETF, bind_sized_far<h_retf>);
    t.add(Op::RETFQ, bind_sized_far<h_retf>);
    t.add(Op::IRET, bind_sized_far<h_iret>);
    t.add(Op::IRETD, bind_sized_far<h_iret>);
    t.add(Op::IRETQ, bind_sized_far<h_iret>);
    t.add(Op::INT, bind_int<EventSource::kSoftwareInt, 0>);
    t.add(Op::INT3, bind_int<EventSource::kSoftwareException, vec::BP>);
    t.add(Op::INTO, bind_int<EventSource::kSoftwareException, vec::OF>);
    t.add(Op::INT1, bind_int<EventSource::kIcebp, vec::DB>);
    t.add(Op::SYSCALL, bind_sized_far<h_syscall>);
    t.add(Op::SYSRET, bind_sized_far<h_sysret>);
    t.add(Op::SYSENTER, bind_sized_far<h_sysenter>);
    t.add(Op::SYSEXIT, bind_sized_far<h_sysexit>);
}

}  // namespace pmusim
