// MOV MOVABS MOVZX MOVSX MOVSXD LEA XCHG XADD CMPXCHG CMPXCHG8B CMPXCHG16B BSWAP
// XLATB CBW CWDE CDQE CWD CDQ CQO LAHF SAHF CMOVcc SETcc (SDM Vol. 2 instruction pages).
// Register writes follow SDM Vol. 1, 3.4.1.1: 32-bit results zero-extend in 64-bit
// mode, 8/16-bit results leave the other bits alone.
#include "tests/unit_common.h"

using namespace pmusim;
using namespace pmusim::unit;

namespace {
constexpr u64 d = kDataBase;
constexpr u64 kOnes = ~0ull;
}  // namespace

TEST_CASE("MOV register and immediate forms", "[datamov]") {
    auto r = run_ok(64, R"(
        mov al, 0x12
        mov ah, 0x34
        mov bx, 0x5678
        mov ecx, 0x89ABCDEF
        mov rdx, -2
        mov rsi, 0x123456789ABCDEF0
        mov edi, esi
        mov r8w, si
        mov r9b, sil
        mov r10, rsi
        mov r11d, r11d
        hlt)",
                    {.regs = {{RAX, kOnes},
                              {RBX, kOnes},
                              {RCX, kOnes},
                              {RDI, kOnes},
                              {R8, kOnes},
                              {R9, kOnes},
                              {R11, 0xAAAAAAAA55555555}}});
    CHECK_HEX(r.reg(RAX), 0xFFFFFFFFFFFF3412);
    CHECK_HEX(r.reg(RBX), 0xFFFFFFFFFFFF5678);
    CHECK_HEX(r.reg(RCX), 0x89ABCDEF);          // zero-extended
    CHECK_HEX(r.reg(RDX), 0xFFFFFFFFFFFFFFFE);  // REX.W C7: imm32 sign-extended
    CHECK_HEX(r.reg(RSI), 0x123456789ABCDEF0);  // REX.W B8+r imm64
    CHECK_HEX(r.reg(RDI), 0x9ABCDEF0);
    CHECK_HEX(r.reg(R8), 0xFFFFFFFFFFFFDEF0);
    CHECK_HEX(r.reg(R9), 0xFFFFFFFFFFFFFFF0);
    CHECK_HEX(r.reg(R10), 0x123456789ABCDEF0);
    CHECK_HEX(r.reg(R11), 0x55555555);  // mov r32, r32 to itself still zero-extends
}

TEST_CASE("MOV memory forms", "[datamov]") {
    SECTION("stores of each size, immediates, and loads") {
        auto r = run_ok(
            64, R"(
            mov qword [rbx], -1
            mov dword [rbx+8], 0x80000000
            mov word [rbx+12], 0x1234
            mov byte [rbx+14], 0x56
            mov [rbx+16], rdx
            mov [rbx+24], dh
            mov al, [rbx+14]
            mov cx, [rbx+12]
            mov esi, [rbx+8]
            mov rdi, [rbx]
            hlt)",
            {.regs =
                 {{RAX, kOnes}, {RBX, d}, {RCX, kOnes}, {RDX, 0x0123456789ABCDEF}, {RSI, kOnes}},
             .mem = {{d + 8, 0}, {d + 16, 0}, {d + 24, 0}}});
        CHECK_HEX(mem64(r, d), kOnes);  // imm32 sign-extended to 64 bits
        CHECK_HEX(mem64(r, d + 8), 0x0056123480000000);
        CHECK_HEX(mem64(r, d + 16), 0x0123456789ABCDEF);
        CHECK_HEX(mem64(r, d + 24), 0xCD);
        CHECK_HEX(r.reg(RAX), 0xFFFFFFFFFFFFFF56);
        CHECK_HEX(r.reg(RCX), 0xFFFFFFFFFFFF1234);
        CHECK_HEX(r.reg(RSI), 0x80000000);
        CHECK_HEX(r.reg(RDI), kOnes);
    }
    SECTION("MOVABS with a 64-bit memory offset (A0/A1/A3 moffs)") {
        auto r = run_ok(64, R"(
            mov al, [abs qword 0x20000]
            mov ecx, 0
            mov eax, [abs qword 0x20004]
            mov [abs qword 0x20008], rax
            hlt)",
                        {.mem = {{d, 0x8877665544332211}}});
        CHECK_HEX(r.reg(RAX), 0x88776655);
        CHECK_HEX(mem64(r, d + 8), 0x88776655);
    }
    SECTION("moffs with an address-size override (67 A1)") {
        // The offset has the address size: 16 bits in 32-bit code with 67, 32 bits in
        // 64-bit code with 67 (SDM MOV, "moffs" note; Vol. 2, 2.2.1.4).
        auto r = run_ok(32, "db 0x67, 0xA1\ndw 0x8000\nhlt", {.mem = {{0x8000, 0xCAFEBABE, 4}}});
        CHECK_HEX(r.reg(RAX) & 0xFFFFFFFF, 0xCAFEBABE);
        auto s = run_ok(64, "db 0x67, 0xA1\ndd 0x20000\nhlt",
                        {.regs = {{RAX, kOnes}}, .mem = {{d, 0xCAFEBABE, 4}}});
        CHECK_HEX(s.reg(RAX), 0xCAFEBABE);
        auto t =
            run_ok(16, "mov ax, [0x8000]\nmov [0x8004], ax\nhlt", {.mem = {{0x8000, 0x1234, 2}}});
        CHECK_HEX(t.reg(RAX) & 0xFFFF, 0x1234);
        CHECK_HEX(mem16(t, 0x8004), 0x1234);
    }
    SECTION("32-bit code: moffs and base+index forms") {
        auto r = run_ok(32, "mov eax, [0x20000]\nmov [ebx+esi*2+4], ax\nhlt",
                        {.regs = {{RBX, d}, {RSI, 2}}, .mem = {{d, 0x11223344, 4}, {d + 8, 0, 4}}});
        CHECK_HEX(r.reg(RAX) & 0xFFFFFFFF, 0x11223344);
        CHECK_HEX(mem32(r, d + 8), 0x3344);
    }
    SECTION("16-bit code: [bp+si] defaults to SS (flat here) and 16-bit addresses wrap") {
        auto r = run_ok(16, "mov ax, [bp+si]\nmov [bx+di+0x10], ax\nhlt",
                        {.regs = {{RBP, 0x7000}, {RSI, 0x1000}, {RBX, 0xFFF8}, {RDI, 0x0008}},
                         .mem = {{0x8000, 0xBEEF, 2}}});
        CHECK_HEX(r.reg(RAX) & 0xFFFF, 0xBEEF);
        CHECK_HEX(mem16(r, 0x0010), 0xBEEF);  // 0xFFF8 + 8 + 0x10 wraps to 0x0010
    }
}

TEST_CASE("MOV from a segment register", "[datamov]") {
    // SDM MOV: "MOV r64/m16, Sreg: move zero extended 16-bit segment register to
    // r64/m16"; with a 16-bit register only those 16 bits are written; a memory
    // destination is always 16 bits.
    auto set_ds = [](Machine& m) { m.cpu().seg[DS].selector = 0x2B; };
    auto r = run_ok(64, R"(
        db 0x48, 0x8C, 0xD8   ; mov rax, ds
        mov ecx, ds
        mov dx, ds
        mov [rbx], ds
        hlt)",
                    {.regs = {{RAX, kOnes}, {RCX, kOnes}, {RDX, kOnes}, {RBX, d}},
                     .mem = {{d, kOnes}},
                     .setup = set_ds});
    CHECK_HEX(r.reg(RAX), 0x2B);
    CHECK_HEX(r.reg(RCX), 0x2B);
    CHECK_HEX(r.reg(RDX), 0xFFFFFFFFFFFF002B);
    CHECK_HEX(mem64(r, d), 0xFFFFFFFFFFFF002B);
}

TEST_CASE("MOVZX, MOVSX, MOVSXD", "[datamov]") {
    SECTION("64-bit mode") {
        auto r = run_ok(64, R"(
            movzx eax, bl
            movzx cx, bl
            movzx rdx, word [rsi]
            movzx edi, bh
            movsx r8d, bl
            movsx r9, bx
            movsx r10w, byte [rsi+2]
            movsx r11, byte [rsi+3]
            movsxd r12, ebx
            movsxd r13, dword [rsi+4]
            hlt)",
                        {.regs = {{RAX, kOnes},
                                  {RBX, 0x1111111180008080},
                                  {RCX, kOnes},
                                  {RDX, kOnes},
                                  {RDI, kOnes},
                                  {RSI, d},
                                  {R8, kOnes},
                                  {R9, kOnes},
                                  {R10, kOnes},
                                  {R11, 0},
                                  {R12, 0},
                                  {R13, kOnes}},
                         .mem = {{d, 0x7FFFFFFFFF7FFFFF}}});
        CHECK_HEX(r.reg(RAX), 0x80);
        CHECK_HEX(r.reg(RCX), 0xFFFFFFFFFFFF0080);
        CHECK_HEX(r.reg(RDX), 0xFFFF);
        CHECK_HEX(r.reg(RDI), 0x80);
        CHECK_HEX(r.reg(R8), 0xFFFFFF80);
        CHECK_HEX(r.reg(R9), 0xFFFFFFFFFFFF8080);
        CHECK_HEX(r.reg(R10), 0xFFFFFFFFFFFF007F);
        CHECK_HEX(r.reg(R11), 0xFFFFFFFFFFFFFFFF);
        CHECK_HEX(r.reg(R12), 0xFFFFFFFF80008080);
        CHECK_HEX(r.reg(R13), 0x7FFFFFFF);
    }
    SECTION("63 /r without REX.W moves operand-size bits (no sign extension)") {
        // SDM MOVSXD: "MOVSXD r32, r/m32" (63 /r) and "MOVSXD r16, r/m16" (66 63 /r) move
        // without extension; use of MOVSXD without REX.W is discouraged but defined.
        auto r =
            run_ok(64, R"(
            db 0x63, 0xC1         ; movsxd eax, ecx
            db 0x66, 0x63, 0xD1   ; movsxd dx, cx
            db 0x48, 0x63, 0xF9   ; movsxd rdi, ecx
            hlt)",
                   {.regs = {{RAX, kOnes}, {RCX, 0xFFFFFFFF80000001}, {RDX, 0x2222222222222222}}});
        CHECK_HEX(r.reg(RAX), 0x80000001);
        CHECK_HEX(r.reg(RDX), 0x2222222222220001);
        CHECK_HEX(r.reg(RDI), 0xFFFFFFFF80000001);
    }
    SECTION("32-bit and 16-bit code") {
        auto r =
            run_ok(32, "movsx eax, bx\nmovzx ecx, byte [esi]\nmovsx dx, bl\nhlt",
                   {.regs = {{RBX, 0x8001}, {RDX, 0x12345678}, {RSI, d}}, .mem = {{d, 0xF0, 1}}});
        CHECK_HEX(r.reg(RAX) & 0xFFFFFFFF, 0xFFFF8001);
        CHECK_HEX(r.reg(RCX) & 0xFFFFFFFF, 0xF0);
        CHECK_HEX(r.reg(RDX) & 0xFFFFFFFF, 0x12340001);
        auto s = run_ok(16, "movsx eax, bl\nmovzx cx, bl\nhlt",
                        {.regs = {{RBX, 0xFE}, {RCX, 0x12345678}}});
        CHECK_HEX(s.reg(RAX) & 0xFFFFFFFF, 0xFFFFFFFE);
        CHECK_HEX(s.reg(RCX) & 0xFFFFFFFF, 0x123400FE);
    }
}

TEST_CASE("LEA in every address size", "[datamov]") {
    // SDM LEA, Table "Non-64-bit Mode LEA Operation with Address and Operand Size
    // Attributes" and its 64-bit counterpart: the effective address is computed in the
    // address size, then truncated or zero-extended to the operand size.
    SECTION("64-bit mode") {
        auto r = run_ok(64, R"(
            lea eax, [rbx+rcx*4+8]
            lea rdx, [rsi+rcx*8-1]
            lea di, [rsi+rcx]
            lea r8, [ebx+ecx]
            lea r9d, [ebx+ecx*2+0x10]
            lea r10, [r11+r12]
            hlt)",
                        {.regs = {{RBX, 0x12345678FFFFFFFF},
                                  {RCX, 1},
                                  {RSI, 0x12345},
                                  {RDI, kOnes},
                                  {R11, 0x8000000000000000},
                                  {R12, 0x8000000000000001}}});
        CHECK_HEX(r.reg(RAX), 0x0000000B);  // 0x12345678FFFFFFFF + 4 + 8, truncated to 32 bits
        CHECK_HEX(r.reg(RDX), 0x1234C);     // 0x12345 + 8 - 1
        CHECK_HEX(r.reg(RDI), 0xFFFFFFFFFFFF2346);  // 16-bit operand keeps bits 63:16
        CHECK_HEX(r.reg(R8), 0x0);                  // 67: 0xFFFFFFFF + 1 wraps at 32 bits
        CHECK_HEX(r.reg(R9), 0x11);
        CHECK_HEX(r.reg(R10), 0x1);  // 64-bit addresses wrap at 2^64
    }
    SECTION("RIP-relative, with and without 67") {
        auto r = run_ok(64, R"(
            lea rax, [rel $]
            lea rcx, [rel $ + 0x100]
            hlt)");
        CHECK_HEX(r.reg(RAX), kCodeBase);
        CHECK_HEX(r.reg(RCX), kCodeBase + 7 + 0x100);
        // 48 8D 05 disp32 at 0x1000: next RIP 0x1007; 0x1007 - 0x2007 = -0x1000.
        auto s = run_ok(64, "db 0x48, 0x8D, 0x05\ndd -0x2007\nhlt");
        CHECK_HEX(s.reg(RAX), 0xFFFFFFFFFFFFF000);
        // With 67 the address is computed from EIP and truncated to 32 bits
        // (SDM Vol. 2, 2.2.1.6 "RIP-Relative Addressing").
        auto t = run_ok(64, "db 0x67, 0x48, 0x8D, 0x05\ndd -0x2008\nhlt");
        CHECK_HEX(t.reg(RAX), 0xFFFFF000);
    }
    SECTION("32-bit code, with 16-bit addressing (67)") {
        auto r =
            run_ok(32, R"(
            lea eax, [ebx+ecx*2+4]
            lea edx, [bx+si+0x10]
            lea di, [ebx+ecx]
            hlt)",
                   {.regs = {{RBX, 0x0001FFF0}, {RCX, 0x20}, {RSI, 0x0020}, {RDI, 0x12345678}}});
        CHECK_HEX(r.reg(RAX) & 0xFFFFFFFF, 0x00020034);
        CHECK_HEX(r.reg(RDX) & 0xFFFFFFFF,
                  0x00000020);  // (0xFFF0 + 0x20 + 0x10) mod 2^16, zero-extended
        CHECK_HEX(r.reg(RDI) & 0xFFFFFFFF, 0x12340010);  // 0x00020010 truncated to 16 bits
    }
    SECTION("16-bit code, with 32-bit addressing (67)") {
        auto r = run_ok(
            16, R"(
            lea ax, [bp+di-2]
            lea ecx, [ebx+esi*4]
            lea dx, [ebx+esi*4]
            hlt)",
            {.regs = {{RBP, 0x0001}, {RDI, 0x0000}, {RBX, 0x10000}, {RSI, 1}, {RDX, 0x12345678}}});
        CHECK_HEX(r.reg(RAX) & 0xFFFF, 0xFFFF);
        CHECK_HEX(r.reg(RCX) & 0xFFFFFFFF, 0x10004);
        CHECK_HEX(r.reg(RDX) & 0xFFFFFFFF, 0x12340004);
    }
}

TEST_CASE("XCHG", "[datamov]") {
    SECTION("register forms") {
        auto r = run_ok(64, R"(
            xchg eax, ecx
            xchg rdx, rbx
            xchg sil, dil
            xchg r8w, r9w
            hlt)",
                        {.regs = {{RAX, 0x1111111122222222},
                                  {RCX, 0x3333333344444444},
                                  {RDX, 1},
                                  {RBX, 2},
                                  {RSI, 0xAAAA},
                                  {RDI, 0xBBBB},
                                  {R8, 0x5555555555551234},
                                  {R9, 0x6666666666665678}}});
        CHECK_HEX(r.reg(RAX), 0x44444444);
        CHECK_HEX(r.reg(RCX), 0x22222222);
        CHECK_HEX(r.reg(RDX), 2);
        CHECK_HEX(r.reg(RBX), 1);
        CHECK_HEX(r.reg(RSI), 0xAABB);
        CHECK_HEX(r.reg(RDI), 0xBBAA);
        CHECK_HEX(r.reg(R8), 0x5555555555555678);
        CHECK_HEX(r.reg(R9), 0x6666666666661234);
    }
    SECTION("high-byte registers") {
        auto r = run_ok(64, "xchg al, ah\nxchg bh, cl\nhlt",
                        {.regs = {{RAX, 0x1234}, {RBX, 0x5600}, {RCX, 0x78}}});
        CHECK_HEX(r.reg(RAX), 0x3412);
        CHECK_HEX(r.reg(RBX), 0x7800);
        CHECK_HEX(r.reg(RCX), 0x56);
    }
    SECTION("90 is NOP, but 87 C0 and REX.B 90 exchange (and zero-extend)") {
        // SDM XCHG: "XCHG (E)AX, (E)AX (encoded instruction byte is 90H) is an alias for NOP
        // regardless of data size prefixes, including REX.W"; 87 C0 is a real 32-bit exchange.
        auto r = run_ok(64, "db 0x90\nhlt", {.regs = {{RAX, 0x1111111122222222}}});
        CHECK_HEX(r.reg(RAX), 0x1111111122222222);
        auto s = run_ok(64, "db 0x87, 0xC0\nhlt", {.regs = {{RAX, 0x1111111122222222}}});
        CHECK_HEX(s.reg(RAX), 0x22222222);
        auto t = run_ok(64, "db 0x41, 0x90\nhlt",
                        {.regs = {{RAX, 0x1111111122222222}, {R8, 0x3333333344444444}}});
        CHECK_HEX(t.reg(RAX), 0x44444444);
        CHECK_HEX(t.reg(R8), 0x22222222);
    }
    SECTION("memory forms, either operand order") {
        auto r = run_ok(64, "xchg [rbx], edx\nxchg cx, [rbx+8]\nhlt",
                        {.regs = {{RBX, d}, {RDX, 0xFFFFFFFF12345678}, {RCX, 0xAAAAAAAAAAAA1111}},
                         .mem = {{d, 0x9999999987654321}, {d + 8, 0x2222}}});
        CHECK_HEX(mem64(r, d), 0x9999999912345678);
        CHECK_HEX(r.reg(RDX), 0x87654321);
        CHECK_HEX(mem64(r, d + 8), 0x1111);
        CHECK_HEX(r.reg(RCX), 0xAAAAAAAAAAAA2222);
    }
    SECTION("flags are unaffected") {
        auto r = run_ok(64, "xchg rax, rcx\nhlt", {.flags = kAll6});
        CHECK_FLAGS(r, kAll6, kAll6);
    }
}

TEST_CASE("XADD", "[datamov]") {
    SECTION("register form: flags of ADD") {
        auto r = run_ok(64, "xadd eax, ecx\nhlt",
                        {.regs = {{RAX, 0xFFFFFFFF00000005}, {RCX, 0xFFFFFFFF00000007}}});
        CHECK_HEX(r.reg(RAX), 12);
        CHECK_HEX(r.reg(RCX), 5);
        CHECK_FLAGS(r, kAll6, PF);
    }
    SECTION("memory form") {
        auto r = run_ok(64, "lock xadd [rbx], cl\nhlt",
                        {.regs = {{RBX, d}, {RCX, 0x1201}}, .mem = {{d, 0x77FF, 2}}});
        CHECK_HEX(mem16(r, d), 0x7700);
        CHECK_HEX(r.reg(RCX), 0x12FF);
        CHECK_FLAGS(r, kAll6, CF | ZF | AF | PF);
    }
    SECTION("same register: DEST = 2 * DEST") {
        auto r = run_ok(64, "xadd rax, rax\nhlt", {.regs = {{RAX, 3}}});
        CHECK_HEX(r.reg(RAX), 6);
    }
    SECTION("16-bit operands") {
        auto r = run_ok(64, "xadd ax, bx\nhlt",
                        {.regs = {{RAX, 0x1111111111117FFF}, {RBX, 0x2222222222220001}}});
        CHECK_HEX(r.reg(RAX), 0x1111111111118000);
        CHECK_HEX(r.reg(RBX), 0x2222222222227FFF);
        CHECK_FLAGS(r, kAll6, OF | SF | AF | PF);
    }
}

TEST_CASE("CMPXCHG", "[datamov]") {
    // SDM CMPXCHG: compare the accumulator with DEST (flags as CMP acc, DEST); equal:
    // ZF=1, DEST = SRC; else ZF=0, accumulator = DEST.
    SECTION("r32 equal") {
        auto r = run_ok(64, "cmpxchg ecx, edx\nhlt",
                        {.regs = {{RAX, 5}, {RCX, 0xBBBBBBBB00000005}, {RDX, 9}}});
        CHECK_HEX(r.reg(RAX) & 0xFFFFFFFF, 5);
        CHECK_HEX(r.reg(RCX), 9);
        CHECK_FLAGS(r, kAll6, ZF | PF);
    }
    SECTION("r32 not equal") {
        auto r = run_ok(64, "cmpxchg ecx, edx\nhlt",
                        {.regs = {{RAX, 0xAAAAAAAA00000005}, {RCX, 7}, {RDX, 9}}});
        CHECK_HEX(r.reg(RAX), 7);
        CHECK_HEX(r.reg(RCX) & 0xFFFFFFFF, 7);
        CHECK_FLAGS(r, kAll6, CF | SF | AF);  // 5 - 7
    }
    SECTION("m64 equal and not equal") {
        auto r = run_ok(
            64, "cmpxchg [rbx], rdx\nhlt",
            {.regs = {{RAX, 0x123456789}, {RBX, d}, {RDX, 0xFEDCBA}}, .mem = {{d, 0x123456789}}});
        CHECK_HEX(mem64(r, d), 0xFEDCBA);
        CHECK_HEX(r.reg(RAX), 0x123456789);
        CHECK_FLAGS(r, kAll6, ZF | PF);
        auto s = run_ok(
            64, "lock cmpxchg [rbx], rdx\nhlt",
            {.regs = {{RAX, 0x8000000000000000}, {RBX, d}, {RDX, 0xFEDCBA}}, .mem = {{d, 0x1}}});
        CHECK_HEX(mem64(s, d), 0x1);
        CHECK_HEX(s.reg(RAX), 0x1);
        CHECK_FLAGS(s, kAll6, OF | PF | AF);  // 0x8000000000000000 - 1 = 0x7FFF...FF
    }
    SECTION("m8 and m16, high-byte source") {
        auto r = run_ok(64, "cmpxchg [rbx], dh\ncmpxchg [rbx+2], cx\nhlt",
                        {.regs = {{RAX, 0x4411}, {RBX, d}, {RCX, 0x7777}, {RDX, 0x9900}},
                         .mem = {{d, 0x22334411, 4}}});
        // byte: AL 0x11 == [d] 0x11 -> [d] = DH 0x99. word: AX 0x4411 != [d+2] 0x2233 -> AX =
        // 0x2233.
        CHECK_HEX(mem32(r, d), 0x22334499);
        CHECK_HEX(r.reg(RAX), 0x2233);
        CHECK_FLAGS(
            r, kAll6,
            AF | PF);  // 0x4411 - 0x2233 = 0x21DE: 1 - 3 borrows from bit 4; 0xDE has 6 bits
    }
}

TEST_CASE("CMPXCHG8B and CMPXCHG16B", "[datamov]") {
    // SDM CMPXCHG8B/CMPXCHG16B: compare rDX:rAX with m64/m128; equal: ZF=1 and the
    // memory gets rCX:rBX; else ZF=0 and rDX:rAX get the memory. CF PF AF SF OF unaffected.
    const Init regs8 = {.regs = {{RAX, 0x22222222},
                                 {RDX, 0x11111111},
                                 {RBX, 0x44444444},
                                 {RCX, 0x33333333},
                                 {RDI, d + 3}}};
    SECTION("cmpxchg8b equal (misaligned is fine)") {
        Init in = regs8;
        in.flags = CF | SF | OF;
        in.mem = {{d + 3, 0x1111111122222222}};
        auto r = run_ok(64, "cmpxchg8b [rdi]\nhlt", in);
        CHECK_HEX(mem64(r, d + 3), 0x3333333344444444);
        CHECK_FLAGS(r, kAll6, CF | SF | OF | ZF);
    }
    SECTION("cmpxchg8b not equal loads EDX:EAX (zero-extended)") {
        Init in = regs8;
        in.regs.push_back({RAX, 0xAAAAAAAA22222222});
        in.flags = ZF | PF | AF;
        in.mem = {{d + 3, 0x5555555566666666}};
        auto r = run_ok(64, "cmpxchg8b [rdi]\nhlt", in);
        CHECK_HEX(mem64(r, d + 3), 0x5555555566666666);
        CHECK_HEX(r.reg(RAX), 0x66666666);
        CHECK_HEX(r.reg(RDX), 0x55555555);
        CHECK_FLAGS(r, kAll6, PF | AF);
    }
    SECTION("cmpxchg8b in 32-bit code") {
        auto r = run_ok(32, "lock cmpxchg8b [edi]\nhlt",
                        {.regs = {{RAX, 1}, {RDX, 2}, {RBX, 3}, {RCX, 4}, {RDI, d}},
                         .mem = {{d, 0x0000000200000001}}});
        CHECK_HEX(mem64(r, d), 0x0000000400000003);
        CHECK_FLAGS(r, ZF, ZF);
    }
    SECTION("cmpxchg8b with a register operand is #UD") {
        run_fault(64, "db 0x0F, 0xC7, 0xC8\nhlt", vec::UD, kCodeBase);
    }
    const Init regs16 = {
        .regs = {{RAX, 0x1111}, {RDX, 0x2222}, {RBX, 0x3333}, {RCX, 0x4444}, {RDI, d + 16}}};
    SECTION("cmpxchg16b equal") {
        Init in = regs16;
        in.mem = {{d + 16, 0x1111}, {d + 24, 0x2222}};
        auto r = run_ok(64, "cmpxchg16b [rdi]\nhlt", in);
        CHECK_HEX(mem64(r, d + 16), 0x3333);
        CHECK_HEX(mem64(r, d + 24), 0x4444);
        CHECK_FLAGS(r, ZF, ZF);
    }
    SECTION("cmpxchg16b not equal") {
        Init in = regs16;
        in.flags = ZF | CF;
        in.mem = {{d + 16, 0x1111}, {d + 24, 0x2223}};
        auto r = run_ok(64, "lock cmpxchg16b [rdi]\nhlt", in);
        CHECK_HEX(mem64(r, d + 16), 0x1111);
        CHECK_HEX(mem64(r, d + 24), 0x2223);
        CHECK_HEX(r.reg(RAX), 0x1111);
        CHECK_HEX(r.reg(RDX), 0x2223);
        CHECK_FLAGS(r, kAll6, CF);
    }
    SECTION("cmpxchg16b on an operand not 16-byte aligned is #GP(0)") {
        // SDM CMPXCHG16B: "#GP(0) If the memory operand for CMPXCHG16B is not aligned on a
        // 16-byte boundary."
        Init in = regs16;
        in.regs.push_back({RDI, d + 8});
        in.mem = {{d + 8, 0x1111}, {d + 16, 0x2222}};
        auto r = run_fault(64, "cmpxchg16b [rdi]\nhlt", vec::GP, kCodeBase, in);
        CHECK(r.run.fault->error_code == 0);
        CHECK_HEX(mem64(r, d + 8), 0x1111);
        CHECK_HEX(mem64(r, d + 16), 0x2222);
    }
}

TEST_CASE("BSWAP", "[datamov]") {
    auto r = run_ok(64, "bswap eax\nbswap rcx\nbswap r9d\nbswap r12\nhlt",
                    {.regs = {{RAX, 0xFFFFFFFF12345678},
                              {RCX, 0x0102030405060708},
                              {R9, 0xAAAAAAAA11223344},
                              {R12, 0x8000000000000001}}});
    CHECK_HEX(r.reg(RAX), 0x78563412);
    CHECK_HEX(r.reg(RCX), 0x0807060504030201);
    CHECK_HEX(r.reg(R9), 0x44332211);
    CHECK_HEX(r.reg(R12), 0x0100000000000080);
    auto s = run_ok(32, "bswap ebx\nhlt", {.regs = {{RBX, 0xDEADBEEF}}});
    CHECK_HEX(s.reg(RBX) & 0xFFFFFFFF, 0xEFBEADDE);
}

TEST_CASE("XLATB", "[datamov]") {
    // SDM XLAT: AL = [DS:rBX + zero-extended AL].
    auto r = run_ok(64, "xlatb\nhlt",
                    {.regs = {{RAX, 0x12345678ABCDEFF0}, {RBX, d}}, .mem = {{d + 0xF0, 0x99, 1}}});
    CHECK_HEX(r.reg(RAX), 0x12345678ABCDEF99);
    auto s = run_ok(32, "xlatb\nhlt",
                    {.regs = {{RAX, 0x000000FF}, {RBX, d}}, .mem = {{d + 0xFF, 0x42, 1}}});
    CHECK_HEX(s.reg(RAX) & 0xFFFFFFFF, 0x42);
    auto t = run_ok(16, "xlatb\nhlt",
                    {.regs = {{RAX, 0x1210}, {RBX, 0x8000}}, .mem = {{0x8010, 0x7E, 1}}});
    CHECK_HEX(t.reg(RAX) & 0xFFFF, 0x127E);
    // With 67 in 64-bit mode the table address is EBX + AL.
    auto u =
        run_ok(64, "a32 xlatb\nhlt",
               {.regs = {{RAX, 0x01}, {RBX, 0xFFFFFFFF00000000 | d}}, .mem = {{d + 1, 0x3C, 1}}});
    CHECK_HEX(u.reg(RAX), 0x3C);
}

TEST_CASE("CBW CWDE CDQE CWD CDQ CQO", "[datamov]") {
    struct Case {
        int bits;
        const char* insn;
        u64 rax, rdx, rax_out, rdx_out;
    };
    const u64 D = 0x2222222222222222;
    const Case cases[] = {
        {64, "cbw", 0x1111111111111180, D, 0x111111111111FF80, D},
        {64, "cbw", 0x111111111111FF7F, D, 0x111111111111007F, D},
        {64, "cwde", 0x1111111111118000, D, 0xFFFF8000, D},
        {64, "cdqe", 0x1111111180000000, D, 0xFFFFFFFF80000000, D},
        {64, "cdqe", 0x111111117FFFFFFF, D, 0x7FFFFFFF, D},
        {64, "cwd", 0x8000, D, 0x8000, 0x222222222222FFFF},
        {64, "cwd", 0x7FFF, D, 0x7FFF, 0x2222222222220000},
        {64, "cdq", 0x80000000, D, 0x80000000, 0xFFFFFFFF},
        {64, "cdq", 0x1111111170000000, D, 0x1111111170000000, 0},
        {64, "cqo", kOnes, D, kOnes, kOnes},
        {64, "cqo", 0x7FFFFFFFFFFFFFFF, D, 0x7FFFFFFFFFFFFFFF, 0},
        {32, "cbw", 0x12345680, 0, 0x1234FF80, 0},
        {32, "cwde", 0x12348000, 0, 0xFFFF8000, 0},
        {32, "cdq", 0x80000000, 0x12345678, 0x80000000, 0xFFFFFFFF},
        {32, "cwd", 0x12348000, 0x12345678, 0x12348000, 0x1234FFFF},
        {16, "cbw", 0x12345680, 0, 0x1234FF80, 0},
        {16, "cwd", 0x8000, 0x12345678, 0x8000, 0x1234FFFF},
        {16, "cwde", 0x12348000, 0, 0xFFFF8000, 0},
        {16, "cdq", 0x80000000, 0x12345678, 0x80000000, 0xFFFFFFFF},
    };
    for (const Case& c : cases) {
        INFO(c.bits << "-bit " << c.insn << std::hex << " rax=" << c.rax);
        auto r =
            run_ok(c.bits, std::string(c.insn) + "\nhlt", {.regs = {{RAX, c.rax}, {RDX, c.rdx}}});
        const u64 view = c.bits == 64 ? ~0ull : 0xFFFFFFFF;
        CHECK_HEX(r.reg(RAX) & view, c.rax_out);
        CHECK_HEX(r.reg(RDX) & view, c.rdx_out);
    }
}

TEST_CASE("LAHF and SAHF", "[datamov]") {
    // SDM LAHF: AH = SF:ZF:0:AF:0:PF:1:CF. SAHF loads SF ZF AF PF CF from AH (bits 7 6 4
    // 2 0); OF and the rest are unaffected.
    SECTION("lahf") {
        auto r = run_ok(64, "lahf\nhlt",
                        {.regs = {{RAX, 0x1111111111111111}}, .flags = SF | ZF | AF | PF | CF});
        CHECK_HEX(r.reg(RAX), 0x111111111111D711);
        auto s = run_ok(64, "lahf\nhlt", {.regs = {{RAX, 0xFFFF}}, .flags = OF | DF});
        CHECK_HEX(s.reg(RAX), 0x02FF);
        auto t = run_ok(32, "lahf\nhlt", {.flags = ZF | CF});
        CHECK_HEX(t.reg(RAX) & 0xFFFF, 0x4300);
    }
    SECTION("sahf") {
        auto r = run_ok(64, "sahf\nhlt", {.regs = {{RAX, 0xFF00}}, .flags = OF});
        CHECK_FLAGS(r, ~0ull, kAll6 | kFixed1);
        auto s = run_ok(64, "sahf\nhlt", {.regs = {{RAX, 0x0000}}, .flags = kAll6 | DF});
        CHECK_FLAGS(s, ~0ull, OF | DF | kFixed1);
        auto t = run_ok(64, "sahf\nhlt", {.regs = {{RAX, 0x2A00}}, .flags = kAll6});
        CHECK_FLAGS(t, ~0ull, OF | kFixed1);
        auto u = run_ok(16, "sahf\nhlt", {.regs = {{RAX, 0x8500}}});
        CHECK_FLAGS(u, kAll6, SF | PF | CF);
    }
}

TEST_CASE("CMOVcc: all 16 conditions, 32-bit destination zero-extends either way", "[datamov]") {
    // SDM CMOVcc: "In 64-bit mode, CMOVcc with a 32-bit operand size will clear the upper
    // 32 bits of the destination register even if the condition is false."
    std::string src;
    for (int k = 0; k < 16; ++k) {
        src += "mov rdx, r8\ncmov" + std::string(kConds[k].name) + " edx, ecx\nmov [rdi+" +
               std::to_string(8 * k) + "], rdx\n";
    }
    src += "hlt";
    for (u64 f : kCondStates) {
        auto r = run_ok(
            64, src,
            {.regs = {{RCX, 0xEEEEEEEE00002222}, {RDI, d}, {R8, 0xFFFFFFFF00001111}}, .flags = f});
        for (int k = 0; k < 16; ++k) {
            INFO("cmov" << kConds[k].name << " flags "
                        << Catch::StringMaker<Flags>::convert(Flags{f}));
            CHECK_HEX(mem64(r, d + 8 * k), kConds[k].holds(f) ? 0x2222 : 0x1111);
        }
        CHECK_FLAGS(r, ~0ull, f | kFixed1);
    }
}

TEST_CASE("CMOVcc 16/64-bit and memory forms", "[datamov]") {
    auto r = run_ok(64, R"(
        cmovz ax, cx
        cmovnz bx, cx
        cmovc rdx, [rdi]
        cmovnc rsi, [rdi]
        hlt)",
                    {.regs = {{RAX, 0x1111111111111111},
                              {RBX, 0x2222222222222222},
                              {RCX, 0x3333333333333333},
                              {RDX, 0x4444444444444444},
                              {RSI, 0x5555555555555555},
                              {RDI, d}},
                     .flags = ZF,
                     .mem = {{d, 0x6666666666666666}}});
    CHECK_HEX(r.reg(RAX), 0x1111111111113333);
    CHECK_HEX(r.reg(RBX), 0x2222222222222222);
    CHECK_HEX(r.reg(RDX), 0x4444444444444444);
    CHECK_HEX(r.reg(RSI), 0x6666666666666666);
    auto s = run_ok(32, "cmovl eax, ecx\ncmovge edx, ecx\nhlt",
                    {.regs = {{RAX, 1}, {RCX, 2}, {RDX, 3}}, .flags = OF});
    CHECK_HEX(s.reg(RAX) & 0xFFFFFFFF, 2);
    CHECK_HEX(s.reg(RDX) & 0xFFFFFFFF, 3);
}

TEST_CASE("SETcc: all 16 conditions", "[datamov]") {
    std::string src;
    for (int k = 0; k < 16; ++k)
        src += "set" + std::string(kConds[k].name) + " byte [rdi+" + std::to_string(k) + "]\n";
    src += "hlt";
    for (u64 f : kCondStates) {
        auto r =
            run_ok(64, src, {.regs = {{RDI, d}}, .flags = f, .mem = {{d, kOnes}, {d + 8, kOnes}}});
        for (int k = 0; k < 16; ++k) {
            INFO("set" << kConds[k].name << " flags "
                       << Catch::StringMaker<Flags>::convert(Flags{f}));
            CHECK(mem8(r, d + k) == (kConds[k].holds(f) ? 1u : 0u));
        }
        CHECK_FLAGS(r, ~0ull, f | kFixed1);
    }
}

TEST_CASE("SETcc register forms write one byte", "[datamov]") {
    auto r = run_ok(64, "sete al\nsetne ah\nsetb r9b\nsetg sil\nhlt",
                    {.regs = {{RAX, kOnes}, {R9, kOnes}, {RSI, 0x1234}}, .flags = ZF | CF});
    CHECK_HEX(r.reg(RAX), 0xFFFFFFFFFFFF0001);
    CHECK_HEX(r.reg(R9), 0xFFFFFFFFFFFFFF01);
    CHECK_HEX(r.reg(RSI), 0x1200);
    auto s = run_ok(16, "seta dl\nsetnp dh\nhlt", {.regs = {{RDX, 0xFFFF}}});
    CHECK_HEX(s.reg(RDX) & 0xFFFF, 0x0101);
}

TEST_CASE("Data movement documented choices for undefined or implementation-specific results",
          "[datamov][documented-choice]") {
    // docs/semantics/integer.md, "Register writes": CMPXCHG with a register destination
    // writes the destination only when equal and the accumulator only when not equal.
    SECTION("CMPXCHG r32 equal: RAX is not written") {
        auto r = run_ok(
            64, "cmpxchg ecx, edx\nhlt",
            {.regs = {
                 {RAX, 0xAAAAAAAA00000005}, {RCX, 0xBBBBBBBB00000005}, {RDX, 0xCCCCCCCC00000009}}});
        CHECK_HEX(r.reg(RAX), 0xAAAAAAAA00000005);
        CHECK_HEX(r.reg(RCX), 0x9);
    }
    SECTION("CMPXCHG r32 not equal: the destination is not written") {
        auto r = run_ok(
            64, "cmpxchg ecx, edx\nhlt",
            {.regs = {
                 {RAX, 0xAAAAAAAA00000005}, {RCX, 0xBBBBBBBB00000007}, {RDX, 0xCCCCCCCC00000009}}});
        CHECK_HEX(r.reg(RAX), 0x7);
        CHECK_HEX(r.reg(RCX), 0xBBBBBBBB00000007);
    }
    SECTION("CMPXCHG8B equal: RDX:RAX are not written") {
        auto r = run_ok(64, "cmpxchg8b [rdi]\nhlt",
                        {.regs = {{RAX, 0xAAAAAAAA22222222},
                                  {RDX, 0xBBBBBBBB11111111},
                                  {RBX, 3},
                                  {RCX, 4},
                                  {RDI, d}},
                         .mem = {{d, 0x1111111122222222}}});
        CHECK_HEX(r.reg(RAX), 0xAAAAAAAA22222222);
        CHECK_HEX(r.reg(RDX), 0xBBBBBBBB11111111);
    }
    SECTION("CMOVcc reads its memory source even when the condition is false") {
        // docs/semantics/integer.md: the source is read (and may fault) whatever the
        // condition; a non-canonical address therefore raises #GP(0).
        auto r = run_fault(64, "cmovz eax, [rbx]\nhlt", vec::GP, kCodeBase,
                           {.regs = {{RAX, 0x1111111122222222}, {RBX, 0x8000000000000000}}});
        CHECK_HEX(r.reg(RAX), 0x1111111122222222);
    }
    SECTION("BSWAP r16 clears the low 16 bits") {
        auto r = run_ok(64, "db 0x66, 0x0F, 0xC8\nhlt", {.regs = {{RAX, 0x1122334455667788}}});
        CHECK_HEX(r.reg(RAX), 0x1122334455660000);
    }
}
