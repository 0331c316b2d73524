#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "hostir/ir/fusion.h"
#include "hostir/kernels/kernel_signature.h"
#include "hostir/kernels/kernel_target.h"

namespace hostir {

// Halide's parallel-loop hook: the runtime installs one (its thread pool,
// runtime/compiled_segment.cpp) before any kernel loads, so kernels share
// the rank's thread budget instead of starting a pool of their own.
using KernelTask = int (*)(void* user_context, int index, unsigned char* closure);
using KernelParallelFor = int (*)(void* user_context, KernelTask task, int min, int size,
                                  unsigned char* closure);
void setKernelParallelFor(KernelParallelFor parallel_for);
// The installed hook (nullptr before the runtime installs one).
KernelParallelFor kernelParallelFor();

// Where a kernel's compile went, in seconds (HOSTIR_DUMP=kernels prints
// it): hostir's fusion to Halide's Funcs, Halide's lowering to its loop
// nest, LLVM's optimization and code generation, the link into a shared
// library, and the engine's runtime: built (or waited for) once per process
// and target, ~0 for every later kernel. All zero for a kernel loaded from
// the disk cache.
struct KernelCompileTimes {
  double to_engine = 0.0;
  double engine_lowering = 0.0;
  double code_generation = 0.0;
  double link = 0.0;
  double engine_runtime = 0.0;
};

// One native kernel, loaded and callable.
class CompiledKernel {
 public:
  CompiledKernel(void* library, int (*entry)(void**), std::string hash, KernelTarget target);
  ~CompiledKernel();
  CompiledKernel(const CompiledKernel&) = delete;
  CompiledKernel& operator=(const CompiledKernel&) = delete;

  // args: a halide_buffer_t* per tensor input, a pointer to each scalar
  // (int64_t or double), a halide_buffer_t* per output. Returns the message
  // of a requirement the data failed (a sin or cos argument beyond the
  // kernel's exact reduction, vector_trig.h: the outputs are then partly
  // written and the caller runs the segment otherwise); any other failure (a
  // buffer the kernel cannot take) is a hostir::Error with the engine's
  // message.
  std::optional<std::string> call(void** args) const;

  void setOrigin(bool from_disk, double seconds) {
    from_disk_ = from_disk;
    seconds_ = seconds;
  }
  const std::string& hash() const {
    return hash_;
  }
  const KernelTarget& target() const {
    return target_;
  }
  // Loaded from the disk cache (not compiled by this process).
  bool fromDisk() const {
    return from_disk_;
  }
  // Compile (or load) time.
  double seconds() const {
    return seconds_;
  }
  void setCompileTimes(const KernelCompileTimes& times) {
    compile_times_ = times;
  }
  const KernelCompileTimes& compileTimes() const {
    return compile_times_;
  }

 private:
  void* library_;
  int (*entry_)(void**);
  std::string hash_;
  KernelTarget target_;
  bool from_disk_ = false;
  double seconds_ = 0.0;
  KernelCompileTimes compile_times_;
};

// What a test can watch of a compile in flight (kernel_cache_test): called
// outside the cache's lock with the entry's hash, `compiling` by the caller
// that compiles (or loads) a key, `waiting` by one that finds that key in
// flight and waits for it. A throw from `compiling` is a failed compile.
struct KernelCacheHooks {
  std::function<void(const std::string& hash)> compiling;
  std::function<void(const std::string& hash)> waiting;
};

// Kernels by canonical form: in memory for the process, on disk across
// processes (docs/kernels.md, "The cache"). The lock is per key (and per
// key across processes sharing the folder, by a lock file): distinct
// kernels compile at once on several threads (the compile stage compiles a
// program's kernels in parallel), a second caller of a key in flight waits
// for the first and gets its kernel, or its error (a failed compile is not
// kept: the next caller tries again). The directory is
// HOSTIR_KERNEL_CACHE_DIR, else $XDG_CACHE_HOME/hostir/kernels, else
// ~/.cache/hostir/kernels, with one subfolder per format version. Entries
// are written to a temporary name and renamed, so ranks compiling the same
// kernel at once never see half a file; an entry whose key or checksum does
// not match is ignored with a warning and replaced.
class KernelCache {
 public:
  static KernelCache& global();

  // The kernel of `fusion` (analyzed as `signature`) for `target`, which
  // must run on this machine: from memory, else from disk, else compiled.
  // Throws hostir::Error when the engine fails. Thread-safe.
  std::shared_ptr<const CompiledKernel> get(const Fusion& fusion, const KernelSignature& signature,
                                            const KernelTarget& target);

  // Compiles `fusion` for `target` without loading it (any target: a
  // cross-compilation); returns the object file's size in bytes.
  size_t crossCompile(const Fusion& fusion, const KernelSignature& signature,
                      const KernelTarget& target);

  // Writes the engine's runtime for `target` into directory() without
  // loading it (the build's tools/kernel_runtimes: a user's first kernel
  // then copies it instead of building it, ~1.4 s on one AVX2 core).
  void prebuildRuntime(const KernelTarget& target);

  // The engine's loop nest of the kernel (HOSTIR_DUMP=kernels).
  std::string loopNest(const Fusion& fusion, const KernelSignature& signature,
                       const KernelTarget& target);

  std::filesystem::path directory() const;
  // The cache key's hash for a segment and target (the entry's file name).
  static std::string keyHash(const KernelSignature& signature, const KernelTarget& target);

  // Counters, for tests and `hostir lower`.
  int compiled() const {
    return compiled_.load();
  }
  int loadedFromDisk() const {
    return loaded_from_disk_.load();
  }
  // Engine runtimes copied from the build's prebuilt ones (not built here).
  int runtimesCopiedFromBuild() const {
    return runtimes_copied_.load();
  }
  // Forgets the in-memory kernels (tests: the next get reads the disk).
  void clearMemory();
  // Tests only; empty hooks to stop watching.
  void setHooksForTesting(KernelCacheHooks hooks);

 private:
  using KernelFuture = std::shared_future<std::shared_ptr<const CompiledKernel>>;
  // One key's kernel, ready or in flight; null with `failure` set (before
  // the future is made ready) when its compile failed.
  struct Entry {
    KernelFuture kernel;
    std::string failure;
  };

  // From disk, else compiled; runs outside mutex_.
  std::shared_ptr<const CompiledKernel> loadOrCompile(const Fusion& fusion,
                                                      const KernelSignature& signature,
                                                      const KernelTarget& target,
                                                      const std::string& key,
                                                      const std::string& hash);
  // The verified entry of `hash` in `dir`, loaded; null where there is none
  // (or it is bad: warned about).
  std::shared_ptr<CompiledKernel> loadFromDisk(const std::filesystem::path& dir,
                                               const std::string& hash, const std::string& key,
                                               const KernelTarget& target);
  // Compiles, links and stores the entry of `hash` in `dir`.
  KernelCompileTimes compileEntry(const Fusion& fusion, const KernelSignature& signature,
                                  const KernelTarget& target, const std::filesystem::path& dir,
                                  const std::string& hash, const std::string& key);
  std::shared_ptr<CompiledKernel> load(const std::filesystem::path& library,
                                       const std::string& hash, const KernelTarget& target);
  void ensureRuntime(const std::filesystem::path& dir, const KernelTarget& target);
  // The engine's runtime library for `target` in `dir`: found, copied from
  // the build's prebuilt runtimes, or built. Caller holds runtime_mutex_.
  std::filesystem::path runtimeEntry(const std::filesystem::path& dir, const KernelTarget& target);

  std::mutex mutex_;  // guards kernels_ and hooks_, never held while compiling
  std::unordered_map<std::string, std::shared_ptr<Entry>> kernels_;
  KernelCacheHooks hooks_;
  std::mutex runtime_mutex_;  // guards runtimes_ (the engine's runtime, built once)
  std::unordered_map<std::string, void*> runtimes_;
  std::atomic<int> compiled_{0};
  std::atomic<int> loaded_from_disk_{0};
  std::atomic<int> runtimes_copied_{0};
};

// HOSTIR_KERNELS: "compiled" (default) or "aten" (every segment through the
// ATen interpreter); anything else is an error listing both.
bool kernelsEnabled();

}  // namespace hostir
