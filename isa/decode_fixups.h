// Byte sequences pmusim decodes itself because Capstone 4 decodes them wrongly.
#pragma once
#include "isa/decoder.h"

namespace pmusim {

/// If `bytes` (prefixes already scanned into out.pfx, opcode bytes in out.opcode)
/// is one of the sequences Capstone 4 misdecodes, fills `out`, sets `status` and
/// returns true. Cases (each has a test in tests/test_decoder.cpp):
///  - F3 0F C7 /7 with mod=3: RDPID r32/r64 (Capstone 4: RDSEED). SDM Vol. 2, RDPID.
///  - 0F 18..0F 1F with mod=3: hint NOPs (Capstone 4: invalid). SDM Vol. 2, NOP.
bool decode_fixup(const u8* bytes, size_t n, CodeBits mode, DecodedInsn& out, DecodeStatus& status);

/// True for near-branch opcodes whose operand size Intel fixes at 64 bits in
/// 64-bit mode: E8, E9, EB, 0F 80..8F, 70..7F, E0..E3, C2, C3 and FF /2, FF /4.
bool is_near_branch_opcode(const u8 opcode[3]);

}  // namespace pmusim
