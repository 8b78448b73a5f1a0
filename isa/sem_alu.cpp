// Integer arithmetic and logic: ADD ADC SUB SBB AND OR XOR CMP TEST NOT NEG INC DEC.
// SDM Vol. 2 (instruction pages); flags per SDM Vol. 1, 3.4.3 and Appendix A.
#include "isa/bind.h"

namespace pmusim {

namespace {

struct Add {
    static constexpr bool kWrites = true;
    template <class T> static T apply(Cpu& c, T a, T b) { T r = T(a + b); c.lf.add<T>(a, b, r); return r; }
};
struct Adc {
    static constexpr bool kWrites = true;
    template <class T> static T apply(Cpu& c, T a, T b) {
        T r = T(a + b + T(c.lf.cf()));
        c.lf.add<T>(a, b, r);
        return r;
    }
};
struct Sub {
    static constexpr bool kWrites = true;
    template <class T> static T apply(Cpu& c, T a, T b) { T r = T(a - b); c.lf.sub<T>(a, b, r); return r; }
};
struct Sbb {
    static constexpr bool kWrites = true;
    template <class T> static T apply(Cpu& c, T a, T b) {
        T r = T(a - b - T(c.lf.cf()));
        c.lf.sub<T>(a, b, r);
        return r;
    }
};
struct Cmp : Sub { static constexpr bool kWrites = false; };
struct And {
    static constexpr bool kWrites = true;
    template <class T> static T apply(Cpu& c, T a, T b) { T r = T(a & b); c.lf.logic<T>(r); return r; }
};
struct Test : And { static constexpr bool kWrites = false; };
struct Or {
    static constexpr bool kWrites = true;
    template <class T> static T apply(Cpu& c, T a, T b) { T r = T(a | b); c.lf.logic<T>(r); return r; }
};
struct Xor {
    static constexpr bool kWrites = true;
    template <class T> static T apply(Cpu& c, T a, T b) { T r = T(a ^ b); c.lf.logic<T>(r); return r; }
};

template <class OpT>
struct Binary {
    template <class T, Form F>
    struct H {
        static void run(Cpu& c, const Insn& i) {
            SegAddr addr{};
            const T a = load_a<T, F>(c, i, addr);
            const T b = load_b<T, F>(c, i);
            const T r = OpT::template apply<T>(c, a, b);
            if constexpr (OpT::kWrites) store_a<T, F>(c, i, addr, r);
        }
    };
    static bool bind(const DecodedInsn& d, Insn& out) {
        Form f;
        if (!bind_two(d, out, f)) return false;
        // TEST r/m, r is encoded with the register second; both read-only, any order works.
        out.fn = pick_size(d.ops[0].size, [&](auto t) { return form_handler<decltype(t), H>(f); });
        return true;
    }
};

// ---- one-operand forms -----------------------------------------------------

struct Not {
    template <class T> static T apply(Cpu&, T a) { return T(~a); }  // flags unaffected
};
struct Neg {
    template <class T> static T apply(Cpu& c, T a) { T r = T(T(0) - a); c.lf.sub<T>(T(0), a, r); return r; }
};
struct Inc {
    template <class T> static T apply(Cpu& c, T a) { T r = T(a + 1); c.lf.inc<T>(a, r); return r; }
};
struct Dec {
    template <class T> static T apply(Cpu& c, T a) { T r = T(a - 1); c.lf.dec<T>(a, r); return r; }
};

template <class OpT>
struct Unary {
    template <class T, bool Mem>
    static void run(Cpu& c, const Insn& i) {
        if constexpr (Mem) {
            const SegAddr addr = linear(c, i);
            c.mmu.write<T>(addr, OpT::template apply<T>(c, c.mmu.read<T>(addr)));
        } else {
            reg_set<T>(c, i.ra, OpT::template apply<T>(c, reg_get<T>(c, i.ra)));
        }
    }
    static bool bind(const DecodedInsn& d, Insn& out) {
        if (d.nops != 1) return false;
        const DecodedOperand& a = d.ops[0];
        const bool mem = is_mem(a);
        if (mem) bind_mem(d, a, out);
        else if (is_reg(a)) out.ra = reg_off(a);
        else return false;
        out.fn = pick_size(a.size, [&](auto t) -> Handler {
            using T = decltype(t);
            return mem ? &run<T, true> : &run<T, false>;
        });
        return true;
    }
};

}  // namespace

void register_alu(BinderTable& t) {
    t.add(Op::ADD, Binary<Add>::bind);
    t.add(Op::ADC, Binary<Adc>::bind);
    t.add(Op::SUB, Binary<Sub>::bind);
    t.add(Op::SBB, Binary<Sbb>::bind);
    t.add(Op::CMP, Binary<Cmp>::bind);
    t.add(Op::AND, Binary<And>::bind);
    t.add(Op::TEST, Binary<Test>::bind);
    t.add(Op::OR, Binary<Or>::bind);
    t.add(Op::XOR, Binary<Xor>::bind);
    t.add(Op::NOT, Unary<Not>::bind);
    t.add(Op::NEG, Unary<Neg>::bind);
    t.add(Op::INC, Unary<Inc>::bind);
    t.add(Op::DEC, Unary<Dec>::bind);
}

}  // namespace pmusim
