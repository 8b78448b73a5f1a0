#include "isa/decoded.h"

namespace pmusim {

const char* op_name(Op op) {
    static const char* const names[] = {
        "unknown",
#define X(n) #n,
#include "isa/opcodes.def"
#undef X
        "RDPID", "MOV CR", "MOV DR", "MOV Sreg", "POP Sreg",
    };
    const size_t k = size_t(op);
    return k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

}  // namespace pmusim
