#include "sim/events.h"

#include <algorithm>

namespace pmusim {

EventBus::SubscriptionId EventBus::subscribe(EventKind kind, Callback cb) {
    subs_.push_back(Sub{next_id_, kind, std::move(cb)});
    recompute_mask();
    return next_id_++;
}

void EventBus::unsubscribe(SubscriptionId id) {
    subs_.erase(std::remove_if(subs_.begin(), subs_.end(), [&](const Sub& s) { return s.id == id; }),
                subs_.end());
    recompute_mask();
}

void EventBus::emit(const Event& e) const {
    for (const Sub& s : subs_)
        if (s.kind == e.kind) s.cb(e);
}

void EventBus::recompute_mask() {
    mask_ = 0;
    for (const Sub& s : subs_) mask_ |= bit(s.kind);
}

}  // namespace pmusim
