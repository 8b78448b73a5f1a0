// Basic integer types and register/segment numbering shared by isa/ and sim/.
#pragma once
#include <cstdint>

namespace pmusim {

using u8 = uint8_t;
using u16 = uint16_t;
using u32 = uint32_t;
using u64 = uint64_t;
using i8 = int8_t;
using i16 = int16_t;
using i32 = int32_t;
using i64 = int64_t;

/// General-purpose register numbers in x86 encoding order (SDM Vol. 2, 2.1.5).
/// kZeroReg is a pseudo register that always reads 0; decoded memory operands
/// use it for an absent base or index so effective-address arithmetic has no branches.
enum Gpr : u8 {
    RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI,
    R8, R9, R10, R11, R12, R13, R14, R15,
    kZeroReg = 16,
    kGprSlots = 17,
};

/// Segment registers in encoding order (SDM Vol. 2, 3.1.1.3 "Sreg").
/// kNoSeg selects a pseudo segment with base 0 (used by LEA-like address calculations).
enum SegReg : u8 { ES, CS, SS, DS, FS, GS, kNoSeg = 6, kSegSlots = 7 };

/// Masks for 2-, 4- and 8-byte address or operand widths, indexed by the width in bytes.
inline constexpr u64 kAddrMask[9] = {0, 0, 0xFFFF, 0, 0xFFFFFFFF, 0, 0, 0, ~0ull};

/// 64-bit mode: an address is canonical when bits 63:47 are all equal (48-bit
/// linear addresses; SDM Vol. 1, 3.3.7.1).
inline constexpr bool is_canonical(u64 a) { return u64(i64(a << 16) >> 16) == a; }

/// Width of the code segment, which selects the decoder mode and default sizes.
enum class CodeBits : u8 { k16 = 16, k32 = 32, k64 = 64 };

}  // namespace pmusim
