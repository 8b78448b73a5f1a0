#include "sim/cpu.h"

namespace pmusim {

u32 MissingInsnReport::intern(const std::string& mnemonic) {
    for (u32 k = 0; k < names.size(); ++k)
        if (names[k] == mnemonic) return k;
    names.push_back(mnemonic);
    executions.push_back(0);
    return u32(names.size() - 1);
}

void Cpu::emit_branch(BranchKind kind, u64 from, u64 to) {
    Event e;
    e.kind = EventKind::kBranch;
    e.branch = kind;
    e.rip = from;
    e.from = from;
    e.to = to;
    events.emit(e);
}

}  // namespace pmusim
