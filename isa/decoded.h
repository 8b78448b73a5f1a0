// The decoder's output: one instruction in pmusim's own terms (no Capstone types).
#pragma once
#include <string>

#include "sim/types.h"

namespace pmusim {

/// Instructions pmusim knows by name (isa/opcodes.def); kUnknown for the rest.
enum class Op : u16 {
    kUnknown,
#define X(n) n,
#include "isa/opcodes.def"
#undef X
    kRdpid,      // decoded by pmusim itself (Capstone 4 misreads it as RDSEED)
    kMovCr,      // MOV to/from CRn (Capstone: MOV)
    kMovDr,      // MOV to/from DRn (Capstone: MOV)
    kMovToSreg,  // MOV Sreg, r/m (Capstone: MOV)
    kPopSreg,    // POP Sreg (Capstone: POP)
    kCount
};
const char* op_name(Op op);

struct DecodedOperand {
    enum Kind : u8 { kNone, kReg, kImm, kMem, kSeg, kCtrl, kDebug } kind = kNone;
    u8 size = 0;            ///< bytes
    // kReg: general register; kSeg/kCtrl/kDebug: segment/control/debug register number in `reg`
    u8 reg = kZeroReg;
    bool high8 = false;     ///< AH, CH, DH, BH
    // kMem
    u8 base = kZeroReg, index = kZeroReg, scale_log2 = 0;
    u8 seg = kNoSeg;        ///< explicit segment override, kNoSeg = default segment
    bool rip_relative = false;
    i64 disp = 0;
    // kImm
    i64 imm = 0;
};

/// Prefix facts from pmusim's own scan of the legacy prefixes and REX (SDM Vol. 2, 2.1, 2.2.1).
struct Prefixes {
    bool lock = false, rep = false, repne = false;  ///< F0, F3, F2 (the last of F2/F3 wins)
    bool opsize = false, addrsize = false;           ///< 66, 67
    u8 seg = kNoSeg;   ///< last segment override (ES CS SS DS FS GS); CS/DS/ES/SS are
                       ///< recorded as kNoSeg in 64-bit mode, where they are ignored
    u8 rex = 0;        ///< REX byte if it immediately precedes the opcode
    u8 count = 0;      ///< number of prefix bytes including REX
};

/// One decoded instruction.
struct DecodedInsn {
    Op op = Op::kUnknown;
    u64 address = 0;    ///< RIP (offset in CS) of the instruction
    u8 length = 0;      ///< bytes
    Prefixes pfx;
    CodeBits mode = CodeBits::k32;
    u8 opsize = 4;      ///< operand size in bytes from mode, REX.W and 66 (non-byte forms)
    u8 addrsize = 4;    ///< address size in bytes from mode and 67
    u8 opcode[3] = {};  ///< opcode bytes after prefixes (0F-escaped opcodes keep the 0F)
    u8 nops = 0;
    DecodedOperand ops[4];
    std::string text;   ///< "mnemonic operands" for traces and reports
};

}  // namespace pmusim
