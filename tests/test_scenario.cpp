// Scenario files: loading, validation errors, running, the `pmusim run` command.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sim/scenario.h"

using namespace pmusim;
namespace fs = std::filesystem;

namespace {

/// Writes `text` to a fresh temporary directory as `name` and returns its path.
std::string write_temp(const std::string& name, const std::string& text) {
    const fs::path dir = fs::temp_directory_path() / ("pmusim-scenario-test-" + std::to_string(std::rand()));
    fs::create_directories(dir);
    std::ofstream(dir / name) << text;
    return (dir / name).string();
}

/// The ScenarioError message for scenario text `json` (fails the test if none).
std::string error_of(const std::string& json, const std::string& extra_file = "", const std::string& extra = "") {
    const std::string path = write_temp("s.json", json);
    if (!extra_file.empty()) std::ofstream(fs::path(path).parent_path() / extra_file) << extra;
    try {
        const Scenario s = load_scenario(path);
        std::unique_ptr<Machine> m;
        run_scenario(s, m);
    } catch (const ScenarioError& e) {
        return e.what();
    }
    FAIL("no error for " << json);
    return "";
}

int run_cli(const std::string& args) {
    const int rc = std::system((std::string(PMUSIM_BINARY) + " " + args + " > /dev/null 2>&1").c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

const char* const kOk = R"({"name": "t", "program": {"nasm": "start: mov eax, 5\ndone: hlt"}, "expect": {"registers": {"rax": 5}}})";

}  // namespace

TEST_CASE("every shipped scenario passes") {
    int n = 0;
    for (const auto& e : fs::recursive_directory_iterator(std::string(PMUSIM_SOURCE_DIR) + "/scenarios")) {
        if (e.path().extension() != ".json" || e.path().filename().string().find("schema") != std::string::npos) continue;
        INFO(e.path());
        const Scenario s = load_scenario(e.path().string());
        std::unique_ptr<Machine> m;
        const ScenarioResult r = run_scenario(s, m);
        for (const Check& c : r.checks) {
            INFO(c.what << ": expected " << c.expected << ", actual " << c.actual);
            CHECK(c.ok);
        }
        CHECK(!r.checks.empty());
        ++n;
    }
    CHECK(n >= 1);
}

TEST_CASE("a scenario runs and reports expectations") {
    const std::string path = write_temp("ok.json", kOk);
    std::unique_ptr<Machine> m;
    const ScenarioResult r = run_scenario(load_scenario(path), m);
    CHECK(r.stop == "halt");
    REQUIRE(r.checks.size() == 1);
    CHECK(r.checks[0].what == "registers.rax");
    CHECK(r.checks[0].ok);
    CHECK(r.passed());
}

TEST_CASE("bad scenario input names the file, the place and what was expected") {
    CHECK_THAT(error_of("{\"name\": \"t\",\n \"program\": {\"nasm\": \"hlt\"},\n}"),
               Catch::Contains("malformed JSON") && Catch::Contains("line 3"));
    CHECK_THAT(error_of(R"({"name": "t", "program": {"nasm": "hlt"}, "limitz": {}})"),
               Catch::Contains("/limitz: unknown key"));
    CHECK_THAT(error_of(R"({"name": "t", "program": {"nasm": "hlt"}, "expect": {"registers": {"rax": "0xZZ"}}})"),
               Catch::Contains("/expect/registers/rax: expected a number"));
    CHECK_THAT(error_of(R"({"name": 5, "program": {"nasm": "hlt"}})"), Catch::Contains("/name: expected a string"));
    CHECK_THAT(error_of(R"({"program": {"nasm": "hlt"}})"), Catch::Contains("missing required key \"name\""));
    CHECK_THAT(error_of(R"({"name": "t", "program": {"nasm_file": "nope.asm"}})"),
               Catch::Contains("/program/nasm_file: cannot read"));
    CHECK_THAT(error_of(R"({"name": "t", "program": {"nasm_file": "p.asm"}})", "p.asm", "nop\nbogus eax\n"),
               Catch::Contains("line 2") && Catch::Contains("p.asm"));
    CHECK_THAT(error_of(R"({"name": "t", "start": "long65", "program": {"nasm": "hlt"}})"),
               Catch::Contains("/start: unknown start preset"));
    CHECK_THAT(error_of(R"({"name": "t", "program": {"nasm": "hlt"}, "limits": {"stop_label": "nowhere"}})"),
               Catch::Contains("/limits/stop_label: unknown label \"nowhere\""));
    CHECK_THAT(error_of(R"({"name": "t", "program": {"nasm": "hlt"}, "msrs": {"IA32_NOPE": 1}})"),
               Catch::Contains("/msrs/IA32_NOPE: unknown MSR"));
    CHECK_THAT(error_of(R"({"name": "t", "program": {"nasm": "hlt"}, "msrs": {"IA32_EFER": "0x2"}})"),
               Catch::Contains("/msrs/IA32_EFER: value 0x2 rejected"));
    CHECK_THAT(error_of(R"({"name": "t", "cpu": "pentium9", "program": {"nasm": "hlt"}})"),
               Catch::Contains("/cpu: unknown CPU profile"));
    CHECK_THAT(error_of(R"({"name": "t", "program": {"nasm": "hlt"}, "expect": {"memory": [{"address": 1, "size": 3, "value": 0}]}})"),
               Catch::Contains("/expect/memory/0/size: expected 1, 2, 4 or 8"));
}

TEST_CASE("pmusim run: exit status 0 pass, 1 expectation failed, 2 bad input or usage") {
    CHECK(run_cli("run " + write_temp("ok.json", kOk)) == 0);
    CHECK(run_cli("run " + write_temp("ok.json", kOk) + " --json") == 0);
    std::string failing = kOk;
    failing.replace(failing.find("\"rax\": 5"), 8, "\"rax\": 6");
    CHECK(run_cli("run " + write_temp("fail.json", failing)) == 1);
    CHECK(run_cli("run " + write_temp("bad.json", "{")) == 2);
    CHECK(run_cli("run /nonexistent/x.json") == 2);
    CHECK(run_cli("run") == 2);
    CHECK(run_cli("--bogus") == 2);
    CHECK(run_cli("--version") == 0);
}
