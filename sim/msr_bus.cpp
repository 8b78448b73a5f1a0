#include "sim/msr_bus.h"

#include <stdexcept>

#include "sim/fault.h"

namespace pmusim {

void MsrBus::add(MsrDef def) {
    const u32 idx = def.index;
    if (msrs_.count(idx)) throw std::logic_error("MSR " + std::to_string(idx) + " registered twice");
    const u64 reset = def.reset;
    msrs_.emplace(idx, Entry{std::move(def), reset});
}

void MsrBus::remove(u32 index) { msrs_.erase(index); }

u64 MsrBus::read(u32 index) {
    auto it = msrs_.find(index);
    if (it == msrs_.end()) raise_fault(vec::GP, 0);
    return it->second.def.read ? it->second.def.read() : it->second.value;
}

void MsrBus::write(u32 index, u64 value) {
    auto it = msrs_.find(index);
    if (it == msrs_.end()) raise_fault(vec::GP, 0);
    Entry& e = it->second;
    if (e.def.read_only || (value & e.def.reserved)) raise_fault(vec::GP, 0);
    if (e.def.write) e.def.write(value);
    else e.value = value;
}

std::optional<u64> MsrBus::peek(u32 index) {
    auto it = msrs_.find(index);
    if (it == msrs_.end()) return std::nullopt;
    return it->second.def.read ? it->second.def.read() : it->second.value;
}

std::string MsrBus::name(u32 index) const {
    auto it = msrs_.find(index);
    return it == msrs_.end() ? std::string() : it->second.def.name;
}

std::optional<u32> MsrBus::find(const std::string& name) const {
    for (const auto& [idx, e] : msrs_)
        if (e.def.name == name) return idx;
    return std::nullopt;
}

std::vector<u32> MsrBus::indices() const {
    std::vector<u32> v;
    for (const auto& [idx, e] : msrs_) v.push_back(idx);
    return v;
}

}  // namespace pmusim
