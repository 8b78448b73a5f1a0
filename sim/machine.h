// The machine: RAM, buses, one core, its decode cache, interrupt lines, and the run loop.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include "sim/bus.h"
#include "sim/cpu.h"
#include "sim/cpu_profile.h"
#include "sim/decode_cache.h"
#include "sim/delivery.h"
#include "sim/fault.h"
#include "sim/interrupt_controller.h"

namespace pmusim {

struct MachineConfig {
    u64 memory_bytes = 64ull << 20;             ///< guest RAM size in bytes
    const CpuProfile* profile = nullptr;        ///< nullptr: generic_intel_profile()
};

enum class StopReason : u8 {
    kInstructionLimit,  ///< RunLimits::max_instructions retired
    kHalt,              ///< HLT with no interrupt that could wake the core
    kStopAddress,       ///< execution reached a stop address
    kException,         ///< an exception was raised while exceptions stop the run (set_stop_on_exception)
    kTripleFault,       ///< an exception while delivering #DF: the processor shuts down
    kUnsupported,       ///< the guest used a feature pmusim does not model (RunResult::message)
    kHostRequest,       ///< request_stop() was called
    kGuestExit,         ///< a device ended the run for the guest (RunResult::exit_code, message)
    kIdleLoop,          ///< a JMP to itself with no interrupt that could ever end it (`jmp $`)
};
const char* stop_reason_name(StopReason r);

struct RunLimits {
    /// Instructions to retire at most in this run. Delivered exceptions and
    /// interrupts count too, so a guest that faults forever without retiring
    /// anything (a handler that faults itself) still stops.
    u64 max_instructions = ~0ull;
};

struct RunResult {
    StopReason reason = StopReason::kInstructionLimit;
    u64 instructions = 0;              ///< retired in this run
    u64 rip = 0;                       ///< RIP at the stop
    std::optional<GuestFault> fault;   ///< for kException and kTripleFault: the last exception
    std::string message;               ///< for kUnsupported and kGuestExit
    int exit_code = 0;                 ///< for kGuestExit
};

/// Owns the guest: physical memory, the memory and port buses, the core and its
/// decode cache, and the interrupt lines; runs guest code.
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

    /// Processor state after RESET (SDM Vol. 3, 9.1.1, Table 9-1): real mode,
    /// CS:IP = F000:FFF0 with CS base FFFF0000, DR6/DR7 as the debug model sets them.
    void reset();

    /// reset(), then start in real mode at `cs`:`ip` (as a boot loader hands over
    /// to a boot sector at 0000:7C00).
    void start_real_mode(u16 cs, u16 ip);

    /// Flat segments with base 0 at CPL 0 and code of `bits` width, for running
    /// code without system setup: 16 and 32 select protected mode with D=0/D=1
    /// segments and paging off; 64 selects IA-32e 64-bit mode with identity-mapping
    /// page tables (2 MiB pages, the first 4 GiB) in the top 24 KiB of RAM.
    /// Exceptions stop the run (set_stop_on_exception(true)) since there is no IDT.
    void set_flat_mode(CodeBits bits);

    /// When true, an exception stops the run (StopReason::kException) with RIP at
    /// the faulting instruction instead of being delivered through the IDT.
    void set_stop_on_exception(bool on) { stop_on_exception_ = on; }

    /// Stops a run when RIP reaches one of `rips` (after at least one instruction).
    void set_stop_addresses(std::unordered_set<u64> rips) { cache_.set_stop_addresses(std::move(rips)); }

    /// Raises the INTR line with `vector` on the default controller (a maskable
    /// external interrupt) until the core accepts it at an instruction boundary with
    /// RFLAGS.IF = 1 and no interrupt shadow (SDM Vol. 3, 6.8.1). Higher vectors are
    /// accepted first.
    void raise_interrupt(u8 vector);
    /// Makes `ic` the source of maskable interrupts (e.g. the local APIC); nullptr
    /// restores the default INTR line. The controller must call interrupt_requested()
    /// when it has something new to deliver.
    void set_interrupt_controller(InterruptController* ic);
    /// Tells the core that the interrupt controller may have a deliverable vector.
    void interrupt_requested();
    /// Ends the run at the next instruction boundary with StopReason::kGuestExit
    /// (isa-debug-exit, the shutdown port, a triple-fault policy, ...).
    void request_exit(int exit_code, std::string message);
    /// Raises NMI (vector 2): accepted at the next boundary unless an NMI handler
    /// runs (blocked until IRET) or in a MOV SS shadow (SDM Vol. 3, 6.7.1, 6.8.3).
    void raise_nmi();
    /// Calls `fn` when `after` more instructions have retired (or, in HLT, when
    /// that much time has passed: the halted core skips ahead to it). Time is counted
    /// in instructions until the timing model exists.
    void schedule(u64 after, std::function<void()> fn);

    /// Runs until a stop condition. Safe to call repeatedly.
    RunResult run(const RunLimits& limits = {});
    /// Executes one instruction.
    RunResult step() { return run(RunLimits{1}); }
    /// Asks a running run() to stop at the next instruction boundary (any thread).
    void request_stop() { __atomic_or_fetch(&cpu_.pending, kPendingStop, __ATOMIC_RELAXED); }

    /// Current time in instructions plus halted time.
    u64 now() const { return cpu_.retired + idle_; }

private:
    std::optional<StopReason> exec_block(Block* b, u64 end, RunResult& r);
    /// Handles an exception raised by the current instruction (RIP at it).
    std::optional<StopReason> on_fault(const GuestFault& f, RunResult& r);
    /// Delivers pending NMI/INTR if possible; returns true if one was delivered.
    bool accept_interrupt(RunResult& r, std::optional<StopReason>& stop);
    /// The rare work between blocks: pending bits, HLT, timers, interrupts.
    std::optional<StopReason> service(RunResult& r);
    void update_deadline() { deadline_ = timers_.empty() ? ~0ull : timers_.begin()->first - idle_; }
    bool interrupt_possible() const;
    bool in_shadow() const { return cpu_.retired == cpu_.shadow_at; }
    void fire_due_events();
    void build_identity_page_tables();

    PhysicalMemory ram_;
    MemoryBus bus_;
    PortBus ports_;
    Cpu cpu_;
    DecodeCache cache_;
    bool stop_on_exception_ = false;
    SimpleInterruptLine line_;   ///< the default INTR source
    InterruptController* ic_ = &line_;
    bool nmi_pending_ = false;
    std::optional<std::pair<int, std::string>> exit_;  ///< requested guest exit
    bool irq_waiting_ = false;   ///< an NMI or INTR is raised and not yet accepted
    u64 idle_ = 0;               ///< time spent halted
    u64 deadline_ = ~0ull;       ///< Cpu::retired at which the next timer is due
    u64 deliveries_ = 0;         ///< exceptions and interrupts delivered in the current run
    std::multimap<u64, std::function<void()>> timers_;
};

}  // namespace pmusim
