// Architectural state of the x86 core that instruction semantics operate on.
#pragma once
#include <string>
#include <vector>

#include "isa/flags.h"
#include "sim/mmu.h"

namespace pmusim {

/// Hidden part of a segment register (SDM Vol. 3, 3.4.3).
struct SegmentCache {
    u16 selector = 0;
    u64 base = 0;
    u32 limit = 0xFFFF;
    u16 attr = 0;  ///< descriptor bits 40-47 and 52-55 packed as in VMX access rights
};

/// Bits of Cpu::pending: reasons to leave the block loop at the next instruction boundary.
enum PendingBit : u32 {
    kPendingCodeWrite = 1u << 0,  ///< decoded code was overwritten (self-modifying code)
    kPendingHalt = 1u << 1,       ///< HLT executed
    kPendingStop = 1u << 2,       ///< the host asked the run to stop
    kPendingModeChange = 1u << 3, ///< decoding mode or stack width changed
};

/// Instructions the decoder recognised but pmusim does not implement; each
/// execution raises #UD and is counted here so reports can list them.
struct MissingInsnReport {
    std::vector<std::string> names;   ///< interned mnemonics, indexed by Insn::imm of the #UD stub
    std::vector<u64> executions;      ///< how often each one raised #UD
    u32 intern(const std::string& mnemonic);
};

/// The core: registers, flags, segment state, the MMU and the event bus.
/// One instance per simulated logical processor. Instruction handlers receive it.
struct Cpu {
    Cpu(MemoryBus& bus) : mmu(bus, events) {}
    Cpu(const Cpu&) = delete;

    u64 gpr[kGprSlots] = {};  ///< RAX..R15 and the always-zero slot kZeroReg
    u64 rip = 0;
    LazyFlags lf;             ///< OF SF ZF AF PF CF
    u64 rflags_other = kFixed1;  ///< every other RFLAGS bit (bit 1 reads as 1)
    u64 seg_base[kSegSlots] = {};  ///< effective base per segment for addressing (0 where ignored)
    SegmentCache seg[6];
    u64 lin_mask = 0xFFFFFFFF;   ///< linear addresses wrap at 4 GiB outside IA-32e mode
    CodeBits code_bits = CodeBits::k32;
    u8 stack_bytes = 4;          ///< width of the stack pointer: 2 (SS.B=0), 4, or 8 in 64-bit mode
    u8 cpl = 0;
    u32 pending = 0;             ///< PendingBit mask
    u64 retired = 0;             ///< instructions retired since reset

    EventBus events;
    Mmu mmu;
    MissingInsnReport missing;

    u64 rflags() const { return lf.get() | rflags_other; }
    void set_rflags(u64 v) {
        lf.set(v);
        rflags_other = (v & ~kArithFlags) | kFixed1;
    }
    bool df() const { return rflags_other & kDF; }

    /// Decoder mode key: code width (SDM Vol. 3, 5.2.1 / 3.4.5 D and L flags).
    u8 mode_key() const { return u8(code_bits); }

    /// Emits a taken-branch event if anyone listens (cheap otherwise).
    void branch(BranchKind kind, u64 from, u64 to) {
        if (__builtin_expect(events.wants(EventKind::kBranch), 0)) emit_branch(kind, from, to);
    }
    void emit_branch(BranchKind kind, u64 from, u64 to);
};

}  // namespace pmusim
