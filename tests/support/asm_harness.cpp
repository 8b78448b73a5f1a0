#include "tests/support/asm_harness.h"

#include "sim/nasm.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace pmusim::test {

std::vector<u8> assemble(int bits, const std::string& source, u64 org) {
    const std::string full = "bits " + std::to_string(bits) + "\norg " + std::to_string(org) + "\n" + source;
    try {
        return assemble_nasm(full, "test.asm").bytes;
    } catch (const NasmError& e) {
        throw std::runtime_error(std::string("nasm failed:\n") + e.what());
    }
}

std::unique_ptr<Machine> machine_with(int bits, const std::string& source) {
    auto m = std::make_unique<Machine>();
    const auto code = assemble(bits, source);
    m->load(kCodeBase, code.data(), code.size());
    m->set_flat_mode(bits == 64 ? CodeBits::k64 : bits == 32 ? CodeBits::k32 : CodeBits::k16);
    for (u64& r : m->cpu().gpr) r = 0;  // reset() leaves the processor signature in EDX
    m->cpu().rip = kCodeBase;
    m->cpu().gpr[RSP] = bits == 16 ? 0xFFF0 : kStackTop;
    return m;
}

AsmResult run_asm(int bits, const std::string& source, u64 max) {
    AsmResult r{machine_with(bits, source), {}};
    r.run = r.machine->run(RunLimits{max});
    return r;
}

}  // namespace pmusim::test
