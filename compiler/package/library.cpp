// Builds lib<name>.a from a backend's parts (package.h): the weights object (or,
// with external weights, the file <name>.weights) assembled with the target's
// C++ compiler, archived with the backend's objects. All files are made in the
// work directory and moved into place only when all succeeded.
#include <elf.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>

#include "package/package.h"
#include "package/package_files.h"
#include "support/error.h"
#include "support/names.h"

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

PackageResult write_library(const LibraryParts& parts, const PackageOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  // The header lies beside the files the generated sources include: one of the
  // same name would replace it (a model named aotc_runtime).
  for (const auto& [file, text] : parts.includes)
    if (file == parts.name + ".h")
      fail(ExitCode::kUsage, "model name '", parts.name, "': its header ", file,
           " would have the name of the runtime file the library's code includes; choose another (--name)");
  const fs::path work = options.work_dir;
  fs::create_directories(work / "aotc");
  fs::copy_file(options.sdk_header, work / "aotc" / "aotc.h", fs::copy_options::overwrite_existing);
  write_text(work / (parts.name + ".h"), parts.header);

  for (const auto& [file, text] : parts.includes) write_text(work / file, text);

  // The generated sources' compiles and the weights' assembly are independent:
  // they run at the same time, and every one has ended before an error is raised.
  std::vector<LibraryObject> objects = parts.objects;
  std::vector<fs::path> shipped;
  std::vector<std::future<void>> tools;
  for (const GeneratedSource& source : parts.sources) {
    const fs::path file = work / source.file;
    const fs::path object = fs::path(file).replace_extension(".o");
    write_text(file, source.text);
    // In the work directory, by relative paths: the same source then compiles
    // with the same command line in every run, which a compiler cache (ccache)
    // needs to find it again.
    std::vector<std::string> command = options.compiler_launcher;
    command.insert(command.end(), source.compile.begin(), source.compile.end());
    command.insert(command.end(), {"-I", ".", "-c", source.file, "-o", object.filename().string()});
    tools.push_back(std::async(std::launch::async, run_tool, command, source.what, work.string()));
    objects.push_back({object.string(), source.role});
    if (source.shipped) shipped.push_back(file);
  }
  const bool external_weights = !parts.weights_file.empty();
  if (external_weights) {
    shipped.push_back(work / (parts.name + ".weights"));
    write_text(shipped.back(), parts.weights_file);
  } else {
    write_text(work / "weights.bin", std::string(parts.weights.begin(), parts.weights.end()));
    write_text(work / "weights.S",
               weights_assembly("aotc_" + c_identifier(parts.name) + "_weights", (work / "weights.bin").string()));
    tools.push_back(std::async(std::launch::async, run_tool,
                               std::vector<std::string>{options.assembler, "-c", (work / "weights.S").string(), "-o",
                                                        (work / "weights.o").string()},
                               std::string("assembling the weights"), std::string()));
    objects.push_back({(work / "weights.o").string(), ObjectRole::kWeights});
  }
  for (std::future<void>& tool : tools) tool.wait();
  for (std::future<void>& tool : tools) tool.get();  // the first failure, in the order above

  // The footprint: image bytes of the objects by role; the weights are counted as their blob.
  PackageFacts facts;
  for (const LibraryObject& member : objects) {
    const ElfObject object = read_elf_object(member.path);
    check_object_format(member.path, object, options.format);
    switch (member.role) {
      case ObjectRole::kKernel: facts.kernel_code_bytes += object.image_bytes; break;
      case ObjectRole::kRunner: facts.runner_code_bytes += object.image_bytes; break;
      case ObjectRole::kRuntime: facts.runtime_code_bytes += object.image_bytes; break;
      case ObjectRole::kWeights: break;
    }
  }

  const fs::path library = work / ("lib" + parts.name + ".a");
  if (parts.archives.empty()) {
    std::vector<std::string> members;
    for (const LibraryObject& member : objects) members.push_back(member.path);
    write_archive(members, library);
  } else {
    // An archive merged whole needs ar's MRI script (ADDLIB), so that apps link the library alone.
    std::string script = "CREATE " + library.string() + "\n";
    for (const LibraryObject& member : objects) script += "ADDMOD " + member.path + "\n";
    for (const std::string& archive : parts.archives) script += "ADDLIB " + archive + "\n";
    write_text(work / "archive.mri", script + "SAVE\nEND\n");
    run_tool({"sh", "-c", "ar -M < '" + (work / "archive.mri").string() + "'"}, "archiving the library");
  }

  facts.library_bytes = static_cast<int64_t>(fs::file_size(library));
  facts.compile_seconds = options.compile_seconds_so_far +
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_text(work / (parts.name + ".report.json"), parts.report(facts));

  // Everything exists: move it into place.
  const fs::path out = options.out_dir;
  PackageResult result = move_into_place(work, out, parts.name, library, shipped);
  if (external_weights) result.weights = (out / shipped.back().filename()).string();
  result.library_bytes = facts.library_bytes;
  result.summary = parts.summary(facts);
  return result;
}

}  // namespace aotc
