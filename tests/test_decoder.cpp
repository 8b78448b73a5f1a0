// Decoder wrapper, Capstone 4 fixups, and the decode cache.
#include <catch2/catch.hpp>

#include "isa/decoder.h"
#include "tests/support/asm_harness.h"

using namespace pmusim;
using namespace pmusim::test;

namespace {

DecodedInsn decode64(std::initializer_list<u8> bytes, DecodeStatus expect = DecodeStatus::kOk) {
    static Decoder dec;
    std::vector<u8> b(bytes);
    DecodedInsn d;
    REQUIRE(dec.decode(b.data(), b.size(), 0x1000, CodeBits::k64, d) == expect);
    return d;
}

}  // namespace

TEST_CASE("prefix scan: legacy prefixes, REX only directly before the opcode") {
    const u8 b[] = {0x66, 0xF3, 0x64, 0x48, 0x89, 0xC0};
    Prefixes p = scan_prefixes(b, sizeof b, CodeBits::k64);
    CHECK(p.opsize);
    CHECK(p.rep);
    CHECK(p.seg == FS);
    CHECK(p.rex == 0x48);
    CHECK(p.count == 4);
    // A REX followed by a legacy prefix is ignored (SDM Vol. 2, 2.2.1).
    const u8 c[] = {0x48, 0x66, 0x89, 0xC0};
    CHECK(scan_prefixes(c, sizeof c, CodeBits::k64).rex == 0);
    // 64-bit mode ignores DS/ES/SS/CS overrides (SDM Vol. 1, 3.3.7.1).
    const u8 d[] = {0x3E, 0x8B, 0x00};
    CHECK(scan_prefixes(d, sizeof d, CodeBits::k64).seg == kNoSeg);
    CHECK(scan_prefixes(d, sizeof d, CodeBits::k32).seg == DS);
}

TEST_CASE("operand and address sizes follow mode, REX.W, 66 and 67") {
    Prefixes none, p66, p67, rexw;
    p66.opsize = true;
    p67.addrsize = true;
    rexw.rex = 0x48;
    CHECK(operand_size(none, CodeBits::k16) == 2);
    CHECK(operand_size(p66, CodeBits::k16) == 4);
    CHECK(operand_size(none, CodeBits::k32) == 4);
    CHECK(operand_size(p66, CodeBits::k32) == 2);
    CHECK(operand_size(none, CodeBits::k64) == 4);
    CHECK(operand_size(rexw, CodeBits::k64) == 8);
    CHECK(address_size(none, CodeBits::k64) == 8);
    CHECK(address_size(p67, CodeBits::k64) == 4);
    CHECK(address_size(p67, CodeBits::k32) == 2);
    CHECK(address_size(p67, CodeBits::k16) == 4);
}

TEST_CASE("fixup: F3 0F C7 /7 is RDPID, which Capstone 4 decodes as RDSEED") {
    DecodedInsn d = decode64({0xF3, 0x0F, 0xC7, 0xF9});  // rdpid rcx
    CHECK(d.op == Op::kRdpid);
    CHECK(d.length == 4);
    CHECK(d.ops[0].reg == RCX);
    CHECK(d.ops[0].size == 8);
    CHECK(d.text == "rdpid rcx");
    DecodedInsn r = decode64({0xF3, 0x41, 0x0F, 0xC7, 0xFA});  // rdpid r10
    CHECK(r.ops[0].reg == R10);
    CHECK(r.length == 5);
    // Without F3 the same bytes are RDSEED, which is not ours to fix.
    CHECK(decode64({0x0F, 0xC7, 0xF9}).op == Op::kUnknown);
}

TEST_CASE("fixup: register forms of the hint-NOP space 0F 18..0F 1F are NOPs, Capstone 4 rejects them") {
    for (u8 op2 = 0x18; op2 <= 0x1F; ++op2) {
        DecodedInsn d = decode64({0x48, 0x0F, op2, 0xC1});
        CHECK(d.op == Op::NOP);
        CHECK(d.length == 4);
    }
    CHECK(decode64({0xF3, 0x0F, 0x1E, 0xFA}).op == Op::ENDBR64);  // still ENDBR64
}

TEST_CASE("fixup: 66-prefixed near branches in 64-bit mode keep rel32 (Intel), Capstone 4 follows AMD") {
    // 66 E9 rel32: 6 bytes on Intel processors; the target uses the full displacement.
    DecodedInsn j = decode64({0x66, 0xE9, 0x10, 0x00, 0x00, 0x00});
    CHECK(j.op == Op::JMP);
    CHECK(j.length == 6);
    CHECK(u64(j.ops[0].imm) == 0x1000 + 6 + 0x10);
    DecodedInsn c = decode64({0x66, 0xE8, 0x00, 0x01, 0x00, 0x00});
    CHECK(c.op == Op::CALL);
    CHECK(c.length == 6);
    CHECK(u64(c.ops[0].imm) == 0x1000 + 6 + 0x100);
    DecodedInsn jcc = decode64({0x66, 0x0F, 0x84, 0xFA, 0xFF, 0xFF, 0xFF});
    CHECK(jcc.op == Op::JE);
    CHECK(jcc.length == 7);
    CHECK(u64(jcc.ops[0].imm) == 0x1000 + 7 - 6);
}

TEST_CASE("decoder reports truncated and invalid byte sequences") {
    decode64({0x48, 0xB8, 0x01, 0x02}, DecodeStatus::kTruncated);  // movabs rax, imm64 cut short
    decode64({0x0F, 0x04}, DecodeStatus::kInvalid);                // 0F 04 is not an opcode
}

TEST_CASE("an invalid opcode raises #UD with RIP at it") {
    auto r = run_asm(64, "nop\ndb 0x0F, 0x04\nhlt");  // 0F 04 is undefined
    REQUIRE(r.run.reason == StopReason::kException);
    CHECK(r.run.fault->vector == vec::UD);
    CHECK(r.run.rip == kCodeBase + 1);
    CHECK(r.run.instructions == 1);
}

TEST_CASE("decode cache: code written at run time is re-decoded before it executes") {
    // The program overwrites the immediate of an instruction later in the same
    // block, and that instruction must see the new bytes (SDM Vol. 3, 11.6).
    auto r = run_asm(64, R"(
        mov byte [rel target + 1], 42
    target:
        mov al, 7
        hlt)");
    CHECK(r.run.reason == StopReason::kHalt);
    CHECK((r.reg(RAX) & 0xFF) == 42);
}

TEST_CASE("decode cache: code copied at run time and called executes the new bytes") {
    auto r = run_asm(64, R"(
        lea rsi, [rel stub]
        mov rdi, 0x30000
        mov ecx, stub_end - stub
        rep movsb
        mov rax, 0x30000
        call rax
        mov byte [0x30001], 9      ; patch the copy: mov eax, 9 instead of 5
        mov rax, 0x30000
        mov rbx, 0
        call rax
        hlt
    stub:
        mov eax, 5
        add rbx, rax
        ret
    stub_end:)");
    CHECK(r.run.reason == StopReason::kHalt);
    CHECK(r.reg(RBX) == 9);
    // Only the patch hits a page holding decoded code; the first copy did not.
    CHECK(r.machine->decode_cache().stats().invalidations == 1);
}

TEST_CASE("host loads invalidate decoded code") {
    auto m = machine_with(64, "mov eax, 1\nhlt");
    CHECK(m->run().reason == StopReason::kHalt);
    CHECK(m->cpu().gpr[RAX] == 1);
    const u8 patch[] = {0xB8, 0x02, 0x00, 0x00, 0x00};  // mov eax, 2
    m->load(kCodeBase, patch, sizeof patch);
    m->cpu().rip = kCodeBase;
    CHECK(m->run().reason == StopReason::kHalt);
    CHECK(m->cpu().gpr[RAX] == 2);
}

TEST_CASE("run loop: instruction limits are exact, also inside a block") {
    auto m = machine_with(64, "l: inc eax\ninc ebx\njmp l");
    RunResult r = m->run(RunLimits{7});
    CHECK(r.reason == StopReason::kInstructionLimit);
    CHECK(r.instructions == 7);
    CHECK(m->cpu().gpr[RAX] == 3);
    CHECK(m->cpu().gpr[RBX] == 2);
    CHECK(r.rip == kCodeBase + 2);  // the second inc is next
    RunResult s = m->step();
    CHECK(s.instructions == 1);
    CHECK(m->cpu().gpr[RBX] == 3);
}

TEST_CASE("run loop: stop addresses stop before the instruction at them") {
    auto m = machine_with(64, "mov eax, 1\nmov ebx, 2\nstop: mov ecx, 3\nhlt");
    m->set_stop_addresses({kCodeBase + 10});
    RunResult r = m->run();
    CHECK(r.reason == StopReason::kStopAddress);
    CHECK(r.rip == kCodeBase + 10);
    CHECK(r.instructions == 2);
    CHECK(m->cpu().gpr[RCX] == 0);
    // Running again from the stop address goes on past it.
    CHECK(m->run().reason == StopReason::kHalt);
    CHECK(m->cpu().gpr[RCX] == 3);
}

TEST_CASE("events: taken branches are reported with kind, source and target") {
    auto m = machine_with(64, R"(
        mov ecx, 2
    l:  dec ecx
        jnz l           ; taken once, then falls through (not reported)
        call f
        hlt
    f:  ret)");
    std::vector<Event> seen;
    m->cpu().events.subscribe(EventKind::kBranch, [&](const Event& e) { seen.push_back(e); });
    REQUIRE(m->run().reason == StopReason::kHalt);
    REQUIRE(seen.size() == 3);
    CHECK(seen[0].branch == BranchKind::kJcc);
    CHECK(seen[0].from == kCodeBase + 7);
    CHECK(seen[0].to == kCodeBase + 5);
    CHECK(seen[1].branch == BranchKind::kCallRel);
    CHECK(seen[1].to == kCodeBase + 15);
    CHECK(seen[2].branch == BranchKind::kRet);
    CHECK(seen[2].from == kCodeBase + 15);
    CHECK(seen[2].to == kCodeBase + 14);
}

TEST_CASE("events: instruction-retired and memory-access subscribers see every instruction and access") {
    auto m = machine_with(64, "mov rax, [0x20000]\nmov [0x20008], eax\nhlt");
    u64 retired = 0;
    std::vector<Event> mem;
    m->cpu().events.subscribe(EventKind::kInsnRetired, [&](const Event&) { ++retired; });
    m->cpu().events.subscribe(EventKind::kMemAccess, [&](const Event& e) { mem.push_back(e); });
    m->cpu().mmu.refresh_observation();
    REQUIRE(m->run().reason == StopReason::kHalt);
    CHECK(retired == 3);
    REQUIRE(mem.size() == 2);
    CHECK(mem[0].addr == 0x20000);
    CHECK(mem[0].size == 8);
    CHECK_FALSE(mem[0].write);
    CHECK(mem[1].addr == 0x20008);
    CHECK(mem[1].size == 4);
    CHECK(mem[1].write);
}

TEST_CASE("memory: accesses crossing a page boundary and open bus") {
    auto r = run_asm(64, R"(
        mov rax, 0x1122334455667788
        mov [0x20ffc], rax
        mov rbx, [0x20ffc]
        mov rcx, [0x7000000]     ; beyond 64 MiB of RAM: open bus reads all ones
        hlt)");
    CHECK(r.reg(RBX) == 0x1122334455667788);
    CHECK(r.reg(RCX) == ~0ull);
}

TEST_CASE("64-bit mode: non-canonical data addresses raise #GP(0)") {
    auto r = run_asm(64, "mov rbx, 0x0000800000000000\nmov eax, [rbx]\nhlt");
    REQUIRE(r.run.reason == StopReason::kException);
    CHECK(r.run.fault->vector == vec::GP);
    CHECK(r.run.fault->error_code == 0);
    CHECK(r.run.rip == kCodeBase + 10);
}
