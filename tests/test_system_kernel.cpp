// The system test kernel (tests/kernels/real_to_long.asm) runs from real mode to
// ring 3 in 64-bit mode and back through its own handlers; every value it
// records follows from the SDM rules cited next to the check.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

#include "sim/machine.h"
#include "sim/nasm.h"

using namespace pmusim;

namespace {

AssembledProgram kernel() {
    const std::string path = std::string(PMUSIM_SOURCE_DIR) + "/tests/kernels/real_to_long.asm";
    std::ifstream f(path);
    REQUIRE(f);
    return assemble_nasm(std::string((std::istreambuf_iterator<char>(f)), {}), path);
}

constexpr u64 RES = 0x500;

}  // namespace

TEST_CASE("system kernel: real mode to 64-bit ring 3 and back, with #PF, #GP, INT and SYSCALL") {
    const AssembledProgram k = kernel();
    Machine m;
    m.load(0x7C00, k.bytes.data(), k.bytes.size());
    m.start_real_mode(0, 0x7C00);
    std::vector<Event> exceptions;
    m.cpu().events.subscribe(EventKind::kException, [&](const Event& e) { exceptions.push_back(e); });
    const RunResult r = m.run(RunLimits{200000});
    INFO("stop " << stop_reason_name(r.reason) << " at " << std::hex << r.rip << " " << r.message);
    REQUIRE(r.reason == StopReason::kHalt);
    auto q = [&](u64 off) {
        u64 v = 0;
        m.peek(RES + off, &v, 8);
        return v;
    };
    Cpu& c = m.cpu();

    // Final state: 64-bit mode at CPL 0 after the exit handler's CLI; HLT.
    CHECK(r.rip == k.symbols.at("exit_handler") + 12 + 1 + 1);  // mov qword [R_DONE], imm32; cli; hlt
    CHECK(c.code_bits == CodeBits::k64);
    CHECK(c.cpl == 0);
    CHECK((c.efer & efer::kLMA) != 0);
    CHECK(q(0xA8) == 0x600D);

    // Real mode: INT 80h through the IVT ran the handler (SDM Vol. 3, 20.1.4).
    CHECK((q(0x00) & 0xFFFF) == 0x1234);

    // #GP: first in ring 0 (non-canonical address, error 0, CS 0x18), then in ring 3
    // (HLT at CPL 3, error 0, CS 0x33) (SDM Vol. 2, HLT; Vol. 1, 3.3.7.1).
    CHECK(q(0x08) == 2);
    CHECK(q(0x10) == 0);
    CHECK(q(0x18) == 0);
    CHECK(q(0x20) == 0x18);
    CHECK(q(0x28) == 0x33);

    // #PF: not present, supervisor read (error 0, CR2 0x300000), then a user read of a
    // supervisor page (P|U = 5, CR2 0x301000) (SDM Vol. 3, 4.7). The handler runs on IST1:
    // 6 qwords below 0x9E000 (SDM Vol. 3, 6.14.5).
    CHECK(q(0x30) == 2);
    CHECK(q(0x38) == 0x300000);
    CHECK(q(0x40) == 0x301000);
    CHECK(q(0x48) == 0);
    CHECK(q(0x50) == 5);
    CHECK(q(0x58) == 0x9E000 - 6 * 8);
    CHECK((q(0xA0) & 0xFFFFFFFF) == 0xCAFEBABE);  // the retried load after mapping

    // Ring 3: CS 0x33; INT 80h from ring 3 pushed CS 0x33 and SS 0x2B on the RSP0
    // stack, 5 qwords below 0x9F000 (SDM Vol. 3, 6.14.2).
    CHECK((q(0xB0) & 0xFFFF) == 0x33);
    CHECK(q(0x60) == 1);
    CHECK(q(0x68) == 0x33);
    CHECK(q(0x70) == 0x2B);
    CHECK(q(0x78) == 0x9F000 - 5 * 8);

    // SYSCALL: RCX = next RIP, R11 = RFLAGS (IF=1, bit 1), CS = STAR[47:32] (SDM Vol. 2, SYSCALL).
    CHECK(q(0x80) == 1);
    CHECK(q(0x88) == k.symbols.at("user") + 7 + 2 + 2);  // mov [R_USER_CS], cs (7); int 0x80 (2); syscall (2)
    CHECK(q(0x90) == 0x202);
    CHECK((q(0x98) & 0xFFFF) == 0x18);

    // The exceptions the kernel took, in order, with their error codes.
    REQUIRE(exceptions.size() == 4);
    CHECK(exceptions[0].vector == vec::GP);
    CHECK(exceptions[1].vector == vec::PF);
    CHECK(exceptions[2].vector == vec::GP);
    CHECK(exceptions[3].vector == vec::PF);
    CHECK(exceptions[3].error_code == 5);
}

TEST_CASE("x87 control instructions: FNINIT, FLDCW, FNSTCW, FNSTSW, and #NM with CR0.TS") {
    const AssembledProgram p = assemble_nasm(R"(
        bits 32
        org 0x1000
            fnstcw [0x2000]          ; RESET value 0040H
            fninit
            fnstcw [0x2002]          ; 037FH after FNINIT
            mov word [0x2004], 0x0272
            fldcw [0x2004]
            fnstcw [0x2006]
            mov ax, 0xFFFF
            fnstsw ax                ; status word 0
            mov [0x2008], ax
            mov eax, cr0
            or eax, 8                ; CR0.TS
            mov cr0, eax
            fninit                   ; #NM
            hlt)",
                                             "x87.asm");
    Machine m;
    m.load(0x1000, p.bytes.data(), p.bytes.size());
    m.reset();
    m.set_flat_mode(CodeBits::k32);
    m.cpu().rip = 0x1000;
    m.cpu().gpr[RSP] = 0x80000;
    const RunResult r = m.run(RunLimits{100});
    REQUIRE(r.reason == StopReason::kException);
    CHECK(r.fault->vector == vec::NM);
    u16 w[5];
    m.peek(0x2000, w, sizeof w);
    CHECK(w[0] == 0x0040);  // SDM Vol. 3, Table 9-1
    CHECK(w[1] == 0x037F);  // SDM Vol. 2, FNINIT
    CHECK(w[3] == 0x0272);
    CHECK(w[4] == 0);       // FNSTSW AX: status word after FNINIT
}
