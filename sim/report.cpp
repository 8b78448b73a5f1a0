#include "sim/report.h"

#include <cstdio>

namespace pmusim {

namespace {
const char* const kNames[] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                              "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};

std::string hex(u64 v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%016llx", static_cast<unsigned long long>(v));
    return b;
}
std::string short_hex(u64 v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return b;
}

std::string flag_names(u64 f) {
    std::string s;
    for (auto [bit, name] : {std::pair{kOF, "OF"}, {kSF, "SF"}, {kZF, "ZF"}, {kAF, "AF"}, {kPF, "PF"},
                             {kCF, "CF"}, {kDF, "DF"}, {kIF, "IF"}, {kTF, "TF"}})
        if (f & bit) s += std::string(s.empty() ? "" : " ") + name;
    return s;
}

void write_registers(std::ostream& os, Cpu& c) {
    for (int k = 0; k < 16; ++k) {
        char name[8];
        std::snprintf(name, sizeof name, "%-4s", kNames[k]);
        os << "  " << name << hex(c.gpr[k]) << ((k % 4 == 3) ? "\n" : "");
    }
    os << "  rflags " << hex(c.rflags()) << "  [" << flag_names(c.rflags()) << "]\n";
}

void write_missing(std::ostream& os, Cpu& c) {
    bool any = false;
    for (size_t k = 0; k < c.missing.names.size(); ++k) {
        if (!c.missing.executions[k]) continue;
        if (!any) os << "\ninstructions pmusim does not implement (raised #UD):\n";
        any = true;
        os << "  " << c.missing.names[k] << " x" << c.missing.executions[k] << "\n";
    }
}

void write_devices(std::ostream& os, const StandardDevices& d) {
    if (!d.console_text().empty()) os << "\nconsole (port E9h):\n" << d.console_text() << "\n";
    if (!d.serial_text().empty()) os << "\nserial (COM1):\n" << d.serial_text() << "\n";
    if (d.screen_written()) {
        const std::vector<std::string> lines = d.screen_lines();
        size_t last = lines.size();
        while (last > 0 && lines[last - 1].empty()) --last;
        os << "\nscreen (VGA text, 80x25):\n";
        for (size_t k = 0; k < last; ++k) os << "  |" << lines[k] << "\n";
    }
}

/// Stop, counts, registers, console, serial and screen: the keys every JSON report has.
nlohmann::json common_json(Machine& m, const RunResult& run, const std::string& stop, const StandardDevices* d) {
    using nlohmann::json;
    Cpu& c = m.cpu();
    json j;
    j["stop"] = {{"reason", stop}, {"rip", short_hex(run.rip)}, {"exit_code", run.exit_code}, {"message", run.message}};
    j["instructions"] = run.instructions;
    j["cycles"] = m.now();
    json regs = json::object();
    for (int k = 0; k < 16; ++k) regs[kNames[k]] = short_hex(c.gpr[k]);
    regs["rip"] = short_hex(c.rip);
    regs["rflags"] = short_hex(c.rflags());
    j["registers"] = regs;
    json msrs = json::object();
    for (u32 idx : c.msrs.indices())
        if (auto v = c.msrs.peek(idx)) msrs[c.msrs.name(idx)] = short_hex(*v);
    j["msrs"] = msrs;
    // Filled by the unit models as they are attached (Debug Store, LBR, PMU).
    j["bts"] = json::array();
    j["pebs"] = json::array();
    j["lbr"] = json::array();
    j["counters"] = json::object();
    j["console"] = d ? d->console_text() : "";
    j["serial"] = d ? d->serial_text() : "";
    j["screen"] = json::array();
    if (d && d->screen_written())
        for (const std::string& line : d->screen_lines()) j["screen"].push_back(line);
    return j;
}

std::string event_text(const Event& e, const AssembledProgram& p) {
    std::string s = (e.kind == EventKind::kInterrupt ? "interrupt " : "exception ");
    s += e.vector < 32 && e.kind == EventKind::kException ? vector_name(e.vector) : "";
    s += " vector " + std::to_string(e.vector);
    if (e.has_error_code) s += " error " + short_hex(e.error_code);
    s += " at rip " + short_hex(e.rip);
    const std::string l = label_of(p, e.rip);
    if (!l.empty()) s += " <" + l + ">";
    if (e.vector == vec::PF && e.kind == EventKind::kException) s += " cr2 " + short_hex(e.addr);
    return s;
}
}  // namespace

std::string label_of(const AssembledProgram& p, u64 addr) {
    const std::pair<const std::string, u64>* best = nullptr;
    for (const auto& kv : p.symbols)
        if (kv.second <= addr && (!best || kv.second > best->second)) best = &kv;
    if (!best || addr - best->second > 0x10000) return "";
    return addr == best->second ? best->first : best->first + "+" + short_hex(addr - best->second);
}

void write_run_report(std::ostream& os, Machine& m, const RunResult& r) {
    Cpu& c = m.cpu();
    os << "stop:         " << stop_reason_name(r.reason);
    if (r.fault) {
        os << " " << vector_name(r.fault->vector);
        if (r.fault->has_error_code) os << "(" << r.fault->error_code << ")";
    }
    if (!r.message.empty()) os << " (" << r.message << ")";
    os << " at rip " << hex(r.rip) << "\n";
    os << "instructions: " << r.instructions << "\n\nregisters:\n";
    write_registers(os, c);
    write_missing(os, c);
}

void write_boot_report(std::ostream& os, Machine& m, const RunResult& r, const StandardDevices& d) {
    write_run_report(os, m, r);
    write_devices(os, d);
}

nlohmann::json boot_report_json(Machine& m, const RunResult& r, const StandardDevices& d) {
    return common_json(m, r, stop_reason_name(r.reason), &d);
}

void write_scenario_report(std::ostream& os, const Scenario& s, const ScenarioResult& r, Machine& m) {
    Cpu& c = m.cpu();
    os << "scenario:     " << s.name << "\n";
    if (!s.description.empty()) os << "              " << s.description << "\n";
    os << "cpu:          " << s.cpu << ", start " << preset_name(s.start) << "\n\n";
    os << "stop:         " << r.stop;
    if (r.unhandled_vector) os << " " << int(*r.unhandled_vector);
    if (r.run.reason == StopReason::kGuestExit) os << " (exit status " << r.run.exit_code << ")";
    if (!r.run.message.empty()) os << " (" << r.run.message << ")";
    os << " at rip " << short_hex(r.run.rip);
    const std::string l = label_of(r.program, r.run.rip);
    if (!l.empty()) os << " <" << l << ">";
    os << "\ninstructions: " << r.run.instructions << "\ncycles:       " << m.now() << "\n\nregisters:\n";
    write_registers(os, c);
    if (!r.events.empty()) {
        os << "\nexceptions and interrupts, in order:\n";
        for (size_t k = 0; k < r.events.size(); ++k) os << "  " << k + 1 << ". " << event_text(r.events[k], r.program) << "\n";
    }
    write_missing(os, c);
    if (r.devices) write_devices(os, *r.devices);
    if (!r.checks.empty()) {
        os << "\nexpectations:\n";
        size_t ok = 0;
        for (const Check& ch : r.checks) {
            ok += ch.ok;
            os << "  " << (ch.ok ? "ok  " : "FAIL") << "  " << ch.what << ": expected " << ch.expected << ", actual "
               << ch.actual << "\n";
        }
        os << "\nresult: " << (ok == r.checks.size() ? "PASS" : "FAIL") << " (" << ok << " of " << r.checks.size()
           << " expectations hold)\n";
    }
}

nlohmann::json scenario_report_json(const Scenario& s, const ScenarioResult& r, Machine& m) {
    using nlohmann::json;
    json j = common_json(m, r.run, r.stop, r.devices.get());
    j["scenario"] = {{"name", s.name}, {"file", s.file}, {"cpu", s.cpu}, {"start", preset_name(s.start)}};
    j["stop"]["label"] = label_of(r.program, r.run.rip);
    if (r.unhandled_vector) j["stop"]["vector"] = *r.unhandled_vector;
    json events = json::array();
    for (const Event& e : r.events) {
        json ev = {{"kind", e.kind == EventKind::kInterrupt ? "interrupt" : "exception"},
                   {"vector", e.vector},
                   {"rip", short_hex(e.rip)},
                   {"label", label_of(r.program, e.rip)}};
        if (e.has_error_code) ev["error_code"] = short_hex(e.error_code);
        if (e.vector == vec::PF && e.kind == EventKind::kException) ev["cr2"] = short_hex(e.addr);
        events.push_back(ev);
    }
    j["events"] = events;
    json checks = json::array();
    for (const Check& ch : r.checks)
        checks.push_back({{"what", ch.what}, {"expected", ch.expected}, {"actual", ch.actual}, {"ok", ch.ok}});
    j["expectations"] = checks;
    j["passed"] = r.passed();
    return j;
}

}  // namespace pmusim
