// Reports of finished runs: human-readable text and a JSON document.
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>

#include "sim/machine.h"
#include "sim/scenario.h"

namespace pmusim {

/// Writes the stop reason, RIP, instruction count, the general registers and
/// RFLAGS, and the instructions that raised #UD because pmusim lacks them.
void write_run_report(std::ostream& os, Machine& m, const RunResult& r);

/// The human report of a scenario: header, stop, counts, registers, the
/// exceptions and interrupts in order (with labels), and every expectation.
void write_scenario_report(std::ostream& os, const Scenario& s, const ScenarioResult& r, Machine& m);

/// The same as one JSON document (docs/report-format.md); 64-bit values are "0x..." strings.
nlohmann::json scenario_report_json(const Scenario& s, const ScenarioResult& r, Machine& m);

/// The report of `pmusim boot`: the run report plus console, serial and screen.
void write_boot_report(std::ostream& os, Machine& m, const RunResult& r, const StandardDevices& d);
/// The same as JSON (the keys of docs/report-format.md that apply without a scenario).
nlohmann::json boot_report_json(Machine& m, const RunResult& r, const StandardDevices& d);

/// "label+0x12" for the nearest label at or below `addr`, or "" if none.
std::string label_of(const AssembledProgram& p, u64 addr);

}  // namespace pmusim
