#include "sim/nasm.h"

#include <spawn.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>

extern char** environ;

namespace pmusim {

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), {});
}

/// Parses NASM's "[map symbols]" output: lines "value name" (no section) and
/// "real virtual name" (sections). Values are hexadecimal.
std::map<std::string, u64> parse_map(const std::string& text) {
    std::map<std::string, u64> out;
    std::istringstream in(text);
    std::string line;
    static const std::regex two(R"(^\s*([0-9A-Fa-f]+)\s+([^\s]+)\s*$)");
    static const std::regex three(R"(^\s*([0-9A-Fa-f]+)\s+([0-9A-Fa-f]+)\s+([^\s]+)\s*$)");
    std::smatch m;
    while (std::getline(in, line)) {
        if (std::regex_match(line, m, three)) out[m[3]] = std::stoull(m[2], nullptr, 16);
        else if (std::regex_match(line, m, two)) out[m[2]] = std::stoull(m[1], nullptr, 16);
    }
    return out;
}

/// Runs argv; returns the exit status, -1 if the program could not be started.
int run(const std::vector<std::string>& args, const fs::path& stderr_file) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid;
    const int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

AssembledProgram assemble_nasm(const std::string& source, const std::string& display_name,
                               const std::string& include_dir) {
    char tmpl[] = "/tmp/pmusim-nasm-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("cannot create a temporary directory for NASM");
    const fs::path dir = tmpl;
    struct Cleanup {
        fs::path d;
        ~Cleanup() {
            std::error_code ec;
            fs::remove_all(d, ec);
        }
    } cleanup{dir};
    const fs::path src = dir / "program.asm", bin = dir / "program.bin", map = dir / "program.map",
                   log = dir / "nasm.log";
    {
        std::ofstream f(src);
        // The map directive comes first; %line makes NASM report positions in the user's source.
        f << "[map symbols " << map.string() << "]\n%line 0+1 " << display_name << "\n" << source << "\n";
    }
    std::vector<std::string> args = {"nasm", "-f", "bin", "-o", bin.string()};
    if (!include_dir.empty()) args.push_back("-I" + include_dir + "/");
    args.push_back(src.string());
    const int rc = run(args, log);
    if (rc < 0) throw NasmMissing("nasm is not installed (Debian package 'nasm'); it assembles scenario programs");
    const std::string messages = slurp(log);
    if (rc != 0) {
        int line = 0;
        std::smatch m;
        if (std::regex_search(messages, m, std::regex(":(\\d+): error"))) line = std::stoi(m[1]);
        throw NasmError(messages.empty() ? "nasm failed" : messages, display_name, line);
    }
    AssembledProgram p;
    const std::string b = slurp(bin);
    p.bytes.assign(b.begin(), b.end());
    p.symbols = parse_map(slurp(map));
    return p;
}

}  // namespace pmusim
