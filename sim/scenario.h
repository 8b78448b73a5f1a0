// Scenarios: a JSON description of a run (docs/scenario-format.md), loaded and executed.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/machine.h"
#include "sim/nasm.h"
#include "sim/presets.h"
#include "models/apic/local_apic.h"
#include "models/devices/standard_devices.h"

namespace pmusim {

/// Bad scenario input. `what()` is the complete message: file, JSON path (or NASM
/// line) and what was expected.
struct ScenarioError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// A value in a scenario that may be a number or a program label.
struct ValueOrLabel {
    std::optional<u64> value;
    std::string label;
};

struct Scenario {
    std::string file;  ///< path of the JSON file ("" for in-memory scenarios)
    std::string name, description;
    std::string cpu = "generic-intel";
    nlohmann::json cpu_overrides = nlohmann::json::object();
    StartPreset start = StartPreset::kLong64;
    std::string nasm_source, nasm_name, include_dir;
    std::optional<u64> org;
    std::optional<ValueOrLabel> entry;
    u64 memory_mib = 64;
    std::vector<std::pair<std::string, u64>> registers;
    std::vector<std::pair<std::string, u64>> msrs;  ///< SDM name or decimal/hex number text
    struct Handler {
        u8 vector;
        std::string label;
        unsigned dpl = 0;
        bool trap = false;
        unsigned ist = 0;
    };
    std::vector<Handler> handlers;
    u64 max_instructions = 10'000'000;
    std::optional<std::string> stop_label;
    nlohmann::json expect = nlohmann::json::object();
};

/// Reads and validates a scenario file. Throws ScenarioError (malformed JSON with
/// line and column, unknown keys and wrong types with their JSON path, missing files).
Scenario load_scenario(const std::string& path);
/// The same for a JSON document already in memory; `file` names it in messages and
/// is the base for relative paths.
Scenario parse_scenario(const nlohmann::json& doc, const std::string& file);

/// One expectation checked after the run.
struct Check {
    std::string what;      ///< e.g. "registers.rax"
    std::string expected;  ///< as text
    std::string actual;
    bool ok = false;
};

/// A finished scenario run.
struct ScenarioResult {
    RunResult run;
    std::string stop;  ///< stop reason name ("unhandled-vector" for a default stub)
    std::optional<u8> unhandled_vector;
    std::vector<Event> events;  ///< exceptions and interrupts in delivery order
    std::vector<Check> checks;
    AssembledProgram program;
    /// The standard PC devices the scenario ran with (debug console, UART, VGA text, ...).
    std::shared_ptr<StandardDevices> devices;
    /// The local APIC (xAPIC at IA32_APIC_BASE), the source of maskable interrupts.
    std::shared_ptr<LocalApic> apic;
    /// The CPU profile the machine runs with (after the scenario's overrides).
    std::shared_ptr<CpuProfile> profile;
    bool passed() const;
};

/// Builds the machine (with the standard devices and the local APIC), loads the
/// program and runs the scenario. `machine` receives the machine so reports can
/// read it; the result holds the devices and must not outlive it. Throws ScenarioError for bad input that only
/// shows while building (NASM errors, unknown labels, unknown MSRs).
ScenarioResult run_scenario(const Scenario& s, std::unique_ptr<Machine>& machine,
                            std::optional<u64> max_instructions = std::nullopt);

}  // namespace pmusim
