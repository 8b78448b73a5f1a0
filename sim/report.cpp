#include "sim/report.h"

#include <cstdio>

namespace pmusim {

namespace {
const char* const kNames[] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                              "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};

std::string hex(u64 v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%016llx", static_cast<unsigned long long>(v));
    return b;
}
}  // namespace

void write_run_report(std::ostream& os, Machine& m, const RunResult& r) {
    Cpu& c = m.cpu();
    os << "stop:         " << stop_reason_name(r.reason);
    if (r.fault) {
        os << " " << vector_name(r.fault->vector);
        if (r.fault->has_error_code) os << "(" << r.fault->error_code << ")";
    }
    os << " at rip " << hex(r.rip) << "\n";
    os << "instructions: " << r.instructions << "\n\nregisters:\n";
    for (int k = 0; k < 16; ++k) {
        char name[8];
        std::snprintf(name, sizeof name, "%-4s", kNames[k]);
        os << "  " << name << hex(c.gpr[k]) << ((k % 4 == 3) ? "\n" : "");
    }
    const u64 f = c.rflags();
    os << "  rflags " << hex(f) << "  [" << ((f & kOF) ? "OF " : "") << ((f & kSF) ? "SF " : "")
       << ((f & kZF) ? "ZF " : "") << ((f & kAF) ? "AF " : "") << ((f & kPF) ? "PF " : "")
       << ((f & kCF) ? "CF " : "") << ((f & kDF) ? "DF " : "") << ((f & kIF) ? "IF" : "") << "]\n";
    bool any = false;
    for (size_t k = 0; k < c.missing.names.size(); ++k) {
        if (!c.missing.executions[k]) continue;
        if (!any) os << "\ninstructions pmusim does not implement (raised #UD):\n";
        any = true;
        os << "  " << c.missing.names[k] << " x" << c.missing.executions[k] << "\n";
    }
}

}  // namespace pmusim
