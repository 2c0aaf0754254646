#include "package/package_files.h"

#include <fstream>

#include "support/error.h"
#include "support/subprocess.h"

namespace aotc {

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) fail(ExitCode::kIo, path.string(), ": cannot write");
}

void run_tool(const std::vector<std::string>& argv, const std::string& what) {
  CommandResult r = run_command(argv);
  if (r.exit_code != 0)
    fail(ExitCode::kIo, what, " failed (exit ", r.exit_code, "): ", command_line(argv), "\n", r.output);
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

}  // namespace aotc
