// The `pmusim` command.
//
// Today it runs one embedded 64-bit demo program on the core and prints the run
// report; scenarios, images and the unit models arrive with later work (see
// docs/architecture.md).
#include <boost/program_options.hpp>
#include <iostream>

#include "sim/report.h"
#include "sim/boot.h"
#include "sim/scenario.h"

namespace po = boost::program_options;
using namespace pmusim;

namespace {

/// The embedded default program (64-bit, at 0x1000): sums 1..1000 through a
/// call in a loop, copies a 16-byte string with REP MOVSB and halts.
///   mov ecx, 1000 ; xor eax, eax
/// l: call add_ecx ; loop l
///   lea rsi, [rel msg] ; mov edi, 0x20000 ; mov ecx, 16 ; rep movsb ; hlt
/// add_ecx: add rax, rcx ; ret
/// msg: db "pmusim demo run", 0
const u8 kDemo[] = {
    0xB9, 0xE8, 0x03, 0x00, 0x00,              // mov ecx, 1000
    0x31, 0xC0,                                // xor eax, eax
    0xE8, 0x16, 0x00, 0x00, 0x00,              // l: call add_ecx
    0xE2, 0xF9,                                // loop l
    0x48, 0x8D, 0x35, 0x11, 0x00, 0x00, 0x00,  // lea rsi, [rel msg]
    0xBF, 0x00, 0x00, 0x02, 0x00,              // mov edi, 0x20000
    0xB9, 0x10, 0x00, 0x00, 0x00,              // mov ecx, 16
    0xF3, 0xA4,                                // rep movsb
    0xF4,                                      // hlt
    0x48, 0x01, 0xC8,                          // add_ecx: add rax, rcx
    0xC3,                                      // ret
    'p', 'm', 'u', 's', 'i', 'm', ' ', 'd', 'e', 'm', 'o', ' ', 'r', 'u', 'n', 0};

/// `pmusim run SCENARIO [--json] [--max-instructions N]`: exit 0 if every
/// expectation holds, 1 if one fails, 2 for bad usage or input.
int run_command(const std::vector<std::string>& args) {
    po::options_description opts("Usage: pmusim run SCENARIO [options]\n\nOptions");
    opts.add_options()("json", "print the report as one JSON document")(
        "max-instructions", po::value<u64>(), "override the scenario's instruction limit")(
        "scenario", po::value<std::string>(), "scenario JSON file");
    po::positional_options_description pos;
    pos.add("scenario", 1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "pmusim run: " << e.what() << "\n" << opts << "\n";
        return 2;
    }
    if (!vm.count("scenario")) {
        std::cerr << "pmusim run: missing SCENARIO\n" << opts << "\n";
        return 2;
    }
    try {
        const Scenario s = load_scenario(vm["scenario"].as<std::string>());
        std::unique_ptr<Machine> m;
        std::optional<u64> limit;
        if (vm.count("max-instructions")) limit = vm["max-instructions"].as<u64>();
        const ScenarioResult r = run_scenario(s, m, limit);
        if (vm.count("json")) std::cout << scenario_report_json(s, r, *m).dump(2) << "\n";
        else write_scenario_report(std::cout, s, r, *m);
        return r.passed() ? 0 : 1;
    } catch (const ScenarioError& e) {
        std::cerr << "pmusim: " << e.what() << "\n";
        return 2;
    }
}

/// `pmusim boot --module FILE@ADDR ... [--start real:SEG:OFF|PRESET] [--entry ADDR]
/// [--cpu PROFILE] [-m MiB] [--max-instructions N] [--json]`: exit 0 when the guest
/// halts, idles in `jmp $` or exits with status 0 or QEMU's pass code, 1 otherwise,
/// 2 for bad usage or input.
int boot_command(const std::vector<std::string>& args) {
    po::options_description opts("Usage: pmusim boot --module FILE@ADDR ... [options]\n\nOptions");
    opts.add_options()("help,h", "show this help")("module", po::value<std::vector<std::string>>()->composing(),
                       "load FILE byte for byte at physical address ADDR (repeatable)")(
        "start", po::value<std::string>()->default_value("real:0:0x7c00"), "real:SEG:OFF or a preset")(
        "entry", po::value<std::string>(), "start RIP for a preset (default: the first module's address)")(
        "cpu", po::value<std::string>()->default_value("generic-intel"), "CPU profile")(
        "memory,m", po::value<u64>()->default_value(64), "guest RAM in MiB")(
        "max-instructions", po::value<u64>()->default_value(100'000'000), "stop after N instructions")(
        "json", "print the report as one JSON document");
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(opts).run(), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << opts << "\n";
            return 0;
        }
        BootOptions o;
        if (vm.count("module"))
            for (const std::string& spec : vm["module"].as<std::vector<std::string>>()) o.modules.push_back(parse_module(spec));
        o.start = vm["start"].as<std::string>();
        if (vm.count("entry")) o.entry = std::stoull(vm["entry"].as<std::string>(), nullptr, 0);
        o.cpu = vm["cpu"].as<std::string>();
        o.memory_mib = vm["memory"].as<u64>();
        Booted b = boot(o);
        const RunResult r = b.machine->run(RunLimits{vm["max-instructions"].as<u64>()});
        if (vm.count("json")) std::cout << boot_report_json(*b.machine, r, *b.devices).dump(2) << "\n";
        else write_boot_report(std::cout, *b.machine, r, *b.devices);
        const bool ok = r.reason == StopReason::kHalt || r.reason == StopReason::kIdleLoop ||
                        (r.reason == StopReason::kGuestExit && (r.exit_code == 0 || r.exit_code == 1));
        return ok ? 0 : 1;
    } catch (const po::error& e) {
        std::cerr << "pmusim boot: " << e.what() << "\n" << opts << "\n";
        return 2;
    } catch (const BootError& e) {
        std::cerr << "pmusim boot: " << e.what() << "\n";
        return 2;
    } catch (const std::invalid_argument&) {
        std::cerr << "pmusim boot: --entry: expected a number\n";
        return 2;
    }
}

/// `pmusim profiles [NAME]`: lists the CPU profiles, or prints one as JSON.
int profiles_command(const std::vector<std::string>& args) {
    try {
        if (args.size() > 1) {
            std::cerr << "Usage: pmusim profiles [NAME]\n";
            return 2;
        }
        if (args.size() == 1) {
            std::cout << load_profile_by_name(args[0]).document << "\n";
            return 0;
        }
        for (const ProfileListing& p : list_profiles()) {
            std::cout << p.name << "  " << (p.error.empty() ? p.description : "(invalid: " + p.error + ")") << "\n";
            std::cout << "    " << p.path << "\n";
        }
        return 0;
    } catch (const ProfileError& e) {
        std::cerr << "pmusim: " << e.what() << "\n";
        return 2;
    }
}

/// No command: the embedded demo program and its run report.
int demo(u64 max_instructions) {
    Machine m;
    m.load(0x1000, kDemo, sizeof kDemo);
    m.set_flat_mode(CodeBits::k64);
    m.cpu().rip = 0x1000;
    m.cpu().gpr[RSP] = 0x80000;
    std::cout << "pmusim " << PMUSIM_VERSION << ": embedded demo (64-bit code at 0x1000)\n\n";
    const RunResult r = m.run(RunLimits{max_instructions});
    write_run_report(std::cout, m, r);
    char text[17] = {};
    m.peek(0x20000, text, 16);
    std::cout << "\nstring copied to 0x20000: \"" << text << "\"\n";
    return r.reason == StopReason::kHalt ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && args[0] == "run") return run_command({args.begin() + 1, args.end()});
    if (!args.empty() && args[0] == "profiles") return profiles_command({args.begin() + 1, args.end()});
    if (!args.empty() && args[0] == "boot") return boot_command({args.begin() + 1, args.end()});
    po::options_description opts(
        "pmusim - an architectural simulator of the x86 debug and performance-monitoring units\n\n"
        "Usage: pmusim [options]                 run the embedded demo\n"
        "       pmusim run SCENARIO [--json]     run a scenario (docs/scenario-format.md)\n"
        "       pmusim boot --module FILE@ADDR   boot raw modules (pmusim boot --help)\n"
        "       pmusim profiles [NAME]           list the CPU profiles or show one (docs/profiles.md)\n\nOptions");
    opts.add_options()("help,h", "show this help")("version", "print the version")(
        "max-instructions", po::value<u64>()->default_value(10'000'000), "stop after N instructions");
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, opts), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "pmusim: " << e.what() << "\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << opts << "\n";
        return 0;
    }
    if (vm.count("version")) {
        std::cout << "pmusim " << PMUSIM_VERSION << "\n";
        return 0;
    }
    return demo(vm["max-instructions"].as<u64>());
}
