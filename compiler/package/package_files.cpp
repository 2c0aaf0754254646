#include "package/package_files.h"

#include <Halide.h>

#include <fstream>

#include "support/error.h"
#include "support/subprocess.h"

namespace aotc {

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) fail(ExitCode::kIo, path.string(), ": cannot write");
}

void run_tool(const std::vector<std::string>& argv, const std::string& what, const std::string& cwd) {
  CommandResult r = run_command(argv, cwd);
  if (r.exit_code != 0)
    fail(ExitCode::kIo, what, " failed (exit ", r.exit_code, "): ", command_line(argv), "\n", r.output);
}

void write_archive(const std::vector<std::string>& objects, const std::filesystem::path& library) {
  // LLVM's archive writer through Halide, in process: binutils' ar loads every
  // linker plugin it finds (LLVM's gold plugins where LLVM is installed), which
  // took 0.2 s of a small library's 1.4 s. Only the OS of the target matters
  // here (GNU format with a symbol table, deterministic, as `ar rcsD`); the
  // members' machine comes from the objects themselves.
  try {
    Halide::create_static_library(objects, Halide::Target(Halide::Target::Linux, Halide::Target::X86, 64),
                                  library.string());
  } catch (const Halide::Error& e) {
    fail(ExitCode::kIo, library.string(), ": archiving the library failed: ", e.what());
  }
}

std::string weights_assembly(const std::string& symbol, const std::string& blob_path) {
  return "  .section .rodata\n"
         "  .balign 64\n"
         "  .globl " + symbol + "\n" +
         symbol + ":\n"
         "  .incbin \"" + blob_path + "\"\n"
         "  .byte 0\n"
         "  .section .note.GNU-stack,\"\",%progbits\n";
}

PackageResult move_into_place(const std::filesystem::path& work, const std::filesystem::path& out,
                              const std::string& name, const std::filesystem::path& library,
                              const std::vector<std::filesystem::path>& extra) {
  std::filesystem::create_directories(out / "aotc");
  PackageResult result;
  result.library = (out / library.filename()).string();
  result.header = (out / (name + ".h")).string();
  result.report = (out / (name + ".report.json")).string();
  std::filesystem::rename(work / "aotc" / "aotc.h", out / "aotc" / "aotc.h");
  std::filesystem::rename(work / (name + ".h"), result.header);
  std::filesystem::rename(work / (name + ".report.json"), result.report);
  for (const std::filesystem::path& file : extra) std::filesystem::rename(file, out / file.filename());
  std::filesystem::rename(library, result.library);
  return result;
}

}  // namespace aotc
