#include "sim/scenario.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace pmusim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// Error for `path` in `file`: "<file>: <path>: <message>".
[[noreturn]] void fail(const std::string& file, const std::string& path, const std::string& msg) {
    throw ScenarioError(file + ": " + (path.empty() ? "/" : path) + ": " + msg);
}

std::string hex(u64 v) {
    std::ostringstream o;
    o << "0x" << std::hex << v;
    return o.str();
}

/// The parsing context: file name for messages and the JSON path of the value.
struct At {
    const std::string& file;
    std::string path;
    At operator/(const std::string& key) const { return At{file, path + "/" + key}; }
    [[noreturn]] void fail(const std::string& msg) const { pmusim::fail(file, path, msg); }

    void only_keys(const json& obj, std::initializer_list<const char*> allowed) const {
        if (!obj.is_object()) fail("expected an object");
        for (const auto& [k, v] : obj.items()) {
            bool ok = false;
            for (const char* a : allowed) ok = ok || k == a;
            if (!ok) {
                std::string list;
                for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
                (*this / k).fail("unknown key (expected one of: " + list + ")");
            }
        }
    }
    std::string string(const json& v) const {
        if (!v.is_string()) fail("expected a string");
        return v.get<std::string>();
    }
    /// A number: JSON integer, or a string in decimal, 0x hex or with a leading '-'.
    u64 number(const json& v) const {
        if (v.is_number_unsigned()) return v.get<u64>();
        if (v.is_number_integer()) return u64(v.get<i64>());
        if (v.is_string()) {
            const std::string s = v.get<std::string>();
            try {
                size_t used = 0;
                const bool neg = !s.empty() && s[0] == '-';
                const u64 x = std::stoull(neg ? s.substr(1) : s, &used, 0);
                if (used == s.size() - (neg ? 1 : 0) && !s.empty()) return neg ? u64(0) - x : x;
            } catch (const std::exception&) {
            }
            fail("expected a number (decimal or 0x hex), got \"" + s + "\"");
        }
        fail("expected a number");
    }
    ValueOrLabel value_or_label(const json& v) const {
        if (v.is_string()) {
            const std::string s = v.get<std::string>();
            if (!s.empty() && (std::isdigit(u8(s[0])) || s[0] == '-')) return {number(v), ""};
            return {std::nullopt, s};
        }
        return {number(v), ""};
    }
};

const char* const kRegNames[] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                 "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};

std::optional<int> reg_index(const std::string& n) {
    for (int k = 0; k < 16; ++k)
        if (n == kRegNames[k]) return k;
    if (n == "rip") return 16;
    if (n == "rflags") return 17;
    return std::nullopt;
}

u64 read_reg(Cpu& c, int k) { return k < 16 ? c.gpr[k] : k == 16 ? c.rip : c.rflags(); }

}  // namespace

Scenario parse_scenario(const json& doc, const std::string& file) {
    const At root{file, ""};
    root.only_keys(doc, {"name", "description", "cpu", "cpu_overrides", "start", "program", "memory_mib",
                         "registers", "msrs", "handlers", "limits", "expect"});
    Scenario s;
    s.file = file;
    if (!doc.contains("name")) root.fail("missing required key \"name\"");
    s.name = (root / "name").string(doc["name"]);
    if (doc.contains("description")) s.description = (root / "description").string(doc["description"]);
    if (doc.contains("cpu")) s.cpu = (root / "cpu").string(doc["cpu"]);
    if (doc.contains("cpu_overrides")) {
        if (!doc["cpu_overrides"].is_object()) (root / "cpu_overrides").fail("expected an object");
        s.cpu_overrides = doc["cpu_overrides"];
    }
    if (doc.contains("start")) {
        const std::string n = (root / "start").string(doc["start"]);
        const auto p = preset_from_name(n);
        if (!p) (root / "start").fail("unknown start preset \"" + n + "\" (expected real16, protected32, protected32-pae or long64)");
        s.start = *p;
    }
    if (!doc.contains("program")) root.fail("missing required key \"program\"");
    const json& prog = doc["program"];
    const At pa = root / "program";
    pa.only_keys(prog, {"nasm_file", "nasm", "org", "entry"});
    const fs::path base = file.empty() ? fs::current_path() : fs::path(file).parent_path();
    if (prog.contains("nasm_file") == prog.contains("nasm")) pa.fail("expected exactly one of \"nasm_file\" and \"nasm\"");
    if (prog.contains("nasm_file")) {
        const fs::path p = base / (pa / "nasm_file").string(prog["nasm_file"]);
        std::ifstream f(p);
        if (!f) (pa / "nasm_file").fail("cannot read " + p.string());
        s.nasm_source.assign(std::istreambuf_iterator<char>(f), {});
        s.nasm_name = p.string();
    } else {
        s.nasm_source = (pa / "nasm").string(prog["nasm"]);
        s.nasm_name = file + ":/program/nasm";
    }
    s.include_dir = base.string();
    if (prog.contains("org")) s.org = (pa / "org").number(prog["org"]);
    if (prog.contains("entry")) s.entry = (pa / "entry").value_or_label(prog["entry"]);
    if (doc.contains("memory_mib")) {
        s.memory_mib = (root / "memory_mib").number(doc["memory_mib"]);
        if (s.memory_mib < 2 || s.memory_mib > 4096) (root / "memory_mib").fail("expected 2..4096 (MiB)");
    }
    if (doc.contains("registers")) {
        const At ra = root / "registers";
        if (!doc["registers"].is_object()) ra.fail("expected an object");
        for (const auto& [k, v] : doc["registers"].items()) {
            if (!reg_index(k)) (ra / k).fail("unknown register (expected rax..r15, rip or rflags)");
            s.registers.emplace_back(k, (ra / k).number(v));
        }
    }
    if (doc.contains("msrs")) {
        const At ma = root / "msrs";
        if (!doc["msrs"].is_object()) ma.fail("expected an object");
        for (const auto& [k, v] : doc["msrs"].items()) s.msrs.emplace_back(k, (ma / k).number(v));
    }
    if (doc.contains("handlers")) {
        const At ha = root / "handlers";
        if (!doc["handlers"].is_object()) ha.fail("expected an object");
        for (const auto& [k, v] : doc["handlers"].items()) {
            Scenario::Handler h;
            const u64 vec = (ha / k).number(json(k));
            if (vec > 255) (ha / k).fail("expected a vector 0..255");
            h.vector = u8(vec);
            if (v.is_string()) {
                h.label = v.get<std::string>();
            } else {
                const At e = ha / k;
                e.only_keys(v, {"label", "dpl", "trap", "ist"});
                if (!v.contains("label")) e.fail("missing required key \"label\"");
                h.label = (e / "label").string(v["label"]);
                if (v.contains("dpl")) h.dpl = unsigned((e / "dpl").number(v["dpl"]) & 3);
                if (v.contains("trap")) {
                    if (!v["trap"].is_boolean()) (e / "trap").fail("expected true or false");
                    h.trap = v["trap"].get<bool>();
                }
                if (v.contains("ist")) h.ist = unsigned((e / "ist").number(v["ist"]) & 7);
            }
            s.handlers.push_back(h);
        }
    }
    if (doc.contains("limits")) {
        const At la = root / "limits";
        la.only_keys(doc["limits"], {"max_instructions", "stop_label"});
        if (doc["limits"].contains("max_instructions"))
            s.max_instructions = (la / "max_instructions").number(doc["limits"]["max_instructions"]);
        if (doc["limits"].contains("stop_label")) s.stop_label = (la / "stop_label").string(doc["limits"]["stop_label"]);
    }
    if (doc.contains("expect")) {
        const At ea = root / "expect";
        ea.only_keys(doc["expect"], {"stop", "registers", "msrs", "memory", "console", "serial", "screen", "exceptions",
                                     "instructions"});
        s.expect = doc["expect"];
        // Validate shapes now so a typo fails before the run.
        const json& e = s.expect;
        if (e.contains("stop")) (ea / "stop").string(e["stop"]);
        if (e.contains("registers")) {
            if (!e["registers"].is_object()) (ea / "registers").fail("expected an object");
            for (const auto& [k, v] : e["registers"].items()) {
                if (!reg_index(k)) (ea / "registers" / k).fail("unknown register (expected rax..r15, rip or rflags)");
                (ea / "registers" / k).value_or_label(v);
            }
        }
        if (e.contains("msrs")) {
            if (!e["msrs"].is_object()) (ea / "msrs").fail("expected an object");
            for (const auto& [k, v] : e["msrs"].items()) (ea / "msrs" / k).number(v);
        }
        if (e.contains("memory")) {
            if (!e["memory"].is_array()) (ea / "memory").fail("expected a list");
            for (size_t k = 0; k < e["memory"].size(); ++k) {
                const At m = ea / "memory" / std::to_string(k);
                m.only_keys(e["memory"][k], {"address", "size", "value"});
                for (const char* req : {"address", "size", "value"})
                    if (!e["memory"][k].contains(req)) m.fail(std::string("missing required key \"") + req + "\"");
                const u64 size = (m / "size").number(e["memory"][k]["size"]);
                if (size != 1 && size != 2 && size != 4 && size != 8) (m / "size").fail("expected 1, 2, 4 or 8");
                (m / "address").value_or_label(e["memory"][k]["address"]);
                (m / "value").number(e["memory"][k]["value"]);
            }
        }
        if (e.contains("console")) (ea / "console").string(e["console"]);
        if (e.contains("serial")) (ea / "serial").string(e["serial"]);
        if (e.contains("screen")) {
            if (!e["screen"].is_array() || e["screen"].size() > 25) (ea / "screen").fail("expected a list of at most 25 strings");
            for (size_t k = 0; k < e["screen"].size(); ++k) (ea / "screen" / std::to_string(k)).string(e["screen"][k]);
        }
        if (e.contains("instructions")) (ea / "instructions").number(e["instructions"]);
        if (e.contains("exceptions")) {
            if (!e["exceptions"].is_array()) (ea / "exceptions").fail("expected a list");
            for (size_t k = 0; k < e["exceptions"].size(); ++k) {
                const At x = ea / "exceptions" / std::to_string(k);
                x.only_keys(e["exceptions"][k], {"vector", "error_code", "rip"});
                if (!e["exceptions"][k].contains("vector")) x.fail("missing required key \"vector\"");
            }
        }
    }
    return s;
}

Scenario load_scenario(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw ScenarioError(path + ": cannot read the file");
    json doc;
    try {
        doc = json::parse(f);
    } catch (const json::parse_error& e) {
        // nlohmann reports "... at line L, column C: ..." in what().
        throw ScenarioError(path + ": malformed JSON: " + e.what());
    }
    return parse_scenario(doc, path);
}

bool ScenarioResult::passed() const {
    for (const Check& c : checks)
        if (!c.ok) return false;
    return true;
}

namespace {

/// Resolves a value or a program label.
/// A label may carry an offset, as reports print it: "done+1", "buffer+0x18", "top-8".
u64 resolve(const Scenario& s, const AssembledProgram& p, const ValueOrLabel& v, const std::string& where) {
    if (v.value) return *v.value;
    std::string name = v.label;
    i64 offset = 0;
    const size_t at = name.find_last_of("+-");
    if (at != std::string::npos && at > 0) {
        try {
            size_t used = 0;
            const u64 n = std::stoull(name.substr(at + 1), &used, 0);
            if (used == name.size() - at - 1) {
                offset = name[at] == '-' ? -i64(n) : i64(n);
                name.resize(at);
            }
        } catch (const std::exception&) {
        }
    }
    auto it = p.symbols.find(name);
    if (it == p.symbols.end()) fail(s.file, where, "unknown label \"" + v.label + "\"");
    return it->second + u64(offset);
}

u32 msr_index(const Scenario& s, Cpu& c, const std::string& name, const std::string& where) {
    if (auto idx = c.msrs.find(name)) return *idx;
    try {
        size_t used = 0;
        const u64 v = std::stoull(name, &used, 0);
        if (used == name.size() && v <= 0xFFFFFFFF) return u32(v);
    } catch (const std::exception&) {
    }
    fail(s.file, where, "unknown MSR \"" + name + "\" (an SDM name pmusim models, or a number)");
}

std::string stop_name(const ScenarioResult& r) {
    if (r.unhandled_vector) return "unhandled-vector";
    return stop_reason_name(r.run.reason);
}

}  // namespace

ScenarioResult run_scenario(const Scenario& s, std::unique_ptr<Machine>& machine, std::optional<u64> max_insns) {
    ScenarioResult r;
    try {
        r.profile = std::make_shared<CpuProfile>(load_profile_by_name(s.cpu));
    } catch (const ProfileError& e) {
        fail(s.file, "/cpu", e.what());
    }
    try {
        if (!s.cpu_overrides.empty()) apply_overrides(*r.profile, s.cpu_overrides);
    } catch (const ProfileError& e) {
        fail(s.file, "/cpu_overrides", e.what());
    }
    const bool real = s.start == StartPreset::kReal16;
    const int bits = real ? 16 : (s.start == StartPreset::kLong64 ? 64 : 32);
    const u64 org = s.org.value_or(real ? 0x7C00 : 0x1000);
    try {
        r.program = assemble_nasm("bits " + std::to_string(bits) + "\norg " + std::to_string(org) +
                                      "\n%line 0+1 " + s.nasm_name + "\n" + s.nasm_source,
                                  s.nasm_name, s.include_dir);
    } catch (const NasmError& e) {
        throw ScenarioError(std::string("NASM rejected ") + s.nasm_name +
                            (e.line ? " (line " + std::to_string(e.line) + ")" : "") + ":\n" + e.what());
    } catch (const NasmMissing& e) {
        throw ScenarioError(e.what());
    }
    machine = std::make_unique<Machine>(MachineConfig{s.memory_mib << 20, r.profile.get()});
    Machine& m = *machine;
    r.devices = std::make_shared<StandardDevices>();
    r.devices->attach(m);
    r.apic = std::make_shared<LocalApic>();
    r.apic->attach(m);
    if (org + r.program.bytes.size() > m.ram().size()) fail(s.file, "/program/org", "the program does not fit in guest RAM");
    m.load(org, r.program.bytes.data(), r.program.bytes.size());
    const u64 entry = s.entry ? resolve(s, r.program, *s.entry, "/program/entry") : org;
    apply_preset(m, s.start, entry);
    Cpu& c = m.cpu();
    for (const auto& h : s.handlers)
        set_idt_gate(m, h.vector, resolve(s, r.program, {std::nullopt, h.label}, "/handlers/" + std::to_string(h.vector)),
                     h.dpl, h.trap, h.ist);
    for (const auto& [name, v] : s.registers) {
        const int k = *reg_index(name);
        if (k < 16) c.gpr[k] = v;
        else if (k == 16) c.rip = v;
        else c.set_rflags(v);
    }
    for (const auto& [name, v] : s.msrs) {
        const u32 idx = msr_index(s, c, name, "/msrs/" + name);
        try {
            c.msrs.write(idx, v);
        } catch (const GuestFault&) {
            fail(s.file, "/msrs/" + name, "value " + hex(v) + " rejected by the MSR (#GP: reserved bits or unknown MSR)");
        }
    }
    if (s.stop_label) m.set_stop_addresses({resolve(s, r.program, {std::nullopt, *s.stop_label}, "/limits/stop_label")});
    for (EventKind k : {EventKind::kException, EventKind::kInterrupt})
        c.events.subscribe(k, [&r](const Event& e) { r.events.push_back(e); });

    r.run = m.run(RunLimits{max_insns.value_or(s.max_instructions)});
    if (r.run.reason == StopReason::kHalt) r.unhandled_vector = default_stub_vector(r.run.rip);
    r.stop = stop_name(r);

    // Expectations.
    const json& e = s.expect;
    auto add = [&r](std::string what, u64 expected, u64 actual) {
        r.checks.push_back(Check{std::move(what), hex(expected), hex(actual), expected == actual});
    };
    if (e.contains("stop")) {
        const std::string want = e["stop"].get<std::string>();
        r.checks.push_back(Check{"stop", want, r.stop, want == r.stop});
    }
    if (e.contains("instructions")) add("instructions", At{s.file, "/expect/instructions"}.number(e["instructions"]), r.run.instructions);
    if (e.contains("registers"))
        for (const auto& [k, v] : e["registers"].items()) {
            const ValueOrLabel want = At{s.file, "/expect/registers/" + k}.value_or_label(v);
            add("registers." + k, resolve(s, r.program, want, "/expect/registers/" + k), read_reg(c, *reg_index(k)));
        }
    if (e.contains("msrs"))
        for (const auto& [k, v] : e["msrs"].items()) {
            const u32 idx = msr_index(s, c, k, "/expect/msrs/" + k);
            const auto actual = c.msrs.peek(idx);
            if (!actual) fail(s.file, "/expect/msrs/" + k, "unknown MSR");
            add("msrs." + k, At{s.file, "/expect/msrs/" + k}.number(v), *actual);
        }
    if (e.contains("memory"))
        for (size_t k = 0; k < e["memory"].size(); ++k) {
            const std::string where = "/expect/memory/" + std::to_string(k);
            const json& item = e["memory"][k];
            const u64 addr = resolve(s, r.program, At{s.file, where + "/address"}.value_or_label(item["address"]), where + "/address");
            const unsigned size = unsigned(At{s.file, where}.number(item["size"]));
            const u64 want = At{s.file, where}.number(item["value"]) & kAddrMask[size == 1 ? 2 : size] & (size == 1 ? 0xFF : ~0ull);
            u64 got = 0;
            std::string what = "memory[" + hex(addr) + "]";
            try {
                const u64 pa = c.mmu.translate(addr, Access::kRead);
                m.peek(pa, &got, size);
                add(what, want, got);
            } catch (const GuestFault&) {
                r.checks.push_back(Check{what, hex(want), "not mapped", false});
            }
        }
    auto text = [&r](std::string what, const std::string& want, const std::string& got) {
        r.checks.push_back(Check{std::move(what), json(want).dump(), json(got).dump(), want == got});
    };
    if (e.contains("console")) text("console", e["console"].get<std::string>(), r.devices->console_text());
    if (e.contains("serial")) text("serial", e["serial"].get<std::string>(), r.devices->serial_text());
    if (e.contains("screen")) {
        const std::vector<std::string> lines = r.devices->screen_lines();
        for (size_t k = 0; k < e["screen"].size(); ++k)
            text("screen[" + std::to_string(k) + "]", e["screen"][k].get<std::string>(), lines[k]);
    }
    if (e.contains("exceptions")) {
        const json& list = e["exceptions"];
        const std::string where = "/expect/exceptions";
        r.checks.push_back(Check{"exceptions.count", std::to_string(list.size()), std::to_string(r.events.size()),
                                 list.size() == r.events.size()});
        for (size_t k = 0; k < list.size() && k < r.events.size(); ++k) {
            const At x{s.file, where + "/" + std::to_string(k)};
            const Event& ev = r.events[k];
            add("exceptions[" + std::to_string(k) + "].vector", x.number(list[k]["vector"]), ev.vector);
            if (list[k].contains("error_code"))
                add("exceptions[" + std::to_string(k) + "].error_code", (x / "error_code").number(list[k]["error_code"]), ev.error_code);
            if (list[k].contains("rip"))
                add("exceptions[" + std::to_string(k) + "].rip",
                    resolve(s, r.program, (x / "rip").value_or_label(list[k]["rip"]), x.path + "/rip"), ev.rip);
        }
    }
    return r;
}

}  // namespace pmusim
