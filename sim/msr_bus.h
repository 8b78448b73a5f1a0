// The MSR bus: RDMSR/WRMSR routed to the model that owns each MSR.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <vector>
#include <string>

#include "sim/types.h"

namespace pmusim {

/// One model-specific register as its owner registers it (SDM Vol. 4 for the
/// architectural MSR names and addresses).
struct MsrDef {
    u32 index = 0;
    std::string name;            ///< SDM name, e.g. "IA32_DEBUGCTL"
    u64 reset = 0;               ///< value after reset (when the owner stores it)
    u64 reserved = 0;            ///< bits that raise #GP(0) when written as 1
    bool read_only = false;      ///< WRMSR raises #GP(0)
    /// Custom read/write. Without them the bus stores the value itself.
    /// A write callback may throw GuestFault (e.g. non-canonical address -> #GP(0)).
    std::function<u64()> read;
    std::function<void(u64)> write;
};

/// Routes MSR accesses. Unknown MSRs, reserved bits and writes to read-only MSRs
/// raise #GP(0) here, so models only see valid accesses (SDM Vol. 2, RDMSR/WRMSR).
class MsrBus {
public:
    /// Registers an MSR. Throws std::logic_error if the index is taken.
    void add(MsrDef def);
    /// Removes an MSR (a model being detached).
    void remove(u32 index);

    bool has(u32 index) const { return msrs_.count(index) != 0; }
    /// Guest RDMSR: value or #GP(0) (throws GuestFault).
    u64 read(u32 index);
    /// Guest WRMSR: #GP(0) for unknown, read-only or reserved bits (throws GuestFault).
    void write(u32 index, u64 value);

    /// Host-side access that bypasses checks but not write callbacks; std::nullopt if unknown.
    std::optional<u64> peek(u32 index);
    /// SDM name of an MSR index, or "" if unknown.
    std::string name(u32 index) const;
    /// Index of an MSR by SDM name, if registered.
    std::optional<u32> find(const std::string& name) const;
    /// All registered indices in ascending order.
    std::vector<u32> indices() const;

private:
    struct Entry {
        MsrDef def;
        u64 value;
    };
    std::map<u32, Entry> msrs_;
};

}  // namespace pmusim
