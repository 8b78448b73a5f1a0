#include "sim/boot.h"

#include <fstream>
#include <iterator>

#include "sim/presets.h"

namespace pmusim {

namespace {

u64 parse_number(const std::string& text, const std::string& what) {
    try {
        size_t used = 0;
        const u64 v = std::stoull(text, &used, 0);
        if (used == text.size()) return v;
    } catch (const std::exception&) {
    }
    throw BootError(what + ": expected a number (decimal or 0x hex), got \"" + text + "\"");
}

}  // namespace

BootOptions::Module parse_module(const std::string& spec) {
    const size_t at = spec.rfind('@');
    if (at == std::string::npos || at == 0) throw BootError("--module " + spec + ": expected FILE@ADDR");
    return {spec.substr(0, at), parse_number(spec.substr(at + 1), "--module " + spec)};
}

Booted boot(const BootOptions& o) {
    if (o.modules.empty()) throw BootError("nothing to boot: give at least one --module FILE@ADDR");
    Booted b;
    try {
        b.profile = std::make_shared<CpuProfile>(load_profile_by_name(o.cpu));
    } catch (const ProfileError& e) {
        throw BootError(std::string("--cpu: ") + e.what());
    }
    b.machine = std::make_unique<Machine>(MachineConfig{o.memory_mib << 20, b.profile.get()});
    Machine& m = *b.machine;
    b.devices = std::make_shared<StandardDevices>();
    b.devices->attach(m);
    b.apic = std::make_shared<LocalApic>();
    b.apic->attach(m);
    std::vector<std::pair<u64, u64>> placed;  // [begin, end) of loaded modules
    for (const auto& mod : o.modules) {
        std::ifstream f(mod.path, std::ios::binary);
        if (!f) throw BootError("--module " + mod.path + ": cannot read the file");
        const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), {});
        const u64 end = mod.address + bytes.size();
        if (end > m.ram().size() || end < mod.address)
            throw BootError("--module " + mod.path + "@" + std::to_string(mod.address) + ": " +
                            std::to_string(bytes.size()) + " bytes do not fit in " +
                            std::to_string(o.memory_mib) + " MiB of RAM");
        for (const auto& [b0, e0] : placed)
            if (mod.address < e0 && b0 < end) throw BootError("--module " + mod.path + ": overlaps an earlier module");
        placed.emplace_back(mod.address, end);
        m.load(mod.address, bytes.data(), bytes.size());
    }
    if (o.start.rfind("real:", 0) == 0) {
        // real:SEG:OFF, the way a boot loader hands over (SDM Vol. 3, 9.1: real mode after RESET).
        const std::string rest = o.start.substr(5);
        const size_t colon = rest.find(':');
        if (colon == std::string::npos) throw BootError("--start " + o.start + ": expected real:SEG:OFF");
        const u64 seg = parse_number(rest.substr(0, colon), "--start segment");
        const u64 off = parse_number(rest.substr(colon + 1), "--start offset");
        if (seg > 0xFFFF || off > 0xFFFF) throw BootError("--start " + o.start + ": SEG and OFF are 16-bit values");
        m.start_real_mode(u16(seg), u16(off));
    } else {
        const auto preset = preset_from_name(o.start);
        if (!preset) throw BootError("--start " + o.start + ": expected real:SEG:OFF, real16, protected32, protected32-pae or long64");
        apply_preset(m, *preset, o.entry.value_or(o.modules.front().address));
    }
    return b;
}

}  // namespace pmusim
