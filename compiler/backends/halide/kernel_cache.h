// A content-addressed cache of compiled Halide objects (aotc --kernel-cache,
// AOTC_KERNEL_CACHE): a kernel that any model compiled before, with any aotc
// build on this machine, is copied instead of compiled again. LLVM's
// optimisation and code generation are most of a kernel's compile time; the
// lowering, which the key needs, is the rest.
//
// The key is a SHA-256 of the lowered module as Halide's IR printer writes it
// (floats printed exactly), of what that printer leaves out (argument kinds,
// types and alignment, the bytes of constant buffers), of the target, and of the
// Halide and LLVM libraries this process runs (path, size, modification time).
// Halide names temporaries from per-process counters ("t123"), so the key's text
// renames every such name part in order of first appearance: the same kernel
// then has the same key whatever was compiled before it in the process.
//
// An entry is written to a temporary file and renamed, so aotc processes may
// share a directory; nothing ever deletes entries (remove the directory to).
#pragma once

#include <string>

namespace Halide {
class Module;
struct Target;
}  // namespace Halide

namespace aotc {

// Writes `module` compiled as the object file `object`, from the cache in
// `cache_dir` when it holds it, else compiled and then stored there. An empty
// `cache_dir` compiles without a cache. Returns true when the object came from
// the cache.
bool compile_kernel_object(const Halide::Module& module, const std::string& object, const std::string& cache_dir);

// The same for Halide's runtime for `target`.
bool compile_runtime_object(const Halide::Target& target, const std::string& object, const std::string& cache_dir);

// Creates `dir` if missing and checks that files can be written in it; throws
// UserError(kIo) naming it otherwise.
void prepare_kernel_cache(const std::string& dir);

}  // namespace aotc
