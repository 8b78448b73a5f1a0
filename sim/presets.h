// Start-state presets: ready-made system state so programs can start in any mode.
#pragma once
#include <optional>
#include <string>

#include "sim/machine.h"

namespace pmusim {

enum class StartPreset : u8 {
    kReal16,          ///< real mode, CS = DS = ES = SS = 0, IVT at 0
    kProtected32,     ///< 32-bit protected mode, flat ring-0 segments, paging off
    kProtected32Pae,  ///< as kProtected32 with PAE paging identity-mapping the first 4 GiB (2 MiB pages)
    kLong64,          ///< IA-32e 64-bit mode, 4-level paging identity-mapping the first 4 GiB (2 MiB pages)
};
const char* preset_name(StartPreset p);
std::optional<StartPreset> preset_from_name(const std::string& name);

/// Where the presets put the system structures (physical = linear addresses).
/// GDT selectors follow the Linux x86-64 layout so SYSCALL/SYSRET and
/// SYSENTER/SYSEXIT work with IA32_STAR = 0x0023'0010'00000000 and
/// IA32_SYSENTER_CS = 0x10.
namespace preset_layout {
inline constexpr u64 kGdt = 0x100000, kIdt = 0x101000, kTss = 0x102000, kStubs = 0x103000;
inline constexpr u64 kStubSize = 16;        ///< bytes per default handler stub (one per vector)
inline constexpr u64 kRsp0 = 0x10F000;      ///< ring-0 stack top in the TSS (RSP0/ESP0)
inline constexpr u64 kIst1 = 0x10E000;      ///< IST1 stack top (64-bit TSS)
inline constexpr u64 kPageTables = 0x110000;
inline constexpr u64 kStackTop = 0x80000;   ///< initial RSP of the program
inline constexpr u16 kCode32 = 0x08, kCode64 = 0x10, kData = 0x18, kUserCode32 = 0x23, kUserData = 0x2B,
                     kUserCode64 = 0x33, kTssSel = 0x40;
}  // namespace preset_layout

/// Puts the machine into `preset` with RIP = `entry` (an offset in CS; for kReal16
/// CS = 0). Builds the GDT, a TSS, an IDT whose every gate leads to a default stub
/// (`cli; hlt` at kStubs + 16 * vector, so an unhandled vector halts the core
/// at a RIP that names it), and page tables as the preset needs. Exceptions are
/// delivered (set_stop_on_exception(false)). Throws std::out_of_range if RAM is
/// smaller than 2 MiB (the structures live at 1 MiB).
void apply_preset(Machine& m, StartPreset preset, u64 entry);

/// Vector of the default stub at `rip`, if `rip` lies in the stub area (unhandled interrupt).
std::optional<u8> default_stub_vector(u64 rip);

/// Points IDT entry `vector` at `handler` with the given DPL, gate type and IST
/// (the IST is ignored outside IA-32e mode). The gate's code selector is the
/// preset's ring-0 code segment.
void set_idt_gate(Machine& m, u8 vector, u64 handler, unsigned dpl = 0, bool trap = false, unsigned ist = 0);

}  // namespace pmusim
