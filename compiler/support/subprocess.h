// Running external tools (the C++ compiler, ar) from aotc.
#pragma once

#include <string>
#include <vector>

namespace aotc {

struct CommandResult {
  int exit_code = -1;  // the tool's exit status; 127 if it could not be started, 128+N for signal N
  std::string output;  // stdout and stderr together
};

// Runs argv[0] (looked up on PATH) with the given arguments, in the directory
// `cwd` (empty: this process's), and waits for it. Threads may run commands at
// the same time.
CommandResult run_command(const std::vector<std::string>& argv, const std::string& cwd = "");

// "a b 'c d'": for messages.
std::string command_line(const std::vector<std::string>& argv);

}  // namespace aotc
