// The event interface through which models observe the core.
#pragma once
#include <functional>
#include <vector>

#include "sim/types.h"

namespace pmusim {

/// What happened. Each kind costs the core nothing until something subscribes to it.
enum class EventKind : u8 {
    kInsnRetired,  ///< an instruction retired (rip = its address, to = next RIP)
    kBranch,       ///< a control transfer retired (taken branches only; see BranchKind)
    kException,    ///< an exception was raised (vector, error code, rip = faulting insn)
    kInterrupt,    ///< an external interrupt or NMI was accepted
    kMemAccess,    ///< a data memory access (addr = linear, size, write, value)
    kModeChange,   ///< CPL or operating mode changed
    kMsrAccess,    ///< RDMSR/WRMSR (msr, value, write)
    kCount
};

/// Kinds of control transfer, fine enough for LBR_SELECT and BTS filtering
/// (SDM Vol. 3, 18.9 / 17.4 branch classes).
enum class BranchKind : u8 {
    kJcc,        ///< conditional jump taken (incl. JCXZ/LOOP family)
    kJmpRel,     ///< near relative JMP
    kJmpInd,     ///< near indirect JMP
    kCallRel,    ///< near relative CALL
    kCallInd,    ///< near indirect CALL
    kRet,        ///< near RET
    kFar,        ///< far JMP/CALL/RET, IRET, SYSCALL/SYSRET and friends
    kInterrupt,  ///< software or hardware interrupt delivery
    kException,  ///< exception delivery
};

/// One event. Fields not meaningful for a kind are zero.
struct Event {
    EventKind kind{};
    BranchKind branch{};
    u8 vector = 0;
    u8 size = 0;        ///< bytes, for kMemAccess
    bool write = false;
    bool has_error_code = false;
    u32 error_code = 0;
    u32 msr = 0;
    u64 rip = 0;        ///< address of the instruction the event belongs to
    u64 from = 0, to = 0;
    u64 addr = 0;
    u64 value = 0;
};

/// Subscriber lists per EventKind, with a bit mask the core tests before
/// building an event (so an unsubscribed kind costs one predictable branch).
class EventBus {
public:
    using Callback = std::function<void(const Event&)>;
    using SubscriptionId = u64;

    static constexpr u32 bit(EventKind k) { return 1u << unsigned(k); }

    SubscriptionId subscribe(EventKind kind, Callback cb);
    void unsubscribe(SubscriptionId id);
    bool wants(EventKind k) const { return mask_ & bit(k); }
    u32 mask() const { return mask_; }
    void emit(const Event& e) const;

private:
    struct Sub {
        SubscriptionId id;
        EventKind kind;
        Callback cb;
    };
    void recompute_mask();
    std::vector<Sub> subs_;
    u32 mask_ = 0;
    SubscriptionId next_id_ = 1;
};

}  // namespace pmusim
