// Replays flags captured on an Intel Xeon (tests/data/intel_xeon_flags.txt, made by
// tests/data/capture_flags.c) through pmusim: every arithmetic flag, including the
// ones the SDM leaves undefined, must match the observation.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "sim/machine.h"

using namespace pmusim;

namespace {

/// How each captured mnemonic runs: its bytes (64-bit code) and which registers
/// take the captured operands (in order). EAX = 0x5555 beforehand for BSF/BSR/TZCNT/LZCNT,
/// whose destination the capture program preset.
struct Form {
    std::vector<u8> bytes;
    std::vector<Gpr> regs;
};

const std::map<std::string, Form>& forms() {
    static const std::map<std::string, Form> f = {
        {"shl", {{0xD2, 0xE0}, {RAX, RCX}}},        {"shr", {{0xD2, 0xE8}, {RAX, RCX}}},
        {"sar", {{0xD2, 0xF8}, {RAX, RCX}}},        {"rol", {{0xD2, 0xC0}, {RAX, RCX}}},
        {"ror", {{0xD2, 0xC8}, {RAX, RCX}}},        {"rcl", {{0xD2, 0xD0}, {RAX, RCX}}},
        {"rcr", {{0xD2, 0xD8}, {RAX, RCX}}},        {"mul", {{0xF6, 0xE3}, {RAX, RBX}}},
        {"imul", {{0xF6, 0xEB}, {RAX, RBX}}},       {"div", {{0xF6, 0xF3}, {RAX, RBX}}},
        {"and", {{0x20, 0xD8}, {RAX, RBX}}},        {"shld", {{0x0F, 0xA5, 0xD8}, {RAX, RBX, RCX}}},
        {"shrd", {{0x0F, 0xAD, 0xD8}, {RAX, RBX, RCX}}}, {"bsf", {{0x0F, 0xBC, 0xC3}, {RBX}}},
        {"bsr", {{0x0F, 0xBD, 0xC3}, {RBX}}},       {"bt", {{0x0F, 0xA3, 0xD8}, {RAX, RBX}}},
        {"mul32", {{0xF7, 0xE3}, {RAX, RBX}}},      {"imul32", {{0x0F, 0xAF, 0xC3}, {RAX, RBX}}},
        {"tzcnt", {{0xF3, 0x0F, 0xBC, 0xC3}, {RBX}}}, {"lzcnt", {{0xF3, 0x0F, 0xBD, 0xC3}, {RBX}}},
        {"rcl16", {{0x66, 0xD3, 0xD0}, {RAX, RCX}}}, {"rcr16", {{0x66, 0xD3, 0xD8}, {RAX, RCX}}},
    };
    return f;
}

}  // namespace

TEST_CASE("flags match an Intel Xeon, including the ones the SDM leaves undefined") {
    std::ifstream in(std::string(PMUSIM_SOURCE_DIR) + "/tests/data/intel_xeon_flags.txt");
    REQUIRE(in);
    Machine m;
    m.set_flat_mode(CodeBits::k64);
    std::string line;
    std::map<std::string, int> checked;
    int mismatches = 0;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ls(line);
        std::string op;
        ls >> op;
        std::vector<u64> v;
        for (u64 x; ls >> x;) v.push_back(x);
        const Form& f = forms().at(op);
        REQUIRE(v.size() == f.regs.size() + 2);
        std::vector<u8> code = f.bytes;
        code.push_back(0xF4);  // hlt
        m.load(0x1000, code.data(), code.size());
        for (u64& r : m.cpu().gpr) r = 0;
        m.cpu().gpr[RAX] = 0x5555;
        for (size_t k = 0; k < f.regs.size(); ++k) m.cpu().gpr[f.regs[k]] = v[k];
        m.cpu().gpr[RSP] = 0x80000;
        m.cpu().set_rflags(v[v.size() - 2]);
        m.cpu().rip = 0x1000;
        const RunResult r = m.run(RunLimits{10});
        REQUIRE(r.reason == StopReason::kHalt);
        const u64 got = m.cpu().rflags() & kArithFlags;
        if (got != v.back() && ++mismatches <= 20)
            FAIL_CHECK(line << "  -> pmusim flags " << got);
        ++checked[op];
    }
    CHECK(mismatches == 0);
    CHECK(checked.size() == forms().size());  // every form was exercised
}
