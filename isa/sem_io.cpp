// Port I/O: IN OUT INS OUTS with the I/O privilege and the TSS I/O permission
// bitmap (SDM Vol. 1, 19.5; Vol. 2, IN/OUT/INS/OUTS).
#include "isa/bind.h"
#include "sim/bus.h"

namespace pmusim {

namespace {

/// SDM Vol. 1, 19.5.2: in protected mode with CPL > IOPL, every bit for the ports
/// accessed must be 0 in the TSS I/O permission bitmap; a missing or truncated
/// bitmap, or a TR that is not a 32/64-bit TSS, means #GP(0).
void check_io(Cpu& c, u16 port, unsigned size) {
    if (!c.protected_mode() || c.cpl <= c.iopl()) return;
    const unsigned type = c.tr.attr & seg_attr::kTypeMask;
    if ((type != 9 && type != 11) || c.tr.limit < 0x67) raise_fault(vec::GP, 0);
    const u32 map = c.mmu.read_system<u16>((c.tr.base + 0x66) & c.lin_mask);
    const u32 off = map + port / 8;
    if (off + 1 > c.tr.limit) raise_fault(vec::GP, 0);
    const u16 bits = c.mmu.read_system<u16>((c.tr.base + off) & c.lin_mask);
    if ((bits >> (port & 7)) & ((1u << size) - 1)) raise_fault(vec::GP, 0);
}

/// aux = 1: port in DX, else in imm. IN writes AL/AX/EAX (EAX zero-extends into RAX).
template <class T>
void h_in(Cpu& c, const Insn& i) {
    const u16 port = i.aux ? u16(c.gpr[RDX]) : u16(i.imm);
    check_io(c, port, sizeof(T));
    reg_set<T>(c, 0, T(c.ports->read(port, sizeof(T))));
}
template <class T>
void h_out(Cpu& c, const Insn& i) {
    const u16 port = i.aux ? u16(c.gpr[RDX]) : u16(i.imm);
    check_io(c, port, sizeof(T));
    c.ports->write(port, sizeof(T), reg_get<T>(c, 0));
}

bool bind_in_out(const DecodedInsn& d, Insn& out, bool in) {
    if (d.nops != 2) return false;
    const DecodedOperand& acc = in ? d.ops[0] : d.ops[1];
    const DecodedOperand& port = in ? d.ops[1] : d.ops[0];
    if (is_imm(port)) out.imm = u64(port.imm) & 0xFF;
    else out.aux = 1;
    out.ends_block = !in;
    out.fn = pick_size(acc.size, [&](auto t) -> Handler {
        using T = decltype(t);
        if constexpr (sizeof(T) == 8) return nullptr;
        else return in ? &h_in<T> : &h_out<T>;
    });
    return out.fn != nullptr;
}
bool bind_in(const DecodedInsn& d, Insn& out) { return bind_in_out(d, out, true); }
bool bind_out(const DecodedInsn& d, Insn& out) { return bind_in_out(d, out, false); }

/// INS: ES:rDI <- port; OUTS: port <- seg:rSI. With REP, repeated rCX times.
template <class T, bool In>
void h_string_io(Cpu& c, const Insn& i) {
    const u8 as = i.asize;
    const u64 m = kAddrMask[as];
    const u16 port = u16(c.gpr[RDX]);
    check_io(c, port, sizeof(T));
    const bool rep = i.aux;
    while (!rep || (c.gpr[RCX] & m) != 0) {
        const u64 step = c.df() ? u64(-i64(sizeof(T))) : sizeof(T);
        if constexpr (In) {
            const u64 di = c.gpr[RDI] & m;
            const SegAddr lin = linear(c, ES, di);
            (void)c.mmu.read<T>(lin);  // the destination is checked before the port is read
            c.mmu.write<T>(lin, T(c.ports->read(port, sizeof(T))));
            set_index(c, RDI, di + step, as);
        } else {
            const u64 si = c.gpr[RSI] & m;
            c.ports->write(port, sizeof(T), c.mmu.read<T>(linear(c, i.seg, si)));
            set_index(c, RSI, si + step, as);
        }
        if (!rep) break;
        set_index(c, RCX, (c.gpr[RCX] & m) - 1, as);
    }
}

template <bool In, unsigned Size>
bool bind_string_io(const DecodedInsn& d, Insn& out) {
    out.seg = d.pfx.seg != kNoSeg ? d.pfx.seg : u8(DS);
    out.aux = (d.pfx.rep || d.pfx.repne) ? 1 : 0;
    out.ends_block = true;
    out.fn = pick_size(Size, [&](auto t) -> Handler {
        using T = decltype(t);
        if constexpr (sizeof(T) == 8) return nullptr;
        else return &h_string_io<T, In>;
    });
    return true;
}

}  // namespace

void register_io(BinderTable& t) {
    t.add(Op::IN, bind_in);
    t.add(Op::OUT, bind_out);
    t.add(Op::INSB, bind_string_io<true, 1>);
    t.add(Op::INSW, bind_string_io<true, 2>);
    t.add(Op::INSD, bind_string_io<true, 4>);
    t.add(Op::OUTSB, bind_string_io<false, 1>);
    t.add(Op::OUTSW, bind_string_io<false, 2>);
    t.add(Op::OUTSD, bind_string_io<false, 4>);
}

}  // namespace pmusim
