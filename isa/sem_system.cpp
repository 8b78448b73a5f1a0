// System instructions: MOV CRn/DRn, descriptor-table registers, LMSW/SMSW/CLTS,
// INVLPG/INVD/WBINVD, CPUID, RDMSR/WRMSR, RDTSC/RDTSCP/RDPMC, CLI/STI, SWAPGS,
// fences, CLFLUSH, WAIT. SDM Vol. 2 (instruction pages) and Vol. 3, ch. 2.
#include "isa/bind.h"
#include "sim/cpu_profile.h"
#include "sim/paging.h"
#include "sim/segmentation.h"

namespace pmusim {

namespace {

/// CPL 0 required, else #GP(0) (real mode runs at CPL 0).
inline void require_cpl0(const Cpu& c) {
    if (c.cpl != 0) raise_fault(vec::GP, 0);
}

void paging_changed(Cpu& c) {
    c.mmu.flush_tlb();
    c.pending |= kPendingPagingChange;
}

// ---- MOV CRn ---------------------------------------------------------------

/// MOV to CR0 (SDM Vol. 2, MOV-Move to/from Control Registers; Vol. 3, 2.5, 9.8.5).
void write_cr0(Cpu& c, u64 v) {
    if (v >> 32) raise_fault(vec::GP, 0);
    v |= cr0::kET;  // ET is hardwired to 1
    if ((v & cr0::kPG) && !(v & cr0::kPE)) raise_fault(vec::GP, 0);
    if ((v & cr0::kNW) && !(v & cr0::kCD)) raise_fault(vec::GP, 0);
    const bool pg_on = (v & cr0::kPG) && !(c.cr0 & cr0::kPG);
    const bool pg_off = !(v & cr0::kPG) && (c.cr0 & cr0::kPG);
    if (pg_off && c.in_64bit_mode()) raise_fault(vec::GP, 0);  // leave 64-bit mode first
    u64 new_efer = c.efer;
    if (pg_on && (c.efer & efer::kLME)) {
        // Activating IA-32e mode (SDM Vol. 3, 9.8.5): needs PAE and CS.L = 0.
        if (!(c.cr4 & cr4::kPAE) || (c.seg[CS].attr & seg_attr::kL)) raise_fault(vec::GP, 0);
        new_efer |= efer::kLMA;
    }
    if (pg_off) new_efer &= ~efer::kLMA;
    const u64 old = c.cr0;
    c.cr0 = v;
    c.efer = new_efer;
    if (pg_on && (c.cr4 & cr4::kPAE) && !(c.efer & efer::kLMA)) {
        try {
            load_pdptes(c, c.bus);
        } catch (...) {
            c.cr0 = old;
            throw;
        }
    }
    if ((old ^ v) & (cr0::kPG | cr0::kWP | cr0::kPE)) paging_changed(c);
    c.update_mode();
}

void write_cr3(Cpu& c, u64 v) {
    if (c.long_mode() && (v >> (c.profile ? c.profile->physical_address_bits : 36))) raise_fault(vec::GP, 0);
    const u64 old = c.cr3;
    c.cr3 = c.long_mode() ? v : (v & 0xFFFFFFFF);
    if ((c.cr0 & cr0::kPG) && (c.cr4 & cr4::kPAE) && !c.long_mode()) {
        try {
            load_pdptes(c, c.bus);
        } catch (...) {
            c.cr3 = old;
            throw;
        }
    }
    paging_changed(c);
}

/// CR4 bits the profile's CPUID enumerates (SDM Vol. 3, 2.5: setting a bit for an
/// unsupported feature raises #GP(0)). Bits pmusim does not implement at all
/// (OSXSAVE, PCIDE, LA57, SMAP, ...) are never allowed.
u64 cr4_allowed(const Cpu& c) {
    const CpuidLeaf l1 = c.profile->query(1, 0);
    const u32 max = c.profile->query(0, 0).eax;
    const CpuidLeaf l7 = max >= 7 ? c.profile->query(7, 0) : CpuidLeaf{};
    u64 ok = cr4::kTSD | cr4::kPCE;
    if (l1.edx & (1u << 1)) ok |= cr4::kVME | cr4::kPVI;
    if (l1.edx & (1u << 2)) ok |= cr4::kDE;
    if (l1.edx & (1u << 3)) ok |= cr4::kPSE;
    if (l1.edx & (1u << 6)) ok |= cr4::kPAE;
    if (l1.edx & (1u << 7)) ok |= cr4::kMCE;
    if (l1.edx & (1u << 13)) ok |= cr4::kPGE;
    if (l1.edx & (1u << 24)) ok |= cr4::kOSFXSR;
    if (l1.edx & (1u << 25)) ok |= cr4::kOSXMMEXCPT;
    if (l7.ebx & (1u << 0)) ok |= cr4::kFSGSBASE;
    if (l7.ebx & (1u << 7)) ok |= cr4::kSMEP;
    if (l7.ecx & (1u << 2)) ok |= cr4::kUMIP;
    return ok;
}

void write_cr4(Cpu& c, u64 v) {
    if (v & ~cr4_allowed(c)) raise_fault(vec::GP, 0);
    if (c.long_mode() && !(v & cr4::kPAE)) raise_fault(vec::GP, 0);  // SDM Vol. 2, MOV CR
    const u64 old = c.cr4;
    c.cr4 = v;
    if ((c.cr0 & cr0::kPG) && (v & cr4::kPAE) && !c.long_mode() && ((old ^ v) & (cr4::kPAE | cr4::kPSE | cr4::kPGE))) {
        try {
            load_pdptes(c, c.bus);
        } catch (...) {
            c.cr4 = old;
            throw;
        }
    }
    if ((old ^ v) & (cr4::kPAE | cr4::kPSE | cr4::kPGE | cr4::kSMEP)) paging_changed(c);
}

/// aux = CR number; ra = GPR; imm = 1 for a write (MOV CRn, r).
template <bool Write>
void h_mov_cr(Cpu& c, const Insn& i) {
    require_cpl0(c);
    const unsigned n = i.aux;
    const bool w64 = c.in_64bit_mode();
    if constexpr (Write) {
        const u64 v = w64 ? c.gpr[i.ra >> 3] : u32(c.gpr[i.ra >> 3]);
        switch (n) {
            case 0: write_cr0(c, v); break;
            case 2: c.cr2 = v; break;
            case 3: write_cr3(c, v); break;
            case 4: write_cr4(c, v); break;
            default:  // CR8: TPR bits 3:0 (SDM Vol. 3, 10.8.6.1)
                if (v >> 4) raise_fault(vec::GP, 0);
                c.cr8 = v;
                c.pending |= kPendingInterrupt;  // a lower priority may release a held vector
                break;
        }
    } else {
        const u64 v = n == 0 ? c.cr0 : n == 2 ? c.cr2 : n == 3 ? c.cr3 : n == 4 ? c.cr4 : c.cr8;
        c.gpr[i.ra >> 3] = w64 ? v : u32(v);
    }
}

bool bind_mov_cr(const DecodedInsn& d, Insn& out) {
    const bool write = d.ops[0].kind == DecodedOperand::kCtrl;
    const DecodedOperand& cr = write ? d.ops[0] : d.ops[1];
    const DecodedOperand& r = write ? d.ops[1] : d.ops[0];
    const unsigned n = cr.reg;
    if (n == 1 || (n >= 5 && n != 8) || n > 8 || (n == 8 && d.mode != CodeBits::k64)) return false;  // #UD
    out.aux = u8(n);
    out.ra = reg_off(r.reg);
    out.fn = write ? &h_mov_cr<true> : &h_mov_cr<false>;
    out.ends_block = write;
    return true;
}

// ---- MOV DRn (plumbing; the debug model gives DR0-DR7 their meaning) -----------

/// DR4/DR5 alias DR6/DR7 when CR4.DE = 0 and raise #UD when CR4.DE = 1 (SDM Vol. 3, 17.2.2).
inline unsigned dr_index(const Cpu& c, unsigned n) {
    if (n == 4 || n == 5) {
        if (c.cr4 & cr4::kDE) raise_fault(vec::UD);
        return n + 2;
    }
    return n;
}

template <bool Write>
void h_mov_dr(Cpu& c, const Insn& i) {
    const unsigned n = dr_index(c, i.aux);
    require_cpl0(c);
    const bool w64 = c.in_64bit_mode();
    if constexpr (Write) {
        u64 v = w64 ? c.gpr[i.ra >> 3] : u32(c.gpr[i.ra >> 3]);
        if (n >= 6 && (v >> 32)) raise_fault(vec::GP, 0);  // SDM Vol. 2, MOV DR: 64-bit mode
        // Reserved bits read as fixed values (SDM Vol. 3, 17.2.3, 17.2.4).
        if (n == 6) v = (v & 0x0000E00F) | 0xFFFF0FF0;
        if (n == 7) v = (v & 0xFFFF2BFF) | 0x400;
        if (n < 4 && !w64) v = u32(v);
        c.dr[n] = v;
    } else {
        c.gpr[i.ra >> 3] = w64 ? c.dr[n] : u32(c.dr[n]);
    }
}

bool bind_mov_dr(const DecodedInsn& d, Insn& out) {
    const bool write = d.ops[0].kind == DecodedOperand::kDebug;
    const DecodedOperand& dr = write ? d.ops[0] : d.ops[1];
    const DecodedOperand& r = write ? d.ops[1] : d.ops[0];
    if (dr.reg > 7) return false;  // DR8-DR15: #UD
    out.aux = dr.reg;
    out.ra = reg_off(r.reg);
    out.fn = write ? &h_mov_dr<true> : &h_mov_dr<false>;
    out.ends_block = write;
    return true;
}

// ---- Descriptor-table registers --------------------------------------------

/// LGDT/LIDT m16&32 (m16&64 in 64-bit mode); a 16-bit operand size loads 24 bits of base.
template <bool Idt>
void h_lgdt(Cpu& c, const Insn& i) {
    require_cpl0(c);
    const SegAddr a = linear(c, i);
    const u16 limit = c.mmu.read<u16>(a);
    u64 base;
    if (c.in_64bit_mode()) {
        base = c.mmu.read<u64>(a + 2);
        if (!is_canonical(base)) raise_fault(vec::GP, 0);
    } else {
        base = c.mmu.read<u32>(a + 2);
        if (i.osize == 2) base &= 0xFFFFFF;
    }
    TableRegister& t = Idt ? c.idtr : c.gdtr;
    t.base = base;
    t.limit = limit;
}

/// SGDT/SIDT: limit then base (8 bytes in 64-bit mode; 4 otherwise, with the
/// top byte zero for a 16-bit operand size on current processors).
template <bool Idt>
void h_sgdt(Cpu& c, const Insn& i) {
    if ((c.cr4 & cr4::kUMIP) && c.cpl > 0) raise_fault(vec::GP, 0);
    const TableRegister& t = Idt ? c.idtr : c.gdtr;
    const SegAddr a = linear(c, i);
    c.mmu.write<u16>(a, t.limit);
    if (c.in_64bit_mode()) c.mmu.write<u64>(a + 2, t.base);
    else c.mmu.write<u32>(a + 2, u32(i.osize == 2 ? t.base & 0xFFFFFF : t.base));
}

/// Reads the 16-bit selector operand of LLDT/LTR/LMSW (register or memory).
inline u16 read_sel_operand(Cpu& c, const Insn& i) {
    return i.aux ? c.mmu.read<u16>(linear(c, i)) : reg_get<u16>(c, i.ra);
}
/// Writes SLDT/STR/SMSW results: 16 bits to memory, operand size to a register.
inline void write_sel_operand(Cpu& c, const Insn& i, u64 v) {
    if (i.aux) return c.mmu.write<u16>(linear(c, i), u16(v));
    if (i.osize == 2) reg_set<u16>(c, i.ra, u16(v));
    else if (i.osize == 4) reg_set<u32>(c, i.ra, u32(v));
    else reg_set<u64>(c, i.ra, v);
}

/// LLDT (SDM Vol. 2, LLDT): a null selector makes LDTR unusable.
void h_lldt(Cpu& c, const Insn& i) {
    if (!c.protected_mode()) raise_fault(vec::UD);
    require_cpl0(c);
    const u16 sel = read_sel_operand(c, i);
    if ((sel & 0xFFFC) == 0) {
        c.ldtr = null_segment(sel);
        return;
    }
    if (sel & 4) raise_fault(vec::GP, sel_error(sel));
    const Descriptor d = read_descriptor(c, sel, c.long_mode());
    if (d.s() || d.type() != 2) raise_fault(vec::GP, sel_error(sel));
    if (!d.present()) raise_fault(vec::NP, sel_error(sel));
    c.ldtr = to_cache(sel, d);
    if (c.long_mode()) c.ldtr.base = d.system_base64();
}

/// LTR (SDM Vol. 2, LTR): loads an available TSS and marks it busy in the GDT.
void h_ltr(Cpu& c, const Insn& i) {
    if (!c.protected_mode()) raise_fault(vec::UD);
    require_cpl0(c);
    const u16 sel = read_sel_operand(c, i);
    if ((sel & 0xFFFC) == 0) raise_fault(vec::GP, 0);
    if (sel & 4) raise_fault(vec::GP, sel_error(sel));
    Descriptor d = read_descriptor(c, sel, c.long_mode());
    const bool ok = !d.s() && (d.type() == 9 || (!c.long_mode() && d.type() == 1));
    if (!ok) raise_fault(vec::GP, sel_error(sel));
    if (!d.present()) raise_fault(vec::NP, sel_error(sel));
    d.lo |= 2ull << 40;  // busy
    c.mmu.write_system<u8>((c.gdtr.base + (sel & 0xFFF8) + 5) & c.lin_mask, u8(d.lo >> 40));
    c.tr = to_cache(sel, d);
    if (c.long_mode()) c.tr.base = d.system_base64();
}

void h_sldt(Cpu& c, const Insn& i) {
    if (!c.protected_mode()) raise_fault(vec::UD);
    if ((c.cr4 & cr4::kUMIP) && c.cpl > 0) raise_fault(vec::GP, 0);
    write_sel_operand(c, i, c.ldtr.selector);
}
void h_str(Cpu& c, const Insn& i) {
    if (!c.protected_mode()) raise_fault(vec::UD);
    if ((c.cr4 & cr4::kUMIP) && c.cpl > 0) raise_fault(vec::GP, 0);
    write_sel_operand(c, i, c.tr.selector);
}

/// LMSW: loads CR0 bits 3:0 but cannot clear PE (SDM Vol. 2, LMSW).
void h_lmsw(Cpu& c, const Insn& i) {
    require_cpl0(c);
    const u16 v = read_sel_operand(c, i);
    write_cr0(c, (c.cr0 & ~0xEull) | (v & 0xF) | (c.cr0 & cr0::kPE));
}
void h_smsw(Cpu& c, const Insn& i) {
    if ((c.cr4 & cr4::kUMIP) && c.cpl > 0) raise_fault(vec::GP, 0);
    write_sel_operand(c, i, c.cr0);
}
void h_clts(Cpu& c, const Insn&) {
    require_cpl0(c);
    c.cr0 &= ~cr0::kTS;
}

/// Binds a one-operand r/m16 system instruction; aux = 1 for a memory operand.
template <Handler H, bool Ends = false>
bool bind_rm16(const DecodedInsn& d, Insn& out) {
    if (d.nops != 1) return false;
    if (is_mem(d.ops[0])) {
        bind_mem(d, d.ops[0], out);
        out.aux = 1;
    } else if (is_reg(d.ops[0])) {
        out.ra = reg_off(d.ops[0].reg);
    } else {
        return false;
    }
    out.osize = is_reg(d.ops[0]) ? d.ops[0].size : 2;
    out.fn = H;
    out.ends_block = Ends;
    return true;
}

template <Handler H>
bool bind_m(const DecodedInsn& d, Insn& out) {
    if (d.nops != 1 || !is_mem(d.ops[0])) return false;
    bind_mem(d, d.ops[0], out);
    out.fn = H;
    return true;
}

void h_invlpg(Cpu& c, const Insn& i) {
    require_cpl0(c);
    c.mmu.flush_page(linear(c, i).lin);
    c.pending |= kPendingPagingChange;  // decoded blocks are keyed by linear address
}
void h_cpl0_nop(Cpu& c, const Insn&) { require_cpl0(c); }  // INVD, WBINVD: caches are not modelled

// ---- CPUID, MSRs, time stamp and performance counters -----------------------

void h_cpuid(Cpu& c, const Insn&) {
    const CpuidLeaf l = c.profile->query(u32(c.gpr[RAX]), u32(c.gpr[RCX]));
    c.gpr[RAX] = l.eax;
    c.gpr[RBX] = l.ebx;
    c.gpr[RCX] = l.ecx;
    c.gpr[RDX] = l.edx;
}

void emit_msr(Cpu& c, const Insn& i, u32 msr, u64 value, bool write) {
    if (!c.events.wants(EventKind::kMsrAccess)) return;
    Event e;
    e.kind = EventKind::kMsrAccess;
    e.rip = i.addr();
    e.msr = msr;
    e.value = value;
    e.write = write;
    c.events.emit(e);
}

void h_rdmsr(Cpu& c, const Insn& i) {
    require_cpl0(c);
    const u32 msr = u32(c.gpr[RCX]);
    const u64 v = c.msrs.read(msr);
    c.gpr[RAX] = u32(v);
    c.gpr[RDX] = v >> 32;
    emit_msr(c, i, msr, v, false);
}
void h_wrmsr(Cpu& c, const Insn& i) {
    require_cpl0(c);
    const u32 msr = u32(c.gpr[RCX]);
    const u64 v = (c.gpr[RDX] << 32) | u32(c.gpr[RAX]);
    c.msrs.write(msr, v);
    emit_msr(c, i, msr, v, true);
}

/// RDTSC/RDTSCP: #GP(0) at CPL > 0 with CR4.TSD (SDM Vol. 2, RDTSC); the value comes
/// from IA32_TIME_STAMP_COUNTER on the MSR bus (owned by the TSC model).
template <bool P>
void h_rdtsc(Cpu& c, const Insn&) {
    if ((c.cr4 & cr4::kTSD) && c.cpl > 0 && c.protected_mode()) raise_fault(vec::GP, 0);
    const u64 t = c.msrs.read(0x10);
    c.gpr[RAX] = u32(t);
    c.gpr[RDX] = t >> 32;
    if constexpr (P) c.gpr[RCX] = u32(c.msrs.read(0xC0000103));  // IA32_TSC_AUX
}

/// RDPMC: CR4.PCE gates CPL > 0; the PMU model validates ECX (SDM Vol. 2, RDPMC).
void h_rdpmc(Cpu& c, const Insn&) {
    if (!(c.cr4 & cr4::kPCE) && c.cpl > 0 && c.protected_mode()) raise_fault(vec::GP, 0);
    if (!c.rdpmc) raise_fault(vec::GP, 0);
    const u64 v = c.rdpmc(u32(c.gpr[RCX]));
    c.gpr[RAX] = u32(v);
    c.gpr[RDX] = u32(v >> 32);
}

// ---- Interrupt flag -----------------------------------------------------------

/// CLI/STI outside virtual-8086 mode: allowed when CPL <= IOPL, else #GP(0)
/// (SDM Vol. 2, CLI/STI; the VME/PVI variants are not modelled).
void h_cli(Cpu& c, const Insn& i) {
    if (c.protected_mode() && c.cpl > c.iopl()) raise_fault(vec::GP, 0);
    c.rflags_other &= ~kIF;
}
/// STI: if IF was 0, interrupts stay blocked until after the next instruction (SDM Vol. 2, STI).
void h_sti(Cpu& c, const Insn& i) {
    if (c.protected_mode() && c.cpl > c.iopl()) raise_fault(vec::GP, 0);
    if (!(c.rflags_other & kIF)) c.pending |= kPendingShadow;
    c.rflags_other |= kIF;
}

/// SWAPGS: 64-bit mode only (#UD), CPL 0 (#GP(0)) (SDM Vol. 2, SWAPGS).
void h_swapgs(Cpu& c, const Insn&) {
    if (!c.in_64bit_mode()) raise_fault(vec::UD);
    require_cpl0(c);
    std::swap(c.seg[GS].base, c.sys.kernel_gs_base);
    c.seg_base[GS] = c.seg[GS].base;
}

/// CLFLUSH: no caches are modelled, but the access is checked like a read
/// (SDM Vol. 2, CLFLUSH: #GP/#SS/#PF as a byte load).
void h_clflush(Cpu& c, const Insn& i) { (void)c.mmu.read<u8>(linear(c, i)); }

/// WAIT/FWAIT: #NM when CR0.MP and CR0.TS are set; x87 exceptions are not modelled.
void h_wait(Cpu& c, const Insn&) {
    if ((c.cr0 & cr0::kMP) && (c.cr0 & cr0::kTS)) raise_fault(vec::NM);
}

}  // namespace

void register_system(BinderTable& t) {
    t.add(Op::kMovCr, bind_mov_cr);
    t.add(Op::kMovDr, bind_mov_dr);
    t.add(Op::LGDT, bind_m<&h_lgdt<false>>);
    t.add(Op::LIDT, bind_m<&h_lgdt<true>>);
    t.add(Op::SGDT, bind_m<&h_sgdt<false>>);
    t.add(Op::SIDT, bind_m<&h_sgdt<true>>);
    t.add(Op::LLDT, bind_rm16<h_lldt>);
    t.add(Op::LTR, bind_rm16<h_ltr>);
    t.add(Op::SLDT, bind_rm16<h_sldt>);
    t.add(Op::STR, bind_rm16<h_str>);
    t.add(Op::LMSW, bind_rm16<h_lmsw, true>);
    t.add(Op::SMSW, bind_rm16<h_smsw>);
    t.add(Op::CLTS, bind_fixed<h_clts>);
    t.add(Op::INVLPG, [](const DecodedInsn& d, Insn& out) {
        if (!bind_m<h_invlpg>(d, out)) return false;
        out.ends_block = true;
        return true;
    });
    t.add(Op::INVD, bind_fixed<h_cpl0_nop>);
    t.add(Op::WBINVD, bind_fixed<h_cpl0_nop>);
    t.add(Op::CPUID, bind_fixed<h_cpuid>);
    t.add(Op::RDMSR, bind_fixed<h_rdmsr>);
    t.add(Op::WRMSR, bind_fixed<h_wrmsr, true>);
    t.add(Op::RDTSC, bind_fixed<&h_rdtsc<false>>);
    t.add(Op::RDTSCP, bind_fixed<&h_rdtsc<true>>);
    t.add(Op::RDPMC, bind_fixed<h_rdpmc>);
    t.add(Op::CLI, bind_fixed<h_cli, true>);
    t.add(Op::STI, bind_fixed<h_sti, true>);
    t.add(Op::SWAPGS, bind_fixed<h_swapgs>);
    t.add(Op::CLFLUSH, bind_m<h_clflush>);
    t.add(Op::WAIT, bind_fixed<h_wait>);
}

}  // namespace pmusim
