// Architectural state of the x86 core that instruction semantics operate on.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "isa/flags.h"
#include "sim/mmu.h"
#include "sim/msr_bus.h"

namespace pmusim {

class PortBus;
struct CpuProfile;

/// Segment descriptor attributes, packed as in the VMX access-rights format
/// (SDM Vol. 3, 24.4.1): type 3:0, S 4, DPL 6:5, P 7, AVL 12, L 13, D/B 14, G 15.
namespace seg_attr {
inline constexpr u32 kTypeMask = 0xF, kS = 1u << 4, kDplShift = 5, kP = 1u << 7, kL = 1u << 13,
                     kDB = 1u << 14, kG = 1u << 15, kUnusable = 1u << 16;
inline constexpr u32 kCode = 0x8, kConforming = 0x4, kExpandDown = 0x4, kWritable = 0x2,
                     kReadable = 0x2, kAccessed = 0x1;
}  // namespace seg_attr

/// Hidden part of a segment register (SDM Vol. 3, 3.4.3).
struct SegmentCache {
    u16 selector = 0;
    u64 base = 0;
    u32 limit = 0xFFFF;  ///< byte-granular (already scaled by G)
    u32 attr = seg_attr::kP | seg_attr::kS | 0x3;  ///< see seg_attr; real-mode data segment
    unsigned dpl() const { return (attr >> seg_attr::kDplShift) & 3; }
};

/// GDTR / IDTR (SDM Vol. 3, 2.4.1).
struct TableRegister {
    u64 base = 0;
    u16 limit = 0xFFFF;
};

/// Control registers and EFER bits (SDM Vol. 3, 2.5 and 2.2.1).
namespace cr0 {
inline constexpr u64 kPE = 1, kMP = 2, kEM = 4, kTS = 8, kET = 0x10, kNE = 0x20, kWP = 1u << 16,
                     kAM = 1u << 18, kNW = 1u << 29, kCD = 1u << 30, kPG = 1u << 31;
}
namespace cr4 {
inline constexpr u64 kVME = 1, kPVI = 2, kTSD = 4, kDE = 8, kPSE = 0x10, kPAE = 0x20, kMCE = 0x40,
                     kPGE = 0x80, kPCE = 0x100, kOSFXSR = 0x200, kOSXMMEXCPT = 0x400,
                     kUMIP = 0x800, kFSGSBASE = 1u << 16, kSMEP = 1u << 20, kSMAP = 1u << 21;
}
namespace efer {
inline constexpr u64 kSCE = 1, kLME = 1u << 8, kLMA = 1u << 10, kNXE = 1u << 11;
}

/// MSR-held state the core itself uses (SDM Vol. 4, Table 2-2).
struct SystemMsrs {
    u64 star = 0, lstar = 0, cstar = 0, fmask = 0;            ///< IA32_STAR/LSTAR/CSTAR/FMASK
    u64 kernel_gs_base = 0;                                   ///< IA32_KERNEL_GS_BASE (SWAPGS)
    u64 sysenter_cs = 0, sysenter_esp = 0, sysenter_eip = 0;  ///< IA32_SYSENTER_CS/ESP/EIP
    u64 pat = 0x0007040600070406ull;                          ///< IA32_PAT reset value
};

/// Bits of Cpu::pending: reasons to leave the block loop at the next instruction boundary.
enum PendingBit : u32 {
    kPendingCodeWrite = 1u << 0,  ///< decoded code was overwritten (self-modifying code)
    kPendingHalt = 1u << 1,       ///< HLT executed
    kPendingStop = 1u << 2,       ///< the host asked the run to stop
    kPendingModeChange = 1u << 3, ///< decoding mode or privilege changed
    kPendingInterrupt = 1u << 4,  ///< an external interrupt or NMI may be deliverable
    kPendingShadow = 1u << 5,     ///< STI / MOV SS / POP SS: the next instruction runs in a shadow
    kPendingPagingChange = 1u << 6,  ///< translations changed: drop decoded blocks keyed by linear address
    kPendingIdleLoop = 1u << 7,   ///< a JMP to itself ran: the guest may be waiting for nothing
};

/// Instructions the decoder recognised but pmusim does not implement; each
/// execution raises #UD and is counted here so reports can list them.
struct MissingInsnReport {
    std::vector<std::string> names;   ///< interned mnemonics, indexed by Insn::imm of the #UD stub
    std::vector<u64> executions;      ///< how often each one raised #UD
    u32 intern(const std::string& mnemonic);
};

/// The core: registers, flags, segment and control state, the MMU, the MSR bus
/// and the event bus. One instance per simulated logical processor.
struct Cpu {
    explicit Cpu(MemoryBus& b) : bus(b), mmu(b, events) { mmu.attach(this); }
    Cpu(const Cpu&) = delete;

    u64 gpr[kGprSlots] = {};  ///< RAX..R15 and the always-zero slot kZeroReg
    u64 rip = 0;
    LazyFlags lf;             ///< OF SF ZF AF PF CF
    u64 rflags_other = kFixed1;  ///< every other RFLAGS bit (bit 1 reads as 1)
    u64 seg_base[kSegSlots] = {};  ///< effective base per segment for addressing (0 where ignored)
    SegmentCache seg[6];
    SegmentCache ldtr, tr;
    TableRegister gdtr, idtr;
    u64 cr0 = cr0::kET | cr0::kCD | cr0::kNW;
    u64 cr2 = 0, cr3 = 0, cr4 = 0, cr8 = 0, efer = 0;
    u64 pdpte[4] = {};           ///< PAE PDPTE registers (SDM Vol. 3, 4.4.1)
    u64 dr[8] = {0, 0, 0, 0, 0, 0, 0xFFFF0FF0, 0x400};  ///< DR0-DR3, DR6, DR7 (DR4/5 unused slots)
    SystemMsrs sys;
    /// x87 control state (only the control instructions are modelled, SDM Vol. 1, 8.1):
    /// control, status and tag words with their RESET values (SDM Vol. 3, Table 9-1).
    u16 fpu_cw = 0x0040, fpu_sw = 0, fpu_tw = 0x5555;
    u64 lin_mask = 0xFFFFFFFF;   ///< linear addresses wrap at 4 GiB outside IA-32e mode
    CodeBits code_bits = CodeBits::k16;
    u8 stack_bytes = 2;          ///< width of the stack pointer: 2 (SS.B=0), 4, or 8 in 64-bit mode
    u8 cpl = 0;
    u8 seg_check_mask = 0;       ///< bit s: accesses through segment s need limit/type checks
    u32 pending = 0;             ///< PendingBit mask
    u64 retired = 0;             ///< instructions retired since reset
    u64 shadow_at = ~0ull;       ///< interrupts are blocked while retired == shadow_at (SDM Vol. 3, 6.8.3)
    bool nmi_blocked = false;    ///< NMI handler running, until the next IRET (SDM Vol. 3, 6.7.1)

    MemoryBus& bus;                      ///< physical memory (page walks, PDPTE loads)
    EventBus events;
    Mmu mmu;
    MsrBus msrs;
    MissingInsnReport missing;
    PortBus* ports = nullptr;           ///< set by the Machine
    const CpuProfile* profile = nullptr;  ///< set by the Machine
    /// RDPMC source (the PMU model); without one RDPMC raises #GP(0) as for an invalid counter.
    std::function<u64(u32 ecx)> rdpmc;

    u64 rflags() const { return lf.get() | rflags_other; }
    void set_rflags(u64 v) {
        lf.set(v);
        rflags_other = (v & ~kArithFlags) | kFixed1;
    }
    bool df() const { return rflags_other & kDF; }
    unsigned iopl() const { return unsigned((rflags_other & kIOPL) >> 12); }
    bool protected_mode() const { return cr0 & cr0::kPE; }
    bool long_mode() const { return efer & efer::kLMA; }
    bool in_64bit_mode() const { return code_bits == CodeBits::k64; }

    /// Decode-cache key: code width (SDM Vol. 3, 5.2.1 / 3.4.5 D and L flags) and
    /// whether fetches are user-mode (CPL 3), which changes page rights.
    u8 mode_key() const { return u8(u8(code_bits) | (cpl == 3 ? 0x80 : 0)); }

    /// Recomputes everything derived from CR0, EFER and the segment caches: code
    /// and stack width, linear-address wrap, effective segment bases, MMU mode.
    /// Call after changing any of them.
    void update_mode();

    /// Emits a taken-branch event if anyone listens (cheap otherwise).
    void branch(BranchKind kind, u64 from, u64 to) {
        if (__builtin_expect(events.wants(EventKind::kBranch), 0)) emit_branch(kind, from, to);
    }
    void emit_branch(BranchKind kind, u64 from, u64 to);
};

}  // namespace pmusim
