// Guest instructions per second of the bare core (no model subscribed).
// Usage: bench_core [seconds-per-workload]   (default 2)
//        bench_core --count N                 run exactly N guest instructions per workload
//                                             (for instruction-count profiling, e.g. callgrind)
// Two workloads, both 64-bit code assembled here as raw bytes so the benchmark
// does not need NASM:
//   alu   - ALU + load/store + call/ret loop (a taken branch every ~7 instructions)
//   branch- a taken branch every 2-3 instructions
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/machine.h"

using namespace pmusim;

namespace {

struct Workload {
    const char* name;
    std::vector<u8> code;
};

// alu:   mov ecx, 0x7fffffff
//  top:  mov rax, [rdi] ; add rax, rcx ; mov [rdi+8], rax ; xor rdx, rax ; shl rdx, 3
//        call f ; dec ecx ; jnz top ; hlt
//  f:    lea rbx, [rdx+rcx*2] ; imul rbx, rbx ; ret
const Workload kAlu{"alu+load/store+call",
                    {0xB9, 0xFF, 0xFF, 0xFF, 0x7F,                 // mov ecx, 0x7fffffff
                     0x48, 0x8B, 0x07,                             // top: mov rax, [rdi]
                     0x48, 0x01, 0xC8,                             // add rax, rcx
                     0x48, 0x89, 0x47, 0x08,                       // mov [rdi+8], rax
                     0x48, 0x31, 0xC2,                             // xor rdx, rax
                     0x48, 0xC1, 0xE2, 0x03,                       // shl rdx, 3
                     0xE8, 0x05, 0x00, 0x00, 0x00,                 // call f
                     0xFF, 0xC9,                                   // dec ecx
                     0x75, 0xE6,                                   // jnz top
                     0xF4,                                         // hlt
                     0x48, 0x8D, 0x1C, 0x4A,                       // f: lea rbx, [rdx+rcx*2]
                     0x48, 0x0F, 0xAF, 0xDB,                       // imul rbx, rbx
                     0xC3}};                                       // ret

// branch: mov ecx, 0x7fffffff
//  top:  inc eax ; jmp a
//  a:    test eax, 1 ; jz b ; add edx, eax
//  b:    dec ecx ; jnz top ; hlt
const Workload kBranch{"branch-heavy",
                       {0xB9, 0xFF, 0xFF, 0xFF, 0x7F,  // mov ecx, 0x7fffffff
                        0xFF, 0xC0,                    // top: inc eax
                        0xEB, 0x00,                    // jmp a
                        0xA9, 0x01, 0x00, 0x00, 0x00,  // a: test eax, 1
                        0x74, 0x02,                    // jz b
                        0x01, 0xC2,                    // add edx, eax
                        0xFF, 0xC9,                    // b: dec ecx
                        0x75, 0xEF,                    // jnz top
                        0xF4}};                        // hlt

void prepare(Machine& m, const Workload& w) {
    m.load(0x1000, w.code.data(), w.code.size());
    m.set_flat_mode(CodeBits::k64);
    m.cpu().rip = 0x1000;
    m.cpu().gpr[RSP] = 0x80000;
    m.cpu().gpr[RDI] = 0x20000;
}

double measure(const Workload& w, double seconds) {
    Machine m;
    prepare(m, w);
    m.run(RunLimits{1'000'000});  // warm the decode cache
    u64 total = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double elapsed = 0;
    while (elapsed < seconds) {
        total += m.run(RunLimits{20'000'000}).instructions;
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    return double(total) / elapsed / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 2 && std::string(argv[1]) == "--count") {
        const u64 n = std::strtoull(argv[2], nullptr, 10);
        for (const Workload* w : {&kAlu, &kBranch}) {
            Machine m;
            prepare(m, *w);
            std::printf("%-24s %llu instructions\n", w->name, (unsigned long long)m.run(RunLimits{n}).instructions);
        }
        return 0;
    }
    const double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
    for (const Workload* w : {&kAlu, &kBranch})
        std::printf("%-24s %8.1f MIPS\n", w->name, measure(*w, seconds));
    return 0;
}
