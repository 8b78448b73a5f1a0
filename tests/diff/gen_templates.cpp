// The instruction templates of the generator: one function per instruction family,
// each emitting one instruction (plus any set-up it needs) at the current position.
// Operand forms follow the SDM Vol. 2 opcode tables; flag effects come from flag_rules.h.
#include <algorithm>

#include "tests/diff/generator.h"
#include "tests/diff/known_defects.h"

namespace diff {

// ---- integer arithmetic and logic ---------------------------------------------

namespace {
const Mn kAluMn[8] = {Mn::ADD, Mn::OR, Mn::ADC, Mn::SBB, Mn::AND, Mn::SUB, Mn::XOR, Mn::CMP};
}

void Generator::g_alu() { alu(unsigned(rng_.below(8)), pick_size(), unsigned(rng_.below(5))); }

/// ADD OR ADC SBB AND SUB XOR CMP (opcode `op` 0..7) in form 0: r/m,r  1: r,r/m
/// 2: r/m,imm (80/81)  3: r/m,imm8 (83)  4: AL/eAX,imm.
void Generator::alu(unsigned op, unsigned size, unsigned form) {
    if (op == 2 || op == 3) ensure_flags(kCF);  // ADC/SBB read CF
    const bool writes = op != 7;
    if (form == 3 && size == 1) form = 2;
    const unsigned isz = size < 4 ? size : 4;
    Enc e;
    do {
        e = Enc{};
        size_prefix(e, size);
        const u8 base = u8(op * 8), w = size == 1 ? 0 : 1;
        e.has_modrm = form < 4;
        switch (form) {
            case 0:
                e.opcode = {u8(base + w)};
                e.rm = rm_operand(size, writes);
                e.reg = pick_reg(size, false);
                break;
            case 1:
                e.opcode = {u8(base + 2 + w)};
                e.reg = pick_reg(size, writes);
                e.rm = rm_operand(size, false);
                break;
            case 2:
                e.opcode = {u8(0x80 + w)};
                e.reg.num = u8(op);
                e.rm = rm_operand(size, writes);
                e.add_imm(rng_.value(isz), isz);
                break;
            case 3:
                e.opcode = {0x83};
                e.reg.num = u8(op);
                e.rm = rm_operand(size, writes);
                e.add_imm(rng_.value(1), 1);
                break;
            default:
                e.opcode = {u8(base + 4 + w)};
                e.add_imm(rng_.value(isz), isz);
                break;
        }
        mem_prefixes(e);
    } while (!e.valid(bits_));
    // LOCK is allowed with a memory destination (SDM Vol. 2A, LOCK).
    if (writes && form != 1 && e.has_modrm && e.rm.is_mem && rng_.chance(10)) e.prefixes.insert(e.prefixes.begin(), 0xF0);
    exec(e, Fx::of(kAluMn[op]));
}

void Generator::g_test() {
    const unsigned size = pick_size(), isz = size < 4 ? size : 4, form = unsigned(rng_.below(3));
    Enc e;
    do {
        e = Enc{};
        size_prefix(e, size);
        const u8 w = size == 1 ? 0 : 1;
        if (form == 0) {
            e.opcode = {u8(0x84 + w)};  // TEST r/m, r
            e.has_modrm = true;
            e.rm = rm_operand(size, false);
            e.reg = pick_reg(size, false);
        } else if (form == 1) {
            e.opcode = {u8(0xA8 + w)};  // TEST AL/eAX, imm
            e.add_imm(rng_.value(isz), isz);
        } else {
            e.opcode = {u8(0xF6 + w)};  // TEST r/m, imm (F6/F7 /0)
            e.has_modrm = true;
            e.rm = rm_operand(size, false);
            e.add_imm(rng_.value(isz), isz);
        }
        mem_prefixes(e);
    } while (!e.valid(bits_));
    exec(e, Fx::of(Mn::TEST));
}

/// NOT NEG (F6/F7 /2 /3), INC DEC (FE/FF /0 /1; 40+r / 48+r in 32-bit code).
void Generator::g_unary() {
    const unsigned which = unsigned(rng_.below(4));
    static const u8 kDigit[4] = {2, 3, 0, 1};
    const Fx fx = which == 0 ? Fx::none() : Fx::of(which == 1 ? Mn::NEG : which == 2 ? Mn::INC : Mn::DEC);
    const unsigned size = pick_size();
    if (which >= 2 && bits_ == 32 && size > 1 && rng_.chance(30)) {
        Enc e;
        size_prefix(e, size);
        e.opcode = {u8(which == 2 ? 0x40 : 0x48)};
        e.has_opreg = true;
        e.opreg = pick_reg(size, true);
        exec(e, fx);
        return;
    }
    Enc e;
    do {
        e = Enc{};
        size_prefix(e, size);
        e.opcode = {u8(which < 2 ? (size == 1 ? 0xF6 : 0xF7) : (size == 1 ? 0xFE : 0xFF))};
        e.has_modrm = true;
        e.reg.num = kDigit[which];
        e.rm = rm_operand(size, true);
        mem_prefixes(e);
    } while (!e.valid(bits_));
    if (e.rm.is_mem && which != 1 && rng_.chance(10))  // UcDefect::kLockNegFlags: no LOCK NEG
        e.prefixes.insert(e.prefixes.begin(), 0xF0);
    exec(e, fx);
}

/// MUL / one-operand IMUL (F6/F7 /4 /5): rDX:rAX = rAX * r/m.
void Generator::g_mul() {
    const bool sgn = rng_.chance(50);
    const unsigned size = pick_size();
    Enc e;
    do {
        e = Enc{};
        size_prefix(e, size);
        e.opcode = {u8(size == 1 ? 0xF6 : 0xF7)};
        e.has_modrm = true;
        e.reg.num = sgn ? 5 : 4;
        e.rm = rm_operand(size, false);
        mem_prefixes(e);
    } while (!e.valid(bits_));
    exec(e, Fx::of(sgn ? Mn::IMUL : Mn::MUL));
}

/// IMUL r, r/m (0F AF); IMUL r, r/m, imm8 (6B); IMUL r, r/m, imm (69).
void Generator::g_imul() {
    const unsigned size = pick_size(false), form = unsigned(rng_.below(3));
    Enc e;
    do {
        e = Enc{};
        size_prefix(e, size);
        e.has_modrm = true;
        e.reg = pick_reg(size, true);
        e.rm = rm_operand(size, false);
        if (form == 0) {
            e.opcode = {0x0F, 0xAF};
        } else if (form == 1) {
            e.opcode = {0x6B};
            e.add_imm(rng_.value(1), 1);
        } else {
            e.opcode = {0x69};
            const unsigned isz = size < 4 ? size : 4;
            e.add_imm(rng_.value(isz), isz);
        }
        mem_prefixes(e);
    } while (!e.valid(bits_));
    exec(e, Fx::of(Mn::IMUL));
}

/// DIV / IDIV (F6/F7 /6 /7). Usually preceded by a zero/sign extension of the
/// dividend so the quotient fits; a division that would still raise #DE (zero
/// divisor, quotient too large) is dropped (SDM Vol. 2A DIV/IDIV, Exceptions).
void Generator::g_div() {
    const bool sgn = rng_.chance(50);
    const unsigned size = pick_size();
    if (rng_.chance(75)) {
        if (!sgn) {
            if (size == 1) exec_bytes({0xB4, 0x00}, Fx::none(), false, false);  // MOV AH, 0
            else set_reg(kRDX, 0, 4);
        } else if (size == 1) {
            exec_bytes({0x66, 0x98}, Fx::none(), false, false);  // CBW
        } else {
            std::vector<u8> b;  // CWD / CDQ / CQO
            if (size == 2) b.push_back(0x66);
            if (size == 8) b.push_back(0x48);
            b.push_back(0x99);
            exec_bytes(b, Fx::none(), false, false);
        }
    }
    Enc e;
    do {
        e = Enc{};
        size_prefix(e, size);
        e.opcode = {u8(size == 1 ? 0xF6 : 0xF7)};
        e.has_modrm = true;
        e.reg.num = sgn ? 7 : 6;
        e.rm = rm_operand(size, false);
        mem_prefixes(e);
    } while (!e.valid(bits_));
    if (!exec(e, Fx::of(sgn ? Mn::IDIV : Mn::DIV), false, /*may_fault=*/true)) ++dropped_div_;
}

// ---- shifts and rotates -------------------------------------------------------

/// ROL ROR RCL RCR SHL SHR SAR by imm8 (C0/C1), 1 (D0/D1) or CL (D2/D3).
void Generator::g_shift() {
    static const u8 kDigit[] = {0, 1, 2, 3, 4, 5, 7};
    static const Mn kMn[8] = {Mn::ROL, Mn::ROR, Mn::RCL, Mn::RCR, Mn::SHL, Mn::SHR, Mn::SHL, Mn::SAR};
    const u8 digit = rng_.pick(kDigit);
    const unsigned size = pick_size(), w = size * 8, form = unsigned(rng_.below(3));
    if (digit == 2 || digit == 3) ensure_flags(kCF);  // RCL/RCR read CF
    if (form == 2 && rng_.chance(40)) set_reg(kRCX, count_value(w), 1);
    Enc e;
    u64 count = 0;
    do {
        e = Enc{};
        size_prefix(e, size);
        e.has_modrm = true;
        e.reg.num = digit;
        e.rm = rm_operand(size, true);
        const u8 wb = size == 1 ? 0 : 1;
        if (form == 0) {
            e.opcode = {u8(0xC0 + wb)};
            count = count_value(w);
            e.add_imm(count, 1);
        } else if (form == 1) {
            e.opcode = {u8(0xD0 + wb)};
            count = 1;
        } else {
            e.opcode = {u8(0xD2 + wb)};
            count = reg(kRCX) & 0xFF;
        }
        mem_prefixes(e);
    } while (!e.valid(bits_));
    const unsigned n = unsigned(count) & (size == 8 ? 63 : 31);  // count masked to 5/6 bits
    exec(e, shift_rule(kMn[digit], n, w));
}

/// SHLD / SHRD r/m, r, imm8 | CL. 16-bit counts above 16 are undefined (SDM Vol. 2B
/// SHLD/SHRD) and never generated.
void Generator::g_shxd() {
    const bool left = rng_.chance(50), by_cl = rng_.chance(50);
    const unsigned size = pick_size(false), w = size * 8, cmask = size == 8 ? 63 : 31;
    if (by_cl && (rng_.chance(40) || (size == 2 && (reg(kRCX) & 31) > 16)))
        set_reg(kRCX, size == 2 ? rng_.below(17) : count_value(w), 1);
    Enc e;
    u64 count = 0;
    do {
        e = Enc{};
        size_prefix(e, size);
        e.has_modrm = true;
        e.rm = rm_operand(size, true);
        e.reg = pick_reg(size, false);
        if (by_cl) {
            e.opcode = {0x0F, u8(left ? 0xA5 : 0xAD)};
            count = reg(kRCX) & 0xFF;
        } else {
            e.opcode = {0x0F, u8(left ? 0xA4 : 0xAC)};
            do count = count_value(w); while (size == 2 && (count & 31) > 16);
            e.add_imm(count, 1);
            while (e.rm.is_mem && e.rm.mem.rip)  // UcDefect::kShxdImmRipRelative
                e.rm.mem = mem_for(e.rm.mem.addr, e.rm.mem.asize);
        }
        mem_prefixes(e);
    } while (!e.valid(bits_));
    exec(e, shift_rule(left ? Mn::SHLD : Mn::SHRD, unsigned(count) & cmask, w));
}

// ---- bit instructions ---------------------------------------------------------

/// BT BTS BTR BTC r/m, r (0F A3/AB/B3/BB) and r/m, imm8 (0F BA /4-7). With a
/// register offset and a memory operand the offset selects the operand-size unit
/// at EA + (offset SAR log2(w)) * size (SDM Vol. 2A BT), which must stay in range.
void Generator::g_bt() {
    static const Mn kMn[4] = {Mn::BT, Mn::BTS, Mn::BTR, Mn::BTC};
    static const u8 kOpc[4] = {0xA3, 0xAB, 0xB3, 0xBB};
    const unsigned kind = unsigned(rng_.below(4)), size = pick_size(false), w = size * 8;
    const bool writes = kind != 0, imm = rng_.chance(40), mem = rng_.chance(50);
    Enc e;
    do {
        e = Enc{};
        size_prefix(e, size);
        e.has_modrm = true;
        if (imm) {
            e.opcode = {0x0F, 0xBA};
            e.reg.num = u8(4 + kind);
            e.rm = rm_operand(size, writes);
            e.add_imm(rng_.below(256), 1);
        } else {
            e.opcode = {0x0F, kOpc[kind]};
            e.reg = pick_reg(size, mem);  // a memory form may rewrite the offset register (never rSP)
            if (!mem) {
                e.rm.reg = pick_reg(size, writes);
            } else {
                i64 off = sext(reg(e.reg.num), size);
                if (off < -512 || off > 2047) {
                    set_reg(e.reg.num, u64(rng_.range(-256, 1023)) & mask_of(size), size == 2 ? 2 : 4 + 4 * (size == 8));
                    off = sext(reg(e.reg.num), size);
                }
                const u64 delta = u64((off >> __builtin_ctz(w)) * i64(size));
                const u8 as = pick_asize();
                const u64 t = pick_target(size, writes);
                e.rm.is_mem = true;
                e.rm.mem = mem_for((t - delta) & mask_of(as), as);
                e.rm.mem.addr = t;
            }
        }
        mem_prefixes(e);
    } while (!e.valid(bits_));
    if (writes && e.rm.is_mem && rng_.chance(10)) e.prefixes.insert(e.prefixes.begin(), 0xF0);
    exec(e, Fx::of(kMn[kind]));
}

/// BSF BSR (0F BC/BD), TZCNT LZCNT (F3 0F BC/BD). POPCNT is not generated
/// (UcDefect::kPopcntUndefined). A zero source leaves BSF/BSR's destination
/// undefined: it is marked so and overwritten right after.
void Generator::g_bitscan() {
    static const Mn kMn[4] = {Mn::BSF, Mn::BSR, Mn::TZCNT, Mn::LZCNT};
    const unsigned kind = unsigned(rng_.below(4)), size = pick_size(false);
    Enc e;
    do {
        e = Enc{};
        size_prefix(e, size);
        e.has_modrm = true;
        e.opcode = {0x0F, u8(kind & 1 ? 0xBD : 0xBC)};
        e.reg = pick_reg(size, true);
        e.rm = rm_operand(size, false);
        mem_prefixes(e);
        if (kind >= 2) {
            e.prefixes.push_back(0xF3);  // mandatory prefix, kept next to the opcode
            e.mandatory_prefix = true;
        }
    } while (!e.valid(bits_));
    Fx fx = Fx::of(kMn[kind]);
    const bool undefined_dest = kind < 2 && operand_value(e.rm, size) == 0;
    if (undefined_dest) fx.undef_reg = e.reg.num;
    exec(e, fx);
    if (undefined_dest) set_reg(e.reg.num, rng_.value(4), 4);
}

// ---- data movement ------------------------------------------------------------

/// MOV: 88/89 r/m,r  8A/8B r,r/m  C6/C7 r/m,imm  B0+r/B8+r r,imm (REX.W B8: imm64)
/// A0-A3 AL/eAX <-> moffs.
void Generator::g_mov() {
    const unsigned size = pick_size(), form = unsigned(rng_.below(6));
    const u8 w = size == 1 ? 0 : 1;
    Enc e;
    do {
        e = Enc{};
        size_prefix(e, size);
        switch (form) {
            case 0:
                e.opcode = {u8(0x88 + w)};
                e.has_modrm = true;
                e.rm = rm_operand(size, true);
                e.reg = pick_reg(size, false);
                break;
            case 1: case 5:
                e.opcode = {u8(0x8A + w)};
                e.has_modrm = true;
                e.reg = pick_reg(size, true);
                e.rm = rm_operand(size, false, 60);
                break;
            case 2:
                e.opcode = {u8(0xC6 + w)};
                e.has_modrm = true;
                e.rm = rm_operand(size, true);
                e.add_imm(rng_.value(size < 4 ? size : 4), size < 4 ? size : 4);
                break;
            case 3:
                e.opcode = {u8(size == 1 ? 0xB0 : 0xB8)};
                e.has_opreg = true;
                e.opreg = pick_reg(size, true);
                e.add_imm(rng_.value(size), size);
                break;
            default: {
                const bool store = rng_.chance(50);
                const u8 as = pick_asize();
                e.opcode = {u8(0xA0 + (store ? 2 : 0) + w)};
                if (as != (bits_ == 64 ? 8 : 4)) e.prefixes.push_back(0x67);
                e.add_imm(pick_target(size, store), as);
                break;
            }
        }
        mem_prefixes(e);
    } while (!e.valid(bits_));
    exec(e, Fx::none());
}

/// MOVZX / MOVSX r, r/m8 | r/m16 (0F B6/B7/BE/BF); MOVSXD r64, r/m32 (REX.W 63)
/// and its non-REX.W form, a 32-bit move (SDM Vol. 2B MOVSX/MOVSXD).
void Generator::g_movx() {
    unsigned kind = unsigned(rng_.below(bits_ == 64 ? 5 : 4));
    unsigned dsize, ssize;
    if (kind == 4) {
        dsize = rng_.chance(85) ? 8 : 4;
        ssize = 4;
    } else {
        ssize = kind & 1 ? 2 : 1;
        do dsize = pick_size(false); while (ssize == 2 && dsize == 2);
    }
    Enc e;
    do {
        e = Enc{};
        size_prefix(e, dsize);
        e.opcode = kind == 4 ? std::vector<u8>{0x63} : std::vector<u8>{0x0F, u8((kind < 2 ? 0xB6 : 0xBE) + (kind & 1))};
        e.has_modrm = true;
        e.reg = pick_reg(dsize, true);
        e.rm = rm_operand(ssize, false);
        mem_prefixes(e);
    } while (!e.valid(bits_));
    exec(e, Fx::none());
}

void Generator::g_lea() {
    const unsigned size = pick_size(false);
    Enc e;
    do {
        e = Enc{};
        size_prefix(e, size);
        e.opcode = {0x8D};
        e.has_modrm = true;
        e.reg = pick_reg(size, true);
        e.rm.is_mem = true;
        e.rm.mem = random_mem(pick_asize());
        mem_prefixes(e);
    } while (!e.valid(bits_));
    exec(e, Fx::none());
}

/// XCHG r/m, r (86/87) and XCHG eAX, r (90+r; 90 itself is NOP).
void Generator::g_xchg() {
    const unsigned size = pick_size();
    Enc e;
    do {
        e = Enc{};
        size_prefix(e, size);
        if (size > 1 && rng_.chance(30)) {
            e.opcode = {0x90};
            e.has_opreg = true;
            do e.opreg = pick_reg(size, true); while (e.opreg.num == 0);
        } else {
            e.opcode = {u8(size == 1 ? 0x86 : 0x87)};
            e.has_modrm = true;
            e.rm = rm_operand(size, true);
            e.reg = pick_reg(size, true);
        }
        mem_prefixes(e);
    } while (!e.valid(bits_));
    if (e.has_modrm && e.rm.is_mem && rng_.chance(10)) e.prefixes.insert(e.prefixes.begin(), 0xF0);
    exec(e, Fx::none());
}

/// XADD r/m, r (0F C0/C1) and CMPXCHG r/m, r (0F B0/B1); for CMPXCHG the
/// accumulator is often made equal to the destination first, so both outcomes occur.
void Generator::g_xadd_cmpxchg() {
    const bool xadd = rng_.chance(50);
    const unsigned size = pick_size();
    Enc e;
    do {
        e = Enc{};
        size_prefix(e, size);
        e.opcode = {0x0F, u8((xadd ? 0xC0 : 0xB0) + (size == 1 ? 0 : 1))};
        e.has_modrm = true;
        e.rm = rm_operand(size, true);
        e.reg = pick_reg(size, xadd);
        mem_prefixes(e);
    } while (!e.valid(bits_));
    const size_t before = path_.size();
    if (!xadd && rng_.chance(35)) set_reg(kRAX, operand_value(e.rm, size), size);
    if (!xadd && bits_ == 64 && size == 4) {  // UcDefect::kCmpxchgZeroExtend
        for (const u8 r : {e.rm.is_mem ? u8(kRAX) : e.rm.reg.num, u8(kRAX)}) {
            if (reg(r) >> 32 == 0) continue;
            Enc z;  // MOV r32, r32: clears bits 63:32
            z.opcode = {0x8B};
            z.has_modrm = true;
            z.reg = Reg{r};
            z.rm.reg = Reg{r};
            exec(z, Fx::none());
        }
    }
    if (e.rm.is_mem && path_.size() != before) {  // RAX may be part of the address: rebuild it
        const Mem old = e.rm.mem;
        do e.rm.mem = mem_for(old.addr, old.asize); while (!e.valid(bits_));
    }
    if (e.rm.is_mem && rng_.chance(15)) e.prefixes.insert(e.prefixes.begin(), 0xF0);
    exec(e, Fx::of(xadd ? Mn::XADD : Mn::CMPXCHG));
}

/// CMPXCHG8B m64 / CMPXCHG16B m128 (0F C7 /1; 16B needs REX.W and 16-byte alignment).
void Generator::g_cmpxchg8b() {
    const bool wide = bits_ == 64 && rng_.chance(40);
    const unsigned n = wide ? 16 : 8, half = n / 2;
    const u64 t = pick_target(n, true, wide ? 16 : 1);
    if (rng_.chance(40)) {  // rDX:rAX = memory: the equal case
        set_reg(kRAX, peek(t, half), half);
        set_reg(kRDX, peek(t + half, half), half);
    }
    // UcDefect::kCmpxchg8bFlags: end Unicorn's translation block first.
    exec_bytes({0xEB, 0x00}, Fx::none(), true, false);
    Enc e;
    e.rex_w = wide;
    e.opcode = {0x0F, 0xC7};
    e.has_modrm = true;
    e.reg.num = 1;
    e.rm.is_mem = true;
    e.rm.mem = mem_for(t, pick_asize());
    mem_prefixes(e);
    if (rng_.chance(20)) e.prefixes.insert(e.prefixes.begin(), 0xF0);
    exec(e, Fx::of(Mn::CMPXCHG8B));
}

/// BSWAP r32/r64 (0F C8+r); the 16-bit form is undefined (SDM Vol. 2A BSWAP).
void Generator::g_bswap() {
    const unsigned size = bits_ == 64 && rng_.chance(50) ? 8 : 4;
    Enc e;
    size_prefix(e, size);
    e.opcode = {0x0F, 0xC8};
    e.has_opreg = true;
    e.opreg = pick_reg(size, true);
    exec(e, Fx::none());
}

void Generator::g_cbw() {
    const unsigned size = pick_size(false);
    Enc e;
    size_prefix(e, size);
    e.opcode = {u8(rng_.chance(50) ? 0x98 : 0x99)};  // CBW/CWDE/CDQE, CWD/CDQ/CQO
    exec(e, Fx::none());
}

void Generator::g_cmov() {
    const unsigned cc = unsigned(rng_.below(16)), size = pick_size(false);
    ensure_flags(cond_reads(cc));
    Enc e;
    do {
        e = Enc{};
        size_prefix(e, size);
        e.opcode = {0x0F, u8(0x40 + cc)};
        e.has_modrm = true;
        e.reg = pick_reg(size, true);
        e.rm = rm_operand(size, false);
        mem_prefixes(e);
    } while (!e.valid(bits_));
    exec(e, Fx::none());
}

void Generator::g_setcc() {
    const unsigned cc = unsigned(rng_.below(16));
    ensure_flags(cond_reads(cc));
    Enc e;
    do {
        e = Enc{};
        e.opcode = {0x0F, u8(0x90 + cc)};
        e.has_modrm = true;
        e.rm = rm_operand(1, true);
        mem_prefixes(e);
    } while (!e.valid(bits_));
    exec(e, Fx::none());
}

void Generator::g_flagop() {
    switch (rng_.below(5)) {
        case 0: exec_bytes({0xF8}, Fx::of(Mn::CLC), false, false); break;
        case 1: exec_bytes({0xF9}, Fx::of(Mn::STC), false, false); break;
        case 2:
            ensure_flags(kCF);
            exec_bytes({0xF5}, Fx::of(Mn::CMC), false, false);
            break;
        case 3: exec_bytes({0xFC}, Fx::none(), false, false); break;  // CLD
        default: exec_bytes({0xFD}, Fx::none(), false, false); break;  // STD
    }
}

/// NOP (90), 66 90, PAUSE (F3 90), and NOP r/m (0F 1F /0; the operand is not accessed),
/// with register and memory operands.
void Generator::g_nop() {
    const u64 k = rng_.below(4);
    if (k == 0) return (void)exec_bytes({0x90}, Fx::none(), false, false);
    if (k == 1) return (void)exec_bytes({0x66, 0x90}, Fx::none(), false, false);
    if (k == 2) return (void)exec_bytes({0xF3, 0x90}, Fx::none(), false, false);
    Enc e;
    do {
        e = Enc{};
        const unsigned size = rng_.chance(50) ? 2 : 4;
        size_prefix(e, size);
        e.opcode = {0x0F, 0x1F};
        e.has_modrm = true;
        e.rm.is_mem = rng_.chance(50);
        if (e.rm.is_mem) e.rm.mem = random_mem(pick_asize());
        else e.rm.reg = pick_reg(size, false);
        mem_prefixes(e);
    } while (!e.valid(bits_));
    exec(e, Fx::none());
}

// ---- stack ----------------------------------------------------------------------

/// PUSH r (50+r), r/m (FF /6), imm8 (6A), imm (68); 66 selects 16 bits.
void Generator::g_push() {
    const unsigned w = unsigned(bits_ / 8), size = rng_.chance(15) ? 2 : w;
    if (!make_room(size)) return;
    Enc e;
    do {
        e = Enc{};
        if (size == 2) e.prefixes.push_back(0x66);
        switch (rng_.below(4)) {
            case 0:
                e.opcode = {0x50};
                e.has_opreg = true;
                e.opreg = pick_reg(size, false);
                break;
            case 1:
                e.opcode = {0xFF};
                e.has_modrm = true;
                e.reg.num = 6;
                e.rm = rm_operand(size, false, 60);
                break;
            case 2:
                e.opcode = {0x6A};
                e.add_imm(rng_.value(1), 1);
                break;
            default:
                e.opcode = {0x68};
                e.add_imm(rng_.value(size == 2 ? 2 : 4), size == 2 ? 2 : 4);
                break;
        }
        mem_prefixes(e);
    } while (!e.valid(bits_));
    exec(e, Fx::none());
}

/// POP r (58+r), r/m (8F /0). A memory destination never uses rSP as base (its
/// address is computed after the pop, SDM Vol. 2B POP).
void Generator::g_pop() {
    const unsigned w = unsigned(bits_ / 8), size = rng_.chance(15) ? 2 : w;
    if (!can_pop(size)) {
        if (!make_room(size)) return;
        std::vector<u8> b;
        if (size == 2) b.push_back(0x66);
        b.push_back(0x6A);
        b.push_back(u8(rng_.next()));
        exec_bytes(b, Fx::none(), false, false);  // PUSH imm8
    }
    Enc e;
    do {
        e = Enc{};
        if (size == 2) e.prefixes.push_back(0x66);
        if (rng_.chance(60)) {
            e.opcode = {0x58};
            e.has_opreg = true;
            e.opreg = pick_reg(size, true);
        } else {
            e.opcode = {0x8F};
            e.has_modrm = true;
            if (rng_.chance(50)) {
                e.rm.reg = pick_reg(size, true);
            } else {
                e.rm.is_mem = true;
                e.rm.mem = mem_for(pick_target(size, true), pick_asize(), false);
            }
        }
        mem_prefixes(e);
    } while (!e.valid(bits_));
    exec(e, Fx::none());
}

/// PUSHF (9C) needs all flags defined; POPF (9D) only pops values with nothing
/// but the arithmetic flags and DF set (no TF IF AC ID), pushing one if needed.
void Generator::g_pushf_popf() {
    const unsigned w = unsigned(bits_ / 8), size = rng_.chance(15) ? 2 : w;
    std::vector<u8> b;
    if (size == 2) b.push_back(0x66);
    if (rng_.chance(50)) {
        ensure_flags(kArith);
        if (!make_room(size)) return;
        b.push_back(0x9C);
        exec_bytes(b, Fx::none(), false, false);
        return;
    }
    const u64 allowed = kArith | kDF | 2;
    if (!can_pop(size) || (peek(rsp(), size) & ~allowed) != 0) {
        if (!make_room(size)) return;
        const u64 v = 2 | (rng_.next() & kArith) | (rng_.chance(30) ? kDF : 0);
        std::vector<u8> p(b);
        p.push_back(0x68);  // PUSH imm16/imm32
        for (unsigned i = 0; i < (size == 2 ? 2u : 4u); ++i) p.push_back(u8(v >> (8 * i)));
        exec_bytes(p, Fx::none(), false, false);
    }
    b.push_back(0x9D);
    exec_bytes(b, Fx::of(Mn::POPF), false, false);
}

void Generator::g_lahf_sahf() {
    if (rng_.chance(50)) {
        ensure_flags(kSF | kZF | kAF | kPF | kCF);
        exec_bytes({0x9F}, Fx::none(), false, false);  // LAHF
    } else {
        exec_bytes({0x9E}, Fx::of(Mn::SAHF), false, false);
    }
}

/// ENTER imm16, imm8 (C8) and LEAVE (C9), kept inside the stack page. Nesting
/// levels above 1 copy frame pointers from [rBP - k*size], which must be readable.
void Generator::g_enter_leave() {
    const unsigned w = unsigned(bits_ / 8), size = rng_.chance(15) ? 2 : w;
    const u64 sp_mask = bits_ == 64 ? ~0ull : 0xFFFFFFFFull;
    const bool leave = rng_.chance(45);
    const unsigned enter_size = w;  // UcDefect::kEnter16: no 66 C8
    u64 bp = reg(kRBP) & sp_mask;
    auto leave_ok = [&] { return bp >= kStackBase + 64 && bp <= protect_lo_ - size; };  // new rSP = rBP
    if (!leave || !leave_ok()) {
        unsigned level = rng_.chance(50) ? 0 : rng_.chance(50) ? 1 : unsigned(rng_.range(2, 4));
        const u64 alloc = rng_.chance(40) ? 0 : rng_.below(96);
        if (level > 1 && !readable(bp - (level - 1) * enter_size, (level - 1) * enter_size)) level = 1;
        if (!make_room(enter_size * (level + 1) + alloc)) return;
        std::vector<u8> b{0xC8, u8(alloc), u8(alloc >> 8), u8(level)};
        exec_bytes(b, Fx::none(), false, false);
        bp = reg(kRBP) & sp_mask;
        if (!leave || !leave_ok()) return;
    }
    std::vector<u8> b;
    if (size == 2) b.push_back(0x66);
    b.push_back(0xC9);
    exec_bytes(b, Fx::none(), false, false);
}

// ---- string instructions --------------------------------------------------------

/// MOVS STOS LODS CMPS SCAS, any size, address size, DF, with/without REP/REPE/REPNE.
/// rCX is kept small and rSI/rDI are moved so every iteration stays in range.
void Generator::g_string() {
    static const u8 kOp[5] = {0xA4, 0xAA, 0xAC, 0xA6, 0xAE};  // MOVS STOS LODS CMPS SCAS
    const unsigned kind = unsigned(rng_.below(5)), size = pick_size();
    const u8 as = pick_asize();
    const u64 am = mask_of(as);
    const unsigned reg_size = as == 2 ? 2 : 4;
    u8 rep = 0;
    if (kind >= 3) rep = rng_.pick({u8(0), u8(0xF3), u8(0xF2)});
    else rep = rng_.chance(45) ? 0 : rng_.chance(95) ? 0xF3 : 0xF2;
    const bool reads_si = kind == 0 || kind == 2 || kind == 3, uses_di = kind != 2,
               writes_di = kind <= 1;
    if (rep && (reg(kRCX) & am) > 16) set_reg(kRCX, rng_.below(13), reg_size);
    const u64 cnt = rep ? (reg(kRCX) & am) : 1;
    const bool df = cpu().rflags() & kDF;
    const u64 span = cnt * size;
    auto lowest = [&](u64 p) { return df ? p - (span - size) : p; };
    auto in_range = [&](u64 p, bool write) {
        if (cnt == 0) return true;
        const u64 lo = lowest(p);
        return lo <= p + size && (write ? writable(lo, span) : readable(lo, span));
    };
    auto place = [&](int r, bool write) {
        const u64 top = write ? protect_lo_ : kMemEnd;
        const u64 lo = kMemBase + rng_.below(top - kMemBase - span - 16);
        set_reg(r, df ? lo + span - size : lo, reg_size);
    };
    if (kind == 3 && cnt && rng_.chance(30)) {  // compare the two copies made by init_state
        const u64 lo = kDataBase + rng_.below(256 - span + 1);
        set_reg(kRSI, df ? lo + span - size : lo, reg_size);
        set_reg(kRDI, (df ? lo + span - size : lo) + 0x800, reg_size);
    }
    if (reads_si && !in_range(reg(kRSI) & am, false)) place(kRSI, false);
    if (uses_di && !in_range(reg(kRDI) & am, writes_di)) place(kRDI, writes_di);
    if (kind == 4 && cnt && rng_.chance(40)) {  // SCAS: an accumulator value that occurs ahead
        const u64 k = rng_.below(cnt), di = reg(kRDI) & am;
        set_reg(kRAX, peek(df ? di - k * size : di + k * size, size), size);
    }
    Enc e;
    if (reads_si && rng_.chance(10)) e.prefixes.push_back(rng_.pick({u8(0x26), u8(0x2E), u8(0x36), u8(0x3E)}));
    size_prefix(e, size);
    if (as != (bits_ == 64 ? 8 : 4)) e.prefixes.push_back(0x67);
    if (rep) e.prefixes.push_back(rep);
    e.opcode = {u8(kOp[kind] + (size == 1 ? 0 : 1))};
    const Fx fx = kind >= 3 && cnt ? Fx::of(kind == 3 ? Mn::CMPS : Mn::SCAS) : Fx::none();
    exec(e, fx);
}

// ---- control transfers ------------------------------------------------------------
// All branches go forward within the block; bytes a taken branch skips stay INT3.

void Generator::g_jcc() {
    const unsigned cc = unsigned(rng_.below(16));
    ensure_flags(cond_reads(cc));
    const u64 d = dead_distance();
    Enc e;
    if (rng_.chance(70)) {
        e.opcode = {u8(0x70 + cc)};
        e.add_imm(d, 1);
    } else {
        e.opcode = {0x0F, u8(0x80 + cc)};
        e.add_imm(d, 4);
    }
    exec(e, Fx::none(), true);
}

/// LOOP (E2), LOOPE (E1), LOOPNE (E0), JrCXZ (E3); 67 selects ECX/CX.
void Generator::g_loop() {
    const unsigned kind = unsigned(rng_.below(4));
    if (kind == 1 || kind == 2) {
        ensure_flags(kZF);
        exec_bytes({0xEB, 0x00}, Fx::none(), true, false);  // UcDefect::kLoopccFlags
    }
    Enc e;
    if (rng_.chance(25)) e.prefixes.push_back(0x67);
    e.opcode = {u8(0xE0 + (kind == 0 ? 2 : kind == 1 ? 1 : kind == 2 ? 0 : 3))};
    e.add_imm(dead_distance(), 1);
    exec(e, Fx::none(), true);
}

/// JMP rel8 (EB), rel32 (E9), r (FF /4), m (FF /4: the target stored just before).
void Generator::g_jmp() {
    const u64 form = rng_.below(4), d = dead_distance();
    Enc e;
    if (form < 2) {
        e.opcode = {u8(form == 0 ? 0xEB : 0xE9)};
        e.add_imm(d, form == 0 ? 1 : 4);
        exec(e, Fx::none(), true);
        return;
    }
    const unsigned w = unsigned(bits_ / 8);
    e.opcode = {0xFF};
    e.has_modrm = true;
    e.reg.num = 4;
    if (form == 2) {
        e.rm.reg = pick_reg(w, true);
        const u64 mov_len = e.rm.reg.num >= 8 ? 6 : 5, jmp_len = e.rm.reg.num >= 8 ? 3 : 2;
        set_reg(e.rm.reg.num, pc_ + mov_len + jmp_len + d, 4);
    } else {
        const u64 t = pick_target(w, true);
        e.rm.is_mem = true;
        e.rm.mem = mem_for(t, pick_asize());
        mem_prefixes(e);
        Enc st;  // MOV dword/qword [t], imm32
        st.rex_w = bits_ == 64;
        st.opcode = {0xC7};
        st.has_modrm = true;
        st.rm.is_mem = true;
        st.rm.mem = mem_for(t, pick_asize());
        mem_prefixes(st);
        st.add_imm(0, 4);
        const u64 st_len = st.encode(pc_, bits_).size();
        const u64 target = pc_ + st_len + e.encode(pc_ + st_len, bits_).size() + d;
        st.imm.clear();
        st.add_imm(target, 4);
        exec(st, Fx::none());
    }
    exec(e, Fx::none(), true);
}

/// CALL to a subroutine laid out as
///     CALL L ; JMP over ; <INT3 x f> ; L: <0-6 instructions> ; [LEA rSP] ; RET [imm16] ; over:
/// by rel32 (E8), register (FF /2) or memory (FF /2). The return address slot is
/// protected from writes and pops while the body runs.
void Generator::g_call() {
    const unsigned w = unsigned(bits_ / 8);
    if (depth_ >= 2 || pc_ > kCodeEnd - 3072 || !make_room(w + 64)) return g_alu();
    const u64 form = rng_.below(10), f = rng_.below(8);
    Enc e;
    if (form < 7) {
        e.opcode = {0xE8};
        e.add_imm(5 + f, 4);  // L = next + 5 (JMP over) + f
    } else {
        e.opcode = {0xFF};
        e.has_modrm = true;
        e.reg.num = 2;
        if (form < 9) {
            e.rm.reg = pick_reg(w, true);
            const u64 mov_len = e.rm.reg.num >= 8 ? 6 : 5, call_len = e.rm.reg.num >= 8 ? 3 : 2;
            set_reg(e.rm.reg.num, pc_ + mov_len + call_len + 5 + f, 4);
        } else {
            const u64 t = pick_target(w, true);
            e.rm.is_mem = true;
            e.rm.mem = mem_for(t, pick_asize());
            mem_prefixes(e);
            Enc st;
            st.rex_w = bits_ == 64;
            st.opcode = {0xC7};
            st.has_modrm = true;
            st.rm.is_mem = true;
            st.rm.mem = mem_for(t, pick_asize());
            mem_prefixes(st);
            st.add_imm(0, 4);
            const u64 st_len = st.encode(pc_, bits_).size();
            const u64 target = pc_ + st_len + e.encode(pc_ + st_len, bits_).size() + 5 + f;
            st.imm.clear();
            st.add_imm(target, 4);
            exec(st, Fx::none());
        }
    }
    const u64 call_at = pc_;
    exec(e, Fx::none(), true);
    const u64 ret_addr = call_at + path_.back().len, body = ret_addr + 5 + f;
    if (pc_ != body) throw GenError("CALL went elsewhere");
    const u64 slot = rsp(), saved_protect = protect_lo_;
    protect_lo_ = slot;
    ++depth_;
    for (u64 n = rng_.below(7); n > 0; --n) gen_one();
    if (rsp() != slot) set_rsp_to(slot);
    // RET imm16 releases extra bytes; keep them below the outer live slots.
    const u64 room = saved_protect - (slot + w);
    const u64 imm = rng_.chance(25) ? std::min<u64>(room, rng_.below(4) * 4) : 0;
    std::vector<u8> ret = imm ? std::vector<u8>{0xC2, u8(imm), u8(imm >> 8)} : std::vector<u8>{0xC3};
    exec_bytes(ret, Fx::none(), true, false);
    --depth_;
    protect_lo_ = saved_protect;
    if (pc_ != ret_addr) throw GenError("RET went elsewhere");
    const u64 over = path_.back().addr + path_.back().len;
    const u64 rel = over - (ret_addr + 5);
    exec_bytes({0xE9, u8(rel), u8(rel >> 8), u8(rel >> 16), u8(rel >> 24)}, Fx::none(), true, false);
}

}  // namespace diff
