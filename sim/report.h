// Plain-text report of a finished run.
#pragma once
#include <ostream>

#include "sim/machine.h"

namespace pmusim {

/// Writes the stop reason, RIP, instruction count, the general registers and
/// RFLAGS, and the instructions that raised #UD because pmusim lacks them.
void write_run_report(std::ostream& os, Machine& m, const RunResult& r);

}  // namespace pmusim
