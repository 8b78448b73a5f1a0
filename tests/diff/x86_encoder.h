// A minimal x86 byte encoder for the differential test: legacy prefixes, REX,
// opcode, ModR/M, SIB, displacement and immediate (SDM Vol. 2, chapter 2).
// The generator picks opcodes and operands; this file only lays out the bytes.
#pragma once
#include <stdexcept>
#include <vector>

#include "tests/diff/diff_common.h"

namespace diff {

/// A general register operand. Byte registers 4..7 are AH CH DH BH when `high8`
/// (no REX allowed) and SPL BPL SIL DIL otherwise (REX required in 64-bit code).
struct Reg {
    u8 num = 0;
    bool byte = false;
    bool high8 = false;
};

/// A memory operand (SDM Vol. 2, 2.1.5, Tables 2-1 to 2-3).
struct Mem {
    static constexpr int kAbs16 = 8;  ///< 16-bit [disp16]: mod=00 r/m=110
    u8 asize = 8;         ///< address size in bytes: 2, 4 or 8
    int base = -1;        ///< 32/64-bit forms: base register or -1
    int index = -1;       ///< index register (never 4) or -1
    u8 scale = 0;         ///< log2 of the scale factor
    int rm16 = -1;        ///< 16-bit forms: r/m code 0..7 ([BX+SI] .. [BX]), or kAbs16 for [disp16]
    bool rip = false;     ///< RIP-relative: `disp` holds the absolute target
    i64 disp = 0;
    u8 disp_bytes = 0;    ///< 0, 1, 2 (16-bit forms) or 4
    u64 addr = 0;         ///< bookkeeping: the address the operand was built to reach
};

struct Operand {
    bool is_mem = false;
    Reg reg;
    Mem mem;
};

/// One instruction to encode.
struct Enc {
    std::vector<u8> prefixes;  ///< legacy prefixes in the order given
    bool mandatory_prefix = false;  ///< the last prefix is part of the opcode (F3 0F BC: TZCNT)
    bool rex_w = false;
    std::vector<u8> opcode;
    bool has_opreg = false;    ///< a register in the low 3 bits of the last opcode byte (50+r, B0+r, ...)
    Reg opreg;
    bool has_modrm = false;
    Reg reg;                   ///< ModR/M.reg operand (or /digit in reg.num)
    Operand rm;                ///< ModR/M.rm operand
    std::vector<u8> imm;       ///< immediates / moffs / relative displacement, little-endian

    void add_imm(u64 v, unsigned bytes) {
        for (unsigned i = 0; i < bytes; ++i) imm.push_back(u8(v >> (8 * i)));
    }
    /// A REX prefix is needed (REX.WRXB bits or SPL..DIL) / forbidden (AH..BH).
    bool needs_rex() const;
    bool forbids_rex() const;
    /// Encodable in `bits`-bit code (no REX in 32-bit code, no REX next to AH..BH).
    bool valid(int bits) const {
        if (needs_rex()) return bits == 64 && !forbids_rex();
        return true;
    }
    /// The bytes of the instruction placed at `addr` (needed for RIP-relative operands).
    std::vector<u8> encode(u64 addr, int bits) const;
};

// ---- implementation ----------------------------------------------------------

namespace detail {
inline bool byte_needs_rex(const Reg& r) { return r.byte && !r.high8 && r.num >= 4 && r.num <= 7; }
}  // namespace detail

inline bool Enc::needs_rex() const {
    if (rex_w) return true;
    if (has_modrm && (reg.num >= 8 || detail::byte_needs_rex(reg))) return true;
    if (has_modrm && !rm.is_mem && (rm.reg.num >= 8 || detail::byte_needs_rex(rm.reg))) return true;
    if (has_modrm && rm.is_mem && (rm.mem.base >= 8 || rm.mem.index >= 8)) return true;
    if (has_opreg && (opreg.num >= 8 || detail::byte_needs_rex(opreg))) return true;
    return false;
}

inline bool Enc::forbids_rex() const {
    return (has_modrm && ((reg.byte && reg.high8) || (!rm.is_mem && rm.reg.byte && rm.reg.high8))) ||
           (has_opreg && opreg.byte && opreg.high8);
}

inline std::vector<u8> Enc::encode(u64 addr, int bits) const {
    if (!valid(bits)) throw std::logic_error("unencodable operand combination");
    std::vector<u8> out(prefixes);
    u8 modrm = 0, sib = 0;
    bool has_sib = false;
    u8 rex_r = 0, rex_x = 0, rex_b = 0;
    i64 disp = 0;
    unsigned disp_bytes = 0;
    bool rip_rel = false;
    if (has_modrm) {
        rex_r = reg.num >> 3;
        const u8 regf = u8((reg.num & 7) << 3);
        if (!rm.is_mem) {
            modrm = u8(0xC0 | regf | (rm.reg.num & 7));
            rex_b = rm.reg.num >> 3;
        } else if (rm.mem.asize == 2) {
            // 16-bit forms (Table 2-1): mod from the displacement size.
            const Mem& m = rm.mem;
            disp = m.disp;
            if (m.rm16 == Mem::kAbs16) {
                modrm = u8(regf | 6);
                disp_bytes = 2;
            } else {
                if (m.rm16 == 6 && m.disp_bytes == 0) throw std::logic_error("[BP] needs a displacement");
                const u8 mod = m.disp_bytes == 0 ? 0 : m.disp_bytes == 1 ? 1 : 2;
                modrm = u8((mod << 6) | regf | m.rm16);
                disp_bytes = m.disp_bytes;
            }
        } else {
            const Mem& m = rm.mem;
            disp = m.disp;
            disp_bytes = m.disp_bytes;
            if (m.rip) {
                // mod=00 r/m=101: RIP-relative in 64-bit code (Table 2-7).
                modrm = u8(regf | 5);
                disp_bytes = 4;
                rip_rel = true;
            } else if (m.base < 0) {
                // No base: [disp32] or [index*s + disp32] (SIB base=101 with mod=00).
                disp_bytes = 4;
                if (m.index < 0 && bits == 32) {
                    modrm = u8(regf | 5);  // mod=00 r/m=101: disp32 in 32-bit code
                } else {
                    modrm = u8(regf | 4);
                    has_sib = true;
                    const int idx = m.index < 0 ? 4 : m.index;
                    sib = u8((m.scale << 6) | ((idx & 7) << 3) | 5);
                    rex_x = idx >> 3;
                }
            } else {
                u8 mod = disp_bytes == 0 ? 0 : disp_bytes == 1 ? 1 : 2;
                if (mod == 0 && (m.base & 7) == 5) throw std::logic_error("rBP/r13 base needs a displacement");
                rex_b = u8(m.base >> 3);
                if (m.index >= 0 || (m.base & 7) == 4) {
                    modrm = u8((mod << 6) | regf | 4);
                    has_sib = true;
                    const int idx = m.index < 0 ? 4 : m.index;
                    sib = u8((m.scale << 6) | ((idx & 7) << 3) | (m.base & 7));
                    rex_x = u8(idx >> 3);
                } else {
                    modrm = u8((mod << 6) | regf | (m.base & 7));
                }
            }
        }
    }
    if (has_opreg) rex_b = u8(opreg.num >> 3);
    if (needs_rex()) out.push_back(u8(0x40 | (rex_w << 3) | (rex_r << 2) | (rex_x << 1) | rex_b));
    out.insert(out.end(), opcode.begin(), opcode.end());
    if (has_opreg) out.back() = u8(out.back() + (opreg.num & 7));
    if (has_modrm) out.push_back(modrm);
    if (has_sib) out.push_back(sib);
    const size_t disp_at = out.size();
    for (unsigned i = 0; i < disp_bytes; ++i) out.push_back(u8(u64(disp) >> (8 * i)));
    out.insert(out.end(), imm.begin(), imm.end());
    if (rip_rel) {
        // The displacement is relative to the end of the whole instruction.
        const u64 rel = u64(disp) - (addr + out.size());
        for (unsigned i = 0; i < 4; ++i) out[disp_at + i] = u8(rel >> (8 * i));
    }
    return out;
}

}  // namespace diff
