#include "isa/decode_fixups.h"

namespace pmusim {

namespace {
const char* const kGpr64[] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                              "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
const char* const kGpr32[] = {"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi",
                              "r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d"};
}  // namespace

bool decode_fixup(const u8* bytes, size_t n, CodeBits mode, DecodedInsn& out, DecodeStatus& status) {
    const Prefixes& p = out.pfx;
    const u8* op = out.opcode;
    // RDPID: F3 0F C7 /7, register form only. The operand is 64-bit in 64-bit
    // mode and 32-bit otherwise; REX.W and 66 do not change it (SDM Vol. 2, RDPID).
    if (p.rep && op[0] == 0x0F && op[1] == 0xC7 && (op[2] >> 6) == 3 && ((op[2] >> 3) & 7) == 7) {
        if (n < size_t(p.count) + 3) {
            status = DecodeStatus::kTruncated;
            return true;
        }
        const u8 reg = u8((op[2] & 7) | ((p.rex & 1) << 3));
        out.op = Op::kRdpid;
        out.length = u8(p.count + 3);
        out.nops = 1;
        out.ops[0].kind = DecodedOperand::kReg;
        out.ops[0].reg = reg;
        out.ops[0].size = mode == CodeBits::k64 ? 8 : 4;
        out.text = std::string("rdpid ") + (mode == CodeBits::k64 ? kGpr64[reg] : kGpr32[reg & 7]);
        status = DecodeStatus::kOk;
        return true;
    }
    // 0F 18..0F 1F with a register operand: the hint-NOP space (SDM Vol. 2, NOP and
    // Table A-3, "reserved-NOP"); Intel processors execute these as NOPs, Capstone 4
    // rejects most of them. ENDBR32/ENDBR64 (F3 0F 1E FB/FA) keep their names.
    if (op[0] == 0x0F && op[1] >= 0x18 && op[1] <= 0x1F && (op[2] >> 6) == 3 &&
        !(p.rep && op[1] == 0x1E && (op[2] == 0xFA || op[2] == 0xFB))) {
        if (n < size_t(p.count) + 3) {
            status = DecodeStatus::kTruncated;
            return true;
        }
        out.op = Op::NOP;
        out.length = u8(p.count + 3);
        out.nops = 0;
        out.text = "nop";
        status = DecodeStatus::kOk;
        return true;
    }
    (void)bytes;
    return false;
}

bool is_near_branch_opcode(const u8 opcode[3]) {
    const u8 a = opcode[0];
    if (a == 0xE8 || a == 0xE9 || a == 0xEB || a == 0xC2 || a == 0xC3) return true;
    if ((a >= 0x70 && a <= 0x7F) || (a >= 0xE0 && a <= 0xE3)) return true;
    if (a == 0x0F) return opcode[1] >= 0x80 && opcode[1] <= 0x8F;
    if (a == 0xFF) {
        const u8 reg = (opcode[1] >> 3) & 7;
        return (opcode[1] >> 6) <= 3 && (reg == 2 || reg == 4);
    }
    return false;
}

}  // namespace pmusim
