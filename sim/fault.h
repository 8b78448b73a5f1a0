// Guest faults: architectural exceptions raised while an instruction executes.
#pragma once
#include "sim/types.h"

namespace pmusim {

/// Exception vectors by their SDM mnemonics (SDM Vol. 3, 6.3.1, Table 6-1): vec::GP is #GP.
namespace vec {
enum : u8 {
    DE = 0, DB = 1, NMI = 2, BP = 3, OF = 4, BR = 5, UD = 6, NM = 7,
    DF = 8, TS = 10, NP = 11, SS = 12, GP = 13, PF = 14, MF = 16,
    AC = 17, MC = 18, XM = 19,
};
}  // namespace vec

/// Thrown by instruction semantics and the memory path when the current
/// instruction raises an exception. The run loop catches it at the instruction
/// boundary: the faulting instruction has not retired and RIP points at it.
/// C++ exceptions cost nothing until thrown, so the non-faulting hot path pays nothing.
struct GuestFault {
    u8 vector;
    bool has_error_code;
    u32 error_code;
    u64 fault_address;  ///< CR2 value for #PF, linear address otherwise informative.
};

[[noreturn]] inline void raise_fault(u8 vector) { throw GuestFault{vector, false, 0, 0}; }
[[noreturn]] inline void raise_fault(u8 vector, u32 error_code) {
    throw GuestFault{vector, true, error_code, 0};
}

/// Short name of an exception vector ("#GP"), or "INT n" style text for others.
const char* vector_name(u8 vector);

}  // namespace pmusim
