#include "tests/support/asm_harness.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace pmusim::test {

std::vector<u8> assemble(int bits, const std::string& source, u64 org) {
    char dir[] = "/tmp/pmusim-asm-XXXXXX";
    if (!mkdtemp(dir)) throw std::runtime_error("mkdtemp failed");
    const std::string d = dir, src = d + "/t.asm", bin = d + "/t.bin", log = d + "/t.log";
    {
        std::ofstream f(src);
        f << "bits " << bits << "\norg " << org << "\n" << source << "\n";
    }
    const std::string cmd = "nasm -f bin -o " + bin + " " + src + " 2> " + log;
    const int rc = std::system(cmd.c_str());
    std::ifstream lf(log);
    std::string msgs((std::istreambuf_iterator<char>(lf)), {});
    std::ifstream bf(bin, std::ios::binary);
    std::vector<u8> out((std::istreambuf_iterator<char>(bf)), {});
    std::remove(src.c_str());
    std::remove(bin.c_str());
    std::remove(log.c_str());
    rmdir(dir);
    if (rc != 0) throw std::runtime_error("nasm failed:\n" + msgs);
    return out;
}

std::unique_ptr<Machine> machine_with(int bits, const std::string& source) {
    auto m = std::make_unique<Machine>();
    const auto code = assemble(bits, source);
    m->load(kCodeBase, code.data(), code.size());
    m->set_flat_mode(bits == 64 ? CodeBits::k64 : bits == 32 ? CodeBits::k32 : CodeBits::k16);
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
