#include "isa/decoder.h"

#include <capstone/capstone.h>

#include <cstring>
#include <stdexcept>

#include "isa/decode_fixups.h"

namespace pmusim {

namespace {

/// What a Capstone register id means to pmusim.
struct RegInfo {
    DecodedOperand::Kind kind = DecodedOperand::kNone;
    u8 num = 0, size = 0;
    bool high8 = false, rip = false;
};

/// Capstone x86 register id -> RegInfo, built from Capstone's register names.
class RegTable {
public:
    explicit RegTable(csh h) {
        static const char* n64[] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi"};
        static const char* n32[] = {"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"};
        static const char* n16[] = {"ax", "cx", "dx", "bx", "sp", "bp", "si", "di"};
        static const char* n8[] = {"al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil"};
        static const char* nh[] = {"ah", "ch", "dh", "bh"};
        static const char* ns[] = {"es", "cs", "ss", "ds", "fs", "gs"};
        for (int r = 1; r < X86_REG_ENDING; ++r) {
            const char* name = cs_reg_name(h, r);
            if (!name) continue;
            RegInfo& ri = info_[r];
            auto gpr = [&](u8 num, u8 size, bool hi = false) {
                ri.kind = DecodedOperand::kReg;
                ri.num = num;
                ri.size = size;
                ri.high8 = hi;
            };
            for (u8 i = 0; i < 8; ++i) {
                if (!strcmp(name, n64[i])) gpr(i, 8);
                if (!strcmp(name, n32[i])) gpr(i, 4);
                if (!strcmp(name, n16[i])) gpr(i, 2);
                if (!strcmp(name, n8[i])) gpr(i, 1);
                if (i < 4 && !strcmp(name, nh[i])) gpr(i, 1, true);
                if (i < 6 && !strcmp(name, ns[i])) {
                    ri.kind = DecodedOperand::kSeg;
                    ri.num = i;
                    ri.size = 2;
                }
            }
            int k;
            char suffix[4] = {};
            if (sscanf(name, "r%d%3s", &k, suffix) >= 1 && k >= 8 && k <= 15) {
                const u8 size = !suffix[0] ? 8 : suffix[0] == 'd' ? 4 : suffix[0] == 'w' ? 2 : 1;
                gpr(u8(k), size);
            }
            if (!strcmp(name, "rip") || !strcmp(name, "eip") || !strcmp(name, "ip")) ri.rip = true;
            if ((name[0] == 'c' || name[0] == 'd') && name[1] == 'r' && sscanf(name + 2, "%d", &k) == 1) {
                ri.kind = name[0] == 'c' ? DecodedOperand::kCtrl : DecodedOperand::kDebug;
                ri.num = u8(k);
                ri.size = 8;
            }
        }
    }
    const RegInfo& operator[](unsigned r) const { return info_[r < X86_REG_ENDING ? r : 0]; }

private:
    RegInfo info_[X86_REG_ENDING];
};

Op op_from_capstone(unsigned id) {
    switch (id) {
#define X(n) \
    case X86_INS_##n: return Op::n;
#include "isa/opcodes.def"
#undef X
        default: return Op::kUnknown;
    }
}

}  // namespace

Prefixes scan_prefixes(const u8* b, size_t n, CodeBits mode) {
    Prefixes p;
    size_t i = 0;
    for (; i < n && i < 15; ++i) {
        const u8 x = b[i];
        // REX counts only directly before the opcode (SDM Vol. 2, 2.2.1): a REX
        // followed by a legacy prefix is ignored.
        if (mode == CodeBits::k64 && (x & 0xF0) == 0x40) {
            p.rex = x;
            continue;
        }
        if (x == 0xF0) p.lock = true;
        else if (x == 0xF3) p.rep = true, p.repne = false;
        else if (x == 0xF2) p.repne = true, p.rep = false;
        else if (x == 0x66) p.opsize = true;
        else if (x == 0x67) p.addrsize = true;
        else if (x == 0x26) p.seg = ES;
        else if (x == 0x2E) p.seg = CS;
        else if (x == 0x36) p.seg = SS;
        else if (x == 0x3E) p.seg = DS;
        else if (x == 0x64) p.seg = FS;
        else if (x == 0x65) p.seg = GS;
        else break;
        p.rex = 0;
    }
    // 64-bit mode ignores CS, DS, ES and SS overrides (SDM Vol. 1, 3.3.7.1).
    if (mode == CodeBits::k64 && p.seg != FS && p.seg != GS) p.seg = kNoSeg;
    p.count = u8(i);
    return p;
}

struct Decoder::Impl {
    csh handle[3] = {};
    cs_insn* insn = nullptr;
    std::unique_ptr<RegTable> regs;

    csh h(CodeBits m) { return handle[m == CodeBits::k16 ? 0 : m == CodeBits::k32 ? 1 : 2]; }

    /// Runs Capstone; returns false if it does not decode.
    bool run(const u8* bytes, size_t n, u64 address, CodeBits mode) {
        const u8* p = bytes;
        size_t size = n;
        u64 addr = address;
        return cs_disasm_iter(h(mode), &p, &size, &addr, insn);
    }

    void convert(CodeBits mode, DecodedInsn& out) {
        const cs_x86& x = insn->detail->x86;
        out.op = op_from_capstone(insn->id);
        out.length = u8(insn->size);
        out.text = insn->mnemonic;
        if (insn->op_str[0]) out.text += std::string(" ") + insn->op_str;
        out.nops = 0;
        for (int k = 0; k < x.op_count && k < 4; ++k) {
            const cs_x86_op& o = x.operands[k];
            DecodedOperand& d = out.ops[out.nops++];
            d = DecodedOperand{};
            d.size = o.size;
            if (o.type == X86_OP_REG) {
                const RegInfo& ri = (*regs)[o.reg];
                d.kind = ri.kind == DecodedOperand::kNone ? DecodedOperand::kNone : ri.kind;
                d.reg = ri.num;
                d.high8 = ri.high8;
                if (ri.size) d.size = ri.size;
            } else if (o.type == X86_OP_IMM) {
                d.kind = DecodedOperand::kImm;
                d.imm = o.imm;
            } else if (o.type == X86_OP_MEM) {
                d.kind = DecodedOperand::kMem;
                const RegInfo& b = (*regs)[o.mem.base];
                const RegInfo& ix = (*regs)[o.mem.index];
                d.rip_relative = b.rip;
                d.base = b.kind == DecodedOperand::kReg ? b.num : u8(kZeroReg);
                d.index = ix.kind == DecodedOperand::kReg ? ix.num : u8(kZeroReg);
                d.scale_log2 = u8(__builtin_ctz(o.mem.scale ? o.mem.scale : 1));
                d.disp = o.mem.disp;
                const RegInfo& s = (*regs)[o.mem.segment];
                d.seg = s.kind == DecodedOperand::kSeg ? s.num : u8(kNoSeg);
                if (mode == CodeBits::k64 && d.seg != FS && d.seg != GS) d.seg = kNoSeg;
            }
        }
        // pmusim's own names for MOV and POP forms that are system instructions.
        if (out.op == Op::MOV && out.nops == 2) {
            const auto k0 = out.ops[0].kind, k1 = out.ops[1].kind;
            if (k0 == DecodedOperand::kCtrl || k1 == DecodedOperand::kCtrl) out.op = Op::kMovCr;
            else if (k0 == DecodedOperand::kDebug || k1 == DecodedOperand::kDebug) out.op = Op::kMovDr;
            else if (k0 == DecodedOperand::kSeg) out.op = Op::kMovToSreg;
        }
        if (out.op == Op::POP && out.nops == 1 && out.ops[0].kind == DecodedOperand::kSeg) out.op = Op::kPopSreg;
    }
};

Decoder::Decoder() : impl_(new Impl) {
    const cs_mode modes[3] = {CS_MODE_16, CS_MODE_32, CS_MODE_64};
    for (int k = 0; k < 3; ++k) {
        if (cs_open(CS_ARCH_X86, modes[k], &impl_->handle[k]) != CS_ERR_OK)
            throw std::runtime_error("Capstone: cannot open the x86 decoder");
        cs_option(impl_->handle[k], CS_OPT_DETAIL, CS_OPT_ON);
    }
    impl_->insn = cs_malloc(impl_->handle[2]);
    impl_->regs = std::make_unique<RegTable>(impl_->handle[2]);
}

Decoder::~Decoder() {
    cs_free(impl_->insn, 1);
    for (csh& h : impl_->handle) cs_close(&h);
}

DecodeStatus Decoder::decode(const u8* bytes, size_t n, u64 address, CodeBits mode, DecodedInsn& out) {
    out = DecodedInsn{};
    n = n > 15 ? 15 : n;
    out.address = address;
    out.mode = mode;
    out.pfx = scan_prefixes(bytes, n, mode);
    out.opsize = operand_size(out.pfx, mode);
    out.addrsize = address_size(out.pfx, mode);
    const size_t pc = out.pfx.count;
    for (size_t k = 0; k < 3 && pc + k < n; ++k) out.opcode[k] = bytes[pc + k];
    if (out.opcode[0] != 0x0F) out.opcode[1] = out.opcode[2] = 0;

    if (DecodeStatus s; decode_fixup(bytes, n, mode, out, s)) return s;

    // Intel processors ignore 66 on near branches in 64-bit mode (SDM Vol. 2, JMP/CALL/Jcc:
    // "operand size is forced to 64 bits"); Capstone 4 follows AMD and shortens the
    // displacement. Decode such instructions without their 66 bytes.
    u8 stripped[15];
    size_t sn = n;
    const u8* src = bytes;
    u64 at = address;
    if (mode == CodeBits::k64 && out.pfx.opsize && is_near_branch_opcode(out.opcode)) {
        sn = 0;
        for (size_t k = 0; k < n; ++k)
            if (k >= pc || bytes[k] != 0x66) stripped[sn++] = bytes[k];
        src = stripped;
        at = address + (n - sn);
    }
    if (!impl_->run(src, sn, at, mode)) {
        u8 padded[15] = {};
        std::memcpy(padded, src, sn);
        if (sn < 15 && impl_->run(padded, 15, at, mode) && impl_->insn->size > sn)
            return DecodeStatus::kTruncated;
        return DecodeStatus::kInvalid;
    }
    impl_->convert(mode, out);
    out.length = u8(out.length + (n - sn));
    return DecodeStatus::kOk;
}

}  // namespace pmusim
