#include <catch2/catch.hpp>

#include "tests/support/asm_harness.h"

using namespace pmusim;
using namespace pmusim::test;

TEST_CASE("a loop runs to HLT in 64-bit mode") {
    auto r = run_asm(64, R"(
        mov ecx, 10
        xor eax, eax
    l:  add eax, ecx
        dec ecx
        jnz l
        hlt)");
    CHECK(r.run.reason == StopReason::kHalt);
    CHECK(r.reg(RAX) == 55);
    CHECK(r.run.instructions == 2 + 3 * 10 + 1);
    CHECK(r.run.rip == kCodeBase + 5 + 2 + 2 + 2 + 2 + 1);
}
