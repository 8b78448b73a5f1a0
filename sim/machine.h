// The machine: RAM, buses, one core, its decode cache, and the run loop.
#pragma once
#include <memory>
#include <optional>
#include <unordered_set>

#include "sim/bus.h"
#include "sim/cpu.h"
#include "sim/decode_cache.h"
#include "sim/fault.h"

namespace pmusim {

struct MachineConfig {
    u64 memory_bytes = 64ull << 20;  ///< guest RAM size in bytes
};

enum class StopReason : u8 {
    kInstructionLimit,  ///< RunLimits::max_instructions retired
    kHalt,              ///< HLT executed (no interrupt delivery modelled yet)
    kStopAddress,       ///< execution reached a stop address
    kException,         ///< an exception was raised and cannot be delivered
    kHostRequest,       ///< request_stop() was called
};
const char* stop_reason_name(StopReason r);

struct RunLimits {
    u64 max_instructions = ~0ull;  ///< instructions to retire at most in this run
};

struct RunResult {
    StopReason reason = StopReason::kInstructionLimit;
    u64 instructions = 0;              ///< retired in this run
    u64 rip = 0;                       ///< RIP at the stop
    std::optional<GuestFault> fault;   ///< for kException
};

/// Owns the guest: physical memory, the memory and port buses, the core and its
/// decode cache; runs guest code.
///
/// Until the system architecture lands, the core runs with flat segments at CPL 0
/// and raised exceptions stop the run (StopReason::kException) with RIP at the
/// faulting instruction.
class Machine {
public:
    explicit Machine(const MachineConfig& cfg = {});
    Machine(const Machine&) = delete;

    Cpu& cpu() { return cpu_; }
    MemoryBus& memory_bus() { return bus_; }
    PortBus& port_bus() { return ports_; }
    PhysicalMemory& ram() { return ram_; }
    DecodeCache& decode_cache() { return cache_; }

    /// Copies `n` bytes to physical address `pa` (host side, no faults), dropping
    /// decoded code they overwrite. Throws std::out_of_range beyond RAM.
    void load(u64 pa, const void* data, size_t n);
    /// Reads `n` bytes of physical memory into `out` (host side).
    void peek(u64 pa, void* out, size_t n);

    /// Flat segments with base 0 at CPL 0 and code of `bits` width: 64 means IA-32e
    /// 64-bit mode, 32 and 16 protected-mode segments with D=1/D=0 (B likewise).
    void set_flat_mode(CodeBits bits);

    /// Stops a run when RIP reaches one of `rips` (after at least one instruction).
    void set_stop_addresses(std::unordered_set<u64> rips) { cache_.set_stop_addresses(std::move(rips)); }

    /// Runs until a stop condition. Safe to call repeatedly.
    RunResult run(const RunLimits& limits = {});
    /// Executes one instruction.
    RunResult step() { return run(RunLimits{1}); }
    /// Asks a running run() to stop at the next instruction boundary (any thread).
    void request_stop() { __atomic_or_fetch(&cpu_.pending, kPendingStop, __ATOMIC_RELAXED); }

private:
    /// Executes block `b`; returns a stop if one happened.
    std::optional<StopReason> exec_block(Block* b, u64 end, RunResult& r);
    std::optional<StopReason> on_fault(const GuestFault& f, RunResult& r);

    PhysicalMemory ram_;
    MemoryBus bus_;
    PortBus ports_;
    Cpu cpu_;
    DecodeCache cache_;
};

}  // namespace pmusim
