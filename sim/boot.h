// Booting unmodified images: raw modules loaded byte for byte at given addresses.
#pragma once
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/apic/local_apic.h"
#include "models/devices/standard_devices.h"
#include "sim/cpu_profile.h"
#include "sim/machine.h"

namespace pmusim {

/// Bad boot input (file, address or option named in the message).
struct BootError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct BootOptions {
    struct Module {
        std::string path;
        u64 address;
    };
    std::vector<Module> modules;       ///< loaded in order; they must not overlap
    std::string start = "real:0:0x7c00";  ///< "real:SEG:OFF" or a preset name (sim/presets.h)
    std::optional<u64> entry;          ///< RIP for a preset; default: the first module's address
    std::string cpu = "generic-intel";
    u64 memory_mib = 64;
};

/// Parses "FILE@ADDR" (ADDR decimal or 0x hex). Throws BootError.
BootOptions::Module parse_module(const std::string& spec);

/// A booted machine with the standard devices and the local APIC attached.
struct Booted {
    std::shared_ptr<CpuProfile> profile;
    std::unique_ptr<Machine> machine;
    std::shared_ptr<StandardDevices> devices;
    std::shared_ptr<LocalApic> apic;
};

/// Builds the machine and loads the modules (real mode: CS:IP from `start`, the
/// state after RESET otherwise; presets: as apply_preset). Throws BootError for a
/// missing file, a module outside RAM, overlapping modules or a bad start.
Booted boot(const BootOptions& o);

}  // namespace pmusim
