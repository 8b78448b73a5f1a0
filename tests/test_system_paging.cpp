// Paging (SDM Vol. 3, ch. 4): #PF error codes and CR2 for each cause, the #PF
// frame, 32-bit paging with 4 KiB and 4 MiB pages, accessed/dirty flags and TLB
// invalidation. Each program is NASM at 0x1000 started from a preset; every
// exception vector leads to a recording handler (vector, RSP, CR2 at RES+0x100..).
// Expected values follow from the SDM section cited next to each check.
#include <catch2/catch.hpp>

#include "sim/machine.h"
#include "sim/nasm.h"
#include "sim/presets.h"
#include "tests/support/system_fixture.h"

using namespace pmusim;
namespace L = preset_layout;

namespace {

constexpr u64 RES = test::kRes;
constexpr u64 P = 1, RW = 2, US = 4, A = 0x20, D = 0x40, PS = 0x80, XD = 1ull << 63;

/// A program on a preset. Vectors 0-31 go to `handlers + 32 * v`, which stores the
/// vector at RES+0x100, RSP at RES+0x108 and CR2 at RES+0x110, then halts at fault_halt.
/// The shared fixture with this file's handler options.
struct Sys : test::SystemFixture {
    Sys(StartPreset preset, const std::string& body) : SystemFixture(preset, body, Options{.record_cr2 = true}) {}
};

// ---- 4-level paging: one access per run --------------------------------------

/// Inputs: RDI = address, ESI = 0 read / 1 write / 2 fetch (CALL), EDX = 1 for CPL 3,
/// R8 bit 0 clears CR0.WP, bit 1 clears IA32_EFER.NXE. The access sits at `rd`, `wr`
/// or is the CALL's target; each is preceded by XOR ECX, ECX (RFLAGS = ZF|PF|bit 1 |
/// IF from the IRETQ frame). Success ends in INT 80h -> done (a DPL-3 gate).
const char* kAccess64 = R"(
start:
    test r8d, 1
    jz wp_kept
    mov rax, cr0
    btr rax, 16
    mov cr0, rax
wp_kept:
    test r8d, 2
    jz nxe_kept
    mov ecx, 0xC0000080
    rdmsr
    btr eax, 11
    wrmsr
nxe_kept:
    test edx, edx
    jz access
    push 0x2B
    push 0x70000
    push 0x202
    push 0x33
    push access
    iretq
access:
    mov rbx, 0x1122334455667788
    cmp esi, 1
    je do_write
    ja do_fetch
    xor ecx, ecx
rd: mov rax, [rdi]
    jmp accessed
do_write:
    xor ecx, ecx
wr: mov [rdi], rbx
    jmp accessed
do_fetch:
    xor ecx, ecx
    call rdi
accessed:
    int 0x80
done:
    hlt
)";

constexpr u64 kPt = 0x30000;                           // 4 KiB page table for 0x400000..0x5FFFFF
constexpr u64 kPde = L::kPageTables + 0x2000 + 2 * 8;  // preset PD 0, entry 2 (0x400000)
constexpr u64 kTarget = 0x405008;                      // PTE 5 of kPt
constexpr u64 kPte = kPt + 5 * 8;

enum Acc { kRd, kWr, kFx };

struct PfCase {
    const char* name;
    u64 pte;       ///< PTE flags for kTarget (0: not present), ORed with its frame
    u64 pde_bits;  ///< extra bits ORed into the PDE pointing at kPt
    Acc acc;
    bool user;
    unsigned opts;  ///< R8
    int err;        ///< #PF error code, or -1 if the access completes
};

/// Sets up the preset with kPt mapping 0x400000..0x5FFFFF with 4 KiB pages (P|RW|US,
/// A and D clear) and `c` applied, runs the access.
int run_access(Sys& s, const PfCase& c) {
    for (u64 k = 0; k < 512; ++k) s.put(kPt + k * 8, (0x400000 + k * 0x1000) | P | RW | US);
    s.put(kPte, c.pte ? (kTarget & ~0xFFFull) | c.pte : 0);
    s.put(kPde, kPt | P | RW | US | c.pde_bits);
    s.put(kTarget, 0xC3, 1);  // RET, for fetches that succeed
    set_idt_gate(s.m, 0x80, s.sym("done"), 3);
    Cpu& cpu = s.m.cpu();
    cpu.gpr[RDI] = kTarget;
    cpu.gpr[RSI] = c.acc;
    cpu.gpr[RDX] = c.user;
    cpu.gpr[R8] = c.opts;
    return s.run();
}

}  // namespace

TEST_CASE("4-level paging: #PF error code and CR2 and the pushed frame for each cause",
          "[system][paging]") {
    // SDM Vol. 3, 4.7 (error code: P=1 W/R=2 U/S=4 RSVD=8 I/D=16), 4.6 (access rights),
    // 4.5 (reserved bits: 51:MAXPHYADDR, and XD when NXE=0), 4.6.1 (NX).
    const PfCase cases[] = {
        {"not present, supervisor read", 0, 0, kRd, false, 0, 0x0},
        {"not present, supervisor write", 0, 0, kWr, false, 0, 0x2},
        {"not present, user read", 0, 0, kRd, true, 0, 0x4},
        {"not present, supervisor fetch (I/D with NXE)", 0, 0, kFx, false, 0, 0x10},
        {"read-only page, supervisor write, CR0.WP=1", P | US, 0, kWr, false, 0, 0x3},
        {"read-only page, supervisor write, CR0.WP=0: allowed", P | US, 0, kWr, false, 1, -1},
        {"supervisor page, user read", P | RW, 0, kRd, true, 0, 0x5},
        {"supervisor page, user write", P | RW, 0, kWr, true, 0, 0x7},
        {"supervisor page, user fetch", P | RW, 0, kFx, true, 0, 0x15},
        {"read-only user page, user write", P | US, 0, kWr, true, 0, 0x7},
        {"read-only user page, user write, CR0.WP=0 (WP does not matter at CPL 3)", P | US, 0, kWr,
         true, 1, 0x7},
        {"read-only user page, user read: allowed", P | US, 0, kRd, true, 0, -1},
        {"reserved bit 51 in the PDE, supervisor read", P | RW | US, 1ull << 51, kRd, false, 0,
         0x9},
        {"reserved bit 51 in the PDE, user write", P | RW | US, 1ull << 51, kWr, true, 0, 0xF},
        {"reserved bit 36 (MAXPHYADDR 36) in the PTE", P | RW | US | (1ull << 36), 0, kRd, false, 0,
         0x9},
        {"XD set with IA32_EFER.NXE=0 is reserved", P | RW | US | XD, 0, kRd, false, 2, 0x9},
        {"NX page, supervisor fetch", P | RW | US | XD, 0, kFx, false, 0, 0x11},
        {"NX page, user fetch", P | RW | US | XD, 0, kFx, true, 0, 0x15},
        {"NX page, supervisor read: allowed", P | RW | US | XD, 0, kRd, false, 0, -1},
        {"user page, user fetch: allowed", P | RW | US, 0, kFx, true, 0, -1},
    };
    for (const PfCase& c : cases) {
        DYNAMIC_SECTION(c.name) {
            Sys s(StartPreset::kLong64, kAccess64);
            const int vector = run_access(s, c);
            if (c.err < 0) {
                CHECK(vector == -1);
                continue;
            }
            REQUIRE(vector == vec::PF);
            CHECK(s.frame(0) == u64(c.err));  // error code (SDM Vol. 3, 4.7)
            CHECK(s.cr2() == kTarget);  // CR2 = faulting linear address (SDM Vol. 3, 6.15, #PF)
            // Faults push the RIP of the faulting instruction; a fetch fault that of the
            // target (SDM Vol. 3, 6.5); 64-bit mode pushes SS:RSP unconditionally and
            // aligns the new RSP to 16 (SDM Vol. 3, 6.14.2); from CPL 3 the stack is RSP0.
            const u64 rip = c.acc == kRd ? s.sym("rd") : c.acc == kWr ? s.sym("wr") : kTarget;
            const u64 rsp = (c.user ? 0x70000 : 0x80000) - (c.acc == kFx ? 8 : 0);
            CHECK(s.frame(1) == rip);
            CHECK(s.frame(2) == (c.user ? 0x33u : 0x10u));
            CHECK(s.frame(3) == (c.user ? 0x246u : 0x46u));
            CHECK(s.frame(4) == rsp);
            CHECK(s.frame(5) == (c.user ? 0x2Bu : 0x18u));
            CHECK(s.phys(RES + 0x108) == (c.user ? L::kRsp0 : rsp & ~0xFull) - 6 * 8);
        }
    }
}

TEST_CASE("a write allowed by CR0.WP=0 lands in memory and sets the dirty flag",
          "[system][paging]") {
    // SDM Vol. 3, 4.6 (CR0.WP=0: supervisor writes ignore R/W), 4.8 (A and D).
    Sys s(StartPreset::kLong64, kAccess64);
    REQUIRE(run_access(s, {"", P | US, 0, kWr, false, 1, -1}) == -1);
    CHECK(s.phys(kTarget) == 0x1122334455667788);
    CHECK(s.phys(kPte) == (kTarget & ~0xFFFull | P | US | A | D));
}

TEST_CASE("accessed and dirty flags after reads and writes (4-level paging)", "[system][paging]") {
    // SDM Vol. 3, 4.8: A is set in every paging-structure entry used for a translation;
    // D only in the entry that maps the page, on the first write (also when an earlier
    // read already cached the translation).
    Sys s(StartPreset::kLong64, R"(
start:
    mov rax, [0x401000]
    mov qword [0x402000], 5
    mov rax, [0x404000]
    mov qword [0x404008], 6
done:
    hlt
)");
    for (u64 k = 0; k < 512; ++k) s.put(kPt + k * 8, (0x400000 + k * 0x1000) | P | RW | US);
    s.put(kPde, kPt | P | RW | US);
    REQUIRE(s.run() == -1);
    CHECK(s.phys(kPt + 1 * 8) == (0x401000 | P | RW | US | A));
    CHECK(s.phys(kPt + 2 * 8) == (0x402000 | P | RW | US | A | D));
    CHECK(s.phys(kPt + 3 * 8) == (0x403000 | P | RW | US));
    CHECK(s.phys(kPt + 4 * 8) == (0x404000 | P | RW | US | A | D));
    CHECK(s.phys(kPde) == (kPt | P | RW | US | A));  // a non-leaf entry gets A, never D
    CHECK(s.phys(0x402000) == 5);
    CHECK(s.phys(0x404008) == 6);
}

TEST_CASE("INVLPG and a CR3 reload make a changed mapping visible", "[system][paging]") {
    // SDM Vol. 3, 4.10.4.1: INVLPG drops the translations of the page; MOV CR3 drops
    // all non-global ones. Afterwards the access uses the new entry. Not-present
    // entries are never cached (4.10.2.3), so the last read faults.
    Sys s(StartPreset::kLong64, R"(
start:
    mov rax, [0x400010]
    mov [RES], rax
    mov qword [0x30000], 0x401003
    invlpg [0x400010]
    mov rax, [0x400010]
    mov [RES + 8], rax
    mov qword [0x30000], 0x402003
    mov rax, cr3
    mov cr3, rax
    mov rax, [0x400010]
    mov [RES + 16], rax
    mov qword [0x30000], 0
    invlpg [0x400000]
last:
    mov rax, [0x400010]
done:
    hlt
)");
    s.put(kPde, kPt | P | RW);
    s.put(kPt, 0x400000 | P | RW);
    for (u64 k = 0; k < 3; ++k) s.put(0x400010 + k * 0x1000, 0xA0 + k);
    REQUIRE(s.run() == vec::PF);
    CHECK(s.phys(RES) == 0xA0);
    CHECK(s.phys(RES + 8) == 0xA1);
    CHECK(s.phys(RES + 16) == 0xA2);
    CHECK(s.frame(0) == 0);  // not present, supervisor read (SDM Vol. 3, 4.7)
    CHECK(s.frame(1) == s.sym("last"));
    CHECK(s.cr2() == 0x400010);
}

// ---- 32-bit paging ---------------------------------------------------------

TEST_CASE("32-bit paging: 4 KiB pages and 4 MiB pages with CR4.PSE and faults and A/D flags",
          "[system][paging]") {
    // Page directory at 0x30000; PDE 0 -> page table at 0x31000 (identity 0..4 MiB,
    // except 0x3FF000 -> 0x500000 and 0x3FE000/0x3FD000 not present); PDE 1 has PS=1
    // and address 0x800000. With CR4.PSE=1 it maps a 4 MiB page at 0x800000; with
    // PSE=0 the PS flag is ignored and 0x800000 holds a page table (SDM Vol. 3, 4.3,
    // Table 4-4/4-5). The #PF handler maps the faulting page and returns: a fault
    // pushes the EIP of the faulting instruction, which then runs again (SDM Vol. 3, 6.5).
    const bool pse = GENERATE(false, true);
    Sys s(StartPreset::kProtected32, R"(
start:
    mov eax, 0x30000
    mov cr3, eax
    test ebx, ebx
    jz no_pse
    mov eax, cr4
    or eax, 0x10
    mov cr4, eax
no_pse:
    mov eax, cr0
    or eax, 0x80000000
    mov cr0, eax
    mov eax, [0x3FF000]
    mov [RES], eax
    mov eax, [0x403000]
    mov [RES + 4], eax
    mov dword [0x3FF004], 0x77
    xor ecx, ecx
w_np:
    mov dword [0x3FE000], 0x55
f_np:
    call 0x3FD000
done:
    hlt

pf:                                 ; records error code, CR2, EIP, CS, EFLAGS, ESP
    mov ebx, [pf_n]
    shl ebx, 5
    mov eax, [esp]
    mov [RES + 0x40 + ebx], eax
    mov eax, cr2
    mov [RES + 0x44 + ebx], eax
    mov eax, [esp + 4]
    mov [RES + 0x48 + ebx], eax
    mov eax, [esp + 8]
    mov [RES + 0x4C + ebx], eax
    mov eax, [esp + 12]
    mov [RES + 0x50 + ebx], eax
    mov [RES + 0x54 + ebx], esp
    inc dword [pf_n]
    mov eax, cr2
    shr eax, 12
    and eax, 0x3FF
    or dword [0x31000 + eax * 4], 1  ; make the page present
    add esp, 4
    iret
pf_n: dd 0
)");
    set_idt_gate(s.m, vec::PF, s.sym("pf"));
    std::vector<u32> pd(1024, 0), pt(1024, 0), pt2(1024, 0);
    for (u32 k = 0; k < 1024; ++k) pt[k] = (k << 12) | P | RW;
    pt[0x3FF] = 0x500000 | P | RW;
    pt[0x3FE] = 0x3FE000 | RW;  // not present
    pt[0x3FD] = 0x3FD000 | RW;  // not present
    pd[0] = 0x31000 | P | RW;
    pd[1] = 0x800000 | PS | P | RW;
    pt2[3] = 0x600000 | P | RW;
    s.m.load(0x30000, pd.data(), 4096);
    s.m.load(0x31000, pt.data(), 4096);
    s.m.load(0x800000, pt2.data(), 4096);
    s.put(0x500000, 0xAAAA0001, 4);
    s.put(0x803000, 0xBBBB0002, 4);
    s.put(0x600000, 0xCCCC0003, 4);
    s.put(0x3FD000, 0xC3, 1);  // RET
    s.m.cpu().gpr[RBX] = pse;
    REQUIRE(s.run() == -1);

    CHECK(s.phys(RES, 4) == 0xAAAA0001);                           // 4 KiB page: PTE frame + offset
    CHECK(s.phys(RES + 4, 4) == (pse ? 0xBBBB0002 : 0xCCCC0003));  // 4 MiB page, or PS ignored
    CHECK(s.phys(0x500004, 4) == 0x77);
    // A/D (SDM Vol. 3, 4.8): the PTE written through gets A and D; PDE 0 gets A only.
    CHECK(s.phys(0x31000 + 0x3FF * 4, 4) == (0x500000 | P | RW | A | D));
    CHECK(s.phys(0x30000, 4) == (0x31000 | P | RW | A));
    // The 4 MiB PDE was read only: A set, D clear. Without PSE it is a non-leaf entry.
    CHECK(s.phys(0x30004, 4) == (0x800000 | PS | P | RW | A));
    CHECK(s.phys(0x800000 + 3 * 4, 4) == (pse ? (0x600000 | P | RW) : (0x600000 | P | RW | A)));

    // Two faults: not-present write (W/R=1) and not-present fetch. 32-bit paging never
    // sets I/D without SMEP (SDM Vol. 3, 4.7). Same-privilege frame: error code, EIP, CS,
    // EFLAGS (ZF|PF after XOR) and no SS:ESP (SDM Vol. 3, 6.12.1, Figure 6-4).
    auto slot = [&](unsigned n, unsigned k) { return s.phys(RES + 0x40 + n * 0x20 + k * 4, 4); };
    CHECK(s.phys(s.sym("pf_n"), 4) == 2);
    CHECK(slot(0, 0) == 2);
    CHECK(slot(0, 1) == 0x3FE000);
    CHECK(slot(0, 2) == s.sym("w_np"));
    CHECK(slot(0, 3) == 0x08);
    CHECK(slot(0, 4) == 0x46);
    CHECK(slot(0, 5) == 0x80000 - 16);
    CHECK(slot(1, 0) == 0);
    CHECK(slot(1, 1) == 0x3FD000);
    CHECK(slot(1, 2) == 0x3FD000);          // the fetch fault pushes the target EIP
    CHECK(slot(1, 5) == 0x80000 - 4 - 16);  // below CALL's return address
    CHECK(slot(1, 4) == 0x46);
    CHECK(s.phys(0x3FE000, 4) == 0x55);  // the retried write
}

TEST_CASE("32-bit paging with CR4.PSE: reserved bits of a 4 MiB PDE (MAXPHYADDR 36)",
          "[system][paging]") {
    // SDM Vol. 3, 4.3: with PSE-36, bits 21:(M-19) of a PDE mapping a 4 MiB page are
    // reserved (M = min(40, MAXPHYADDR) = 36: bits 21:17); an access through it is a
    // #PF with P and RSVD set (4.7). Bits 16:13 (PA 35:32) are address bits.
    const unsigned bit = GENERATE(21u, 17u, 20u);
    Sys s(StartPreset::kProtected32, R"(
start:
    mov eax, 0x30000
    mov cr3, eax
    mov eax, cr4
    or eax, 0x10
    mov cr4, eax
    mov eax, cr0
    or eax, 0x80000000
    mov cr0, eax
probe:
    mov eax, [0x403000]
done:
    hlt
)");
    std::vector<u32> pd(1024, 0);
    for (u32 k = 0; k < 1024; ++k) pd[k] = (k << 22) | PS | P | RW;  // identity, 4 MiB pages
    pd[1] |= 1u << bit;
    s.m.load(0x30000, pd.data(), 4096);
    INFO("bit " << bit);
    REQUIRE(s.run() == vec::PF);
    CHECK(s.frame(0) == (P | 8));
    CHECK(s.frame(1) == s.sym("probe"));
    CHECK(s.cr2() == 0x403000);
}

TEST_CASE("PAE paging: I/D with NXE and reserved bits 62:MAXPHYADDR", "[system][paging]") {
    // The protected32-pae preset: PDPT at kPageTables + 1000h, PDs of 2 MiB pages,
    // EFER.NXE = 1. PDE 2 (0x400000) is replaced by a page table at 0x30000.
    // SDM Vol. 3, 4.4.2: with PAE paging bits 62:MAXPHYADDR of a present PDE or PTE are
    // reserved (unlike 4-level paging, where 62:52 are ignored), bits 20:13 of a 2 MiB
    // PDE too, and XD when NXE = 0; 4.7: I/D is set for fetches with PAE and NXE.
    struct Case {
        const char* name;
        u64 pte;  ///< flags ORed with the frame (0: not present)
        u64 pde;  ///< PDE 2 (0: the default pointer to the page table)
        bool fetch;
        u32 err;
    };
    const Case cases[] = {
        {"not-present fetch", 0, 0, true, 0x10},
        {"NX page fetch", P | RW | XD, 0, true, 0x11},
        {"reserved bit 40 in a PTE", P | RW | (1ull << 40), 0, false, 0x9},
        {"bit 52 in a PTE is reserved with PAE paging", P | RW | (1ull << 52), 0, false, 0x9},
        {"bit 62 in a PDE is reserved with PAE paging", P | RW, 0x30000 | P | RW | (1ull << 62),
         false, 0x9},
        {"bit 13 in a 2 MiB PDE", P | RW, 0x400000 | PS | P | RW | (1ull << 13), false, 0x9},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.name) {
            Sys s(StartPreset::kProtected32Pae, R"(
start:
    test esi, esi
    jnz fetch
rd: mov eax, [edi]
    jmp done
fetch:
    call edi
done:
    hlt
)");
            for (u64 k = 0; k < 512; ++k) s.put(kPt + k * 8, (0x400000 + k * 0x1000) | P | RW);
            s.put(kPte, c.pte ? (kTarget & ~0xFFFull) | c.pte : 0);
            s.put(kPde, c.pde ? c.pde : kPt | P | RW);
            s.put(kTarget, 0xC3, 1);
            s.m.cpu().gpr[RDI] = kTarget;
            s.m.cpu().gpr[RSI] = c.fetch;
            REQUIRE(s.run() == vec::PF);
            CHECK(s.frame(0) == c.err);
            CHECK(s.frame(1) == (c.fetch ? kTarget : s.sym("rd")));
            CHECK(s.cr2() == kTarget);
        }
    }
}

TEST_CASE("PAE paging: MOV CR3 with a reserved bit in a present PDPTE is #GP(0)",
          "[system][paging]") {
    // SDM Vol. 3, 4.4.1, Table 4-8: bits 2:1, 8:5 and 63:MAXPHYADDR of a present PDPTE
    // are reserved; loading the PDPTE registers (MOV CR3) with one set raises #GP(0)
    // and leaves CR3 unchanged (SDM Vol. 2, MOV CR).
    const u64 bit = GENERATE(1ull << 1, 1ull << 5, 1ull << 40, 1ull << 52, 1ull << 62);
    Sys s(StartPreset::kProtected32Pae, R"(
start:
    mov eax, 0x31000
probe:
    mov cr3, eax
done:
    hlt
)");
    for (u64 k = 0; k < 4; ++k)
        s.put(0x31000 + k * 8, (L::kPageTables + 0x2000 + k * 0x1000) | P | (k == 3 ? bit : 0));
    INFO("bit mask " << std::hex << bit);
    REQUIRE(s.run() == vec::GP);
    CHECK(s.frame(0) == 0);
    CHECK(s.frame(1) == s.sym("probe"));
    CHECK(s.m.cpu().cr3 == L::kPageTables + 0x1000);
}
