// File and tool helpers of the packager (package.h).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "package/package.h"

namespace aotc {

void write_text(const std::filesystem::path& path, const std::string& text);
// Writes the static library `library` of `objects` (GNU ar format, symbol table).
void write_archive(const std::vector<std::string>& objects, const std::filesystem::path& library);
// Runs a tool; on failure throws UserError (kIo) with `what`, the command and its output.
void run_tool(const std::vector<std::string>& argv, const std::string& what, const std::string& cwd = "");
// The weights blob as an object: an assembler file that .incbin's the bytes,
// which any target's assembler handles and which costs no C++ parsing.
std::string weights_assembly(const std::string& symbol, const std::string& blob_path);
// Moves a finished package of model `name` from `work` into `out`: aotc/aotc.h,
// <name>.h, <name>.report.json, each of `extra` (by file name), and the library last,
// so that a library in `out` means everything beside it is complete. Returns the
// paths of the library, header and report.
PackageResult move_into_place(const std::filesystem::path& work, const std::filesystem::path& out,
                              const std::string& name, const std::filesystem::path& library,
                              const std::vector<std::filesystem::path>& extra = {});

}  // namespace aotc
