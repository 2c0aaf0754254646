// Builds lib<name>.a: the runner and the weights object (or, with external
// weights, the file <name>.weights) compiled with the target's C++ compiler,
// archived with the kernel and runtime objects. All files
// are made in a work directory and moved into place only when all succeeded.
#include <elf.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "package/embedded_runtime.h"
#include "package/package.h"
#include "package/package_files.h"
#include "support/names.h"
#include "package/report.h"
#include "package/weights_file.h"
#include "support/error.h"

#ifndef AOTC_HALIDE_INCLUDE_DIR
#error "AOTC_HALIDE_INCLUDE_DIR must name the directory of HalideRuntime.h"
#endif

namespace aotc {
namespace {

namespace fs = std::filesystem;

// What the packager reads of an ELF object: its class (32 or 64, 0 if not ELF),
// machine, and the bytes its allocated sections take in a program image (code,
// read-only and initialised data; not .bss).
struct ElfObject {
  int elf_class = 0;
  int machine = -1;
  int64_t image_bytes = 0;
};

template <typename Ehdr, typename Shdr>
int64_t image_bytes(const std::string& bytes) {
  Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  int64_t total = 0;
  for (unsigned i = 0; i < header.e_shnum; ++i) {
    const size_t at = header.e_shoff + size_t{i} * header.e_shentsize;
    if (at + sizeof(Shdr) > bytes.size()) break;
    Shdr section;
    std::memcpy(&section, bytes.data() + at, sizeof section);
    if ((section.sh_flags & SHF_ALLOC) && section.sh_type != SHT_NOBITS) total += static_cast<int64_t>(section.sh_size);
  }
  return total;
}

ElfObject read_elf_object(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ElfObject object;
  if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0 ||
      bytes[EI_DATA] != ELFDATA2LSB)
    return object;
  if (bytes[EI_CLASS] == ELFCLASS32) {
    object.elf_class = 32;
    object.image_bytes = image_bytes<Elf32_Ehdr, Elf32_Shdr>(bytes);
  } else if (bytes[EI_CLASS] == ELFCLASS64) {
    object.elf_class = 64;
    object.image_bytes = image_bytes<Elf64_Ehdr, Elf64_Shdr>(bytes);
  }
  object.machine = static_cast<unsigned char>(bytes[18]) | static_cast<unsigned char>(bytes[19]) << 8;
  return object;
}

// Every member must be an ELF object of the target's class and machine: a
// runner built by a compiler for another architecture (a --cxx that does not
// match --target) would give an archive no toolchain can link.
void check_object_format(const std::string& path, const ElfObject& object, const ObjectFormat& format) {
  if (object.elf_class != format.elf_class || object.machine != format.machine)
    fail(ExitCode::kUsage, fs::path(path).filename().string(), " is ",
         object.elf_class != 0 ? "an ELF" + std::to_string(object.elf_class) + " object for machine " +
                                     std::to_string(object.machine)
                               : std::string("not a little-endian ELF object"),
         ", not a ", format.name, " object (ELF", format.elf_class, ", machine ", format.machine,
         ") as the target needs: is the C++ compiler (--cxx) one for this target?");
}

}  // namespace

PackageResult write_library(const LoweredModel& model, const CompiledObjects& objects, const PackageOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::string id = c_identifier(model.name);
  const fs::path work = options.work_dir;
  fs::create_directories(work / "aotc");

  fs::copy_file(options.sdk_header, work / "aotc" / "aotc.h", fs::copy_options::overwrite_existing);
  write_text(work / (model.name + ".h"), model_header(model, options.producer, options.external_weights));
  write_text(work / "runner.cpp", runner_source(model, options.external_weights));
  write_text(work / "aotc_runtime.h", kRuntimeHeader);

  std::vector<std::string> members = objects.objects;
  run_tool({options.cxx, "-std=c++17", "-O2", "-fPIC", "-fno-exceptions", "-fno-rtti", "-I", work.string(), "-I", AOTC_HALIDE_INCLUDE_DIR, "-c",
            (work / "runner.cpp").string(), "-o", (work / "runner.o").string()},
           "compiling the generated runner");
  members.push_back((work / "runner.o").string());
  const fs::path weights_file_path = work / (model.name + ".weights");
  if (options.external_weights) {
    write_text(weights_file_path, weights_file(model));
  } else {
    write_text(work / "weights.bin", std::string(model.weights.begin(), model.weights.end()));
    write_text(work / "weights.S", weights_assembly("aotc_" + id + "_weights", (work / "weights.bin").string()));
    run_tool({options.cxx, "-c", (work / "weights.S").string(), "-o", (work / "weights.o").string()},
             "assembling the weights");
    members.push_back((work / "weights.o").string());
  }

  // The footprint: image bytes of the kernels, the Halide runtime (the last of the
  // backend's objects) and the runner; the weights are counted as their blob.
  ReportTotals totals;
  for (const std::string& member : members) {
    const ElfObject object = read_elf_object(member);
    check_object_format(member, object, options.format);
    const bool runtime = member == objects.objects.back();
    const bool runner = member == (work / "runner.o").string();
    const bool weights = member == (work / "weights.o").string();
    if (!weights) (runtime ? totals.runtime_code_bytes : runner ? totals.runner_code_bytes : totals.kernel_code_bytes) += object.image_bytes;
  }
  totals.weights = options.external_weights ? "external" : "embedded";

  const fs::path library = work / ("lib" + model.name + ".a");
  std::vector<std::string> ar = {"ar", "rcs", library.string()};
  ar.insert(ar.end(), members.begin(), members.end());
  run_tool(ar, "archiving the library");

  totals.producer = options.producer;
  totals.target = options.target;
  totals.library_bytes = static_cast<int64_t>(fs::file_size(library));
  totals.compile_seconds = options.compile_seconds_so_far +
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_text(work / (model.name + ".report.json"), report_json(model, objects, totals));

  // Everything exists: move it into place.
  const fs::path out = options.out_dir;
  std::vector<fs::path> extra;
  if (options.external_weights) extra.push_back(weights_file_path);
  PackageResult result = move_into_place(work, out, model.name, library, extra);
  if (options.external_weights) result.weights = (out / weights_file_path.filename()).string();
  result.library_bytes = totals.library_bytes;
  result.summary = report_summary(model, objects, totals);
  return result;
}

}  // namespace aotc
