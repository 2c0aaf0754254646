// File and tool helpers every packager uses (package.h, cuda_package.h).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace aotc {

void write_text(const std::filesystem::path& path, const std::string& text);
// Runs a tool; on failure throws UserError (kIo) with `what`, the command and its output.
void run_tool(const std::vector<std::string>& argv, const std::string& what);
// The weights blob as an object: an assembler file that .incbin's the bytes,
// which any target's assembler handles and which costs no C++ parsing.
std::string weights_assembly(const std::string& symbol, const std::string& blob_path);

}  // namespace aotc
