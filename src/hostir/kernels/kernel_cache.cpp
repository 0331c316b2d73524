#include "hostir/kernels/kernel_cache.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <HalideRuntime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include "hostir/ir/error.h"
#include "hostir/kernels/halide_lowering.h"

extern char** environ;

namespace hostir {

namespace {

namespace fs = std::filesystem;

// Bump when the lowering changes the code a key produces.
constexpr const char* kFormat = "v11-halide14";
constexpr const char* kEntry = "hostir_kernel";

std::mutex g_error_mutex;
std::string g_last_error;
KernelParallelFor g_parallel_for = nullptr;

extern "C" void recordKernelError(void* /*user_context*/, const char* message) {
  std::lock_guard<std::mutex> lock(g_error_mutex);
  g_last_error = message;
}

uint64_t fnv1a(const std::string& bytes) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    hash = (hash ^ c) * 1099511628211ull;
  }
  return hash;
}

std::string hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::optional<std::string> readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// A name no other process or thread uses in `dir`.
fs::path temporaryName(const fs::path& dir, const std::string& suffix) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = std::random_device{}();
  return dir / (".tmp-" + std::to_string(::getpid()) + "-" + hex(salt + counter++) + suffix);
}

void writeFileAtomically(const fs::path& target, const std::string& bytes) {
  fs::path temporary = temporaryName(target.parent_path(), target.extension().string());
  {
    std::ofstream out(temporary, std::ios::binary);
    out << bytes;
    HOSTIR_CHECK(out.good(), "cannot write the kernel cache file ", temporary.string());
  }
  fs::rename(temporary, target);
}

// Links an object file the engine wrote into a shared library with the
// system's C compiler driver (no source is compiled here).
void linkSharedLibrary(const fs::path& object, const fs::path& library) {
  const char* linker = std::getenv("HOSTIR_KERNEL_LINKER");
  std::string program = linker != nullptr && *linker != '\0' ? linker : "cc";
  std::vector<std::string> words{program, "-shared", "-o", library.string(), object.string()};
  std::vector<char*> argv;
  for (std::string& word : words) {
    argv.push_back(word.data());
  }
  argv.push_back(nullptr);
  pid_t pid = 0;
  int spawned = posix_spawnp(&pid, program.c_str(), nullptr, nullptr, argv.data(), environ);
  HOSTIR_CHECK(spawned == 0, "cannot run the linker '", program,
               "' to make a kernel library (install build-essential, or name another linker in "
               "HOSTIR_KERNEL_LINKER)");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  HOSTIR_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the linker '", program,
               "' failed to make the kernel library ", library.string());
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void warn(const std::string& message) {
  std::cerr << "hostir: warning: " << message << std::endl;
}

// The engine's target for the shared runtime, or for a kernel of `fusion`.
// A kernel's run-time checks (its arguments' types, ranks and bounds, and
// answers to bounds queries) go unless it may refuse its data: the caller
// builds every buffer from the segment's shapes (CompiledSegment::run), and
// computing the bounds the checks compare was a third of the compile of the
// training step's kernels (docs/kernels.md, "Checks").
Halide::Target engineTarget(const KernelTarget& target, const Fusion* fusion) {
  Halide::Target engine(target.engine_target);
  if (fusion != nullptr) {
    engine = engine.with_feature(Halide::Target::NoRuntime);
    if (!mayRefuseData(*fusion)) {
      engine = engine.with_feature(Halide::Target::NoAsserts)
                   .with_feature(Halide::Target::NoBoundsQuery);
    }
  }
  if (!target.fast_math) {
    engine = engine.with_feature(Halide::Target::StrictFloat);
  }
  return engine;
}

// The key file holds the full key and the library's checksum; an entry is
// used only when both match (a hash collision, a foreign format or a
// truncated or corrupt library is ignored).
std::string keyFileText(const std::string& key, const std::string& library_bytes) {
  return key + "\nlibrary-fnv1a:" + hex(fnv1a(library_bytes)) + "\n";
}

// The verified library of an entry, or nullopt (with a warning when the
// entry exists but is not usable).
std::optional<fs::path> verifiedEntry(const fs::path& dir, const std::string& name,
                                      const std::string& key) {
  fs::path key_file = dir / (name + ".key");
  fs::path library = dir / (name + ".so");
  std::optional<std::string> key_text = readFile(key_file);
  if (!key_text.has_value()) {
    return std::nullopt;
  }
  std::optional<std::string> bytes = readFile(library);
  if (!bytes.has_value()) {
    warn("kernel cache entry " + key_file.string() + " has no library; recompiling it");
    return std::nullopt;
  }
  if (*key_text != keyFileText(key, *bytes)) {
    warn("kernel cache entry " + library.string() +
         " does not match its key (another version, a collision or a corrupt file); "
         "ignoring it and recompiling");
    return std::nullopt;
  }
  return library;
}

void storeEntry(const fs::path& dir, const std::string& name, const std::string& key,
                const fs::path& built_library) {
  std::optional<std::string> bytes = readFile(built_library);
  HOSTIR_CHECK(bytes.has_value(), "cannot read the kernel library ", built_library.string());
  fs::rename(built_library, dir / (name + ".so"));
  // The key last: an entry without its key is never read.
  writeFileAtomically(dir / (name + ".key"), keyFileText(key, *bytes));
}

// How long a compile waits for another process's lock on its key before it
// compiles without it: HOSTIR_KERNEL_LOCK_TIMEOUT seconds, 300 by default.
double lockTimeoutSeconds() {
  const char* value = std::getenv("HOSTIR_KERNEL_LOCK_TIMEOUT");
  if (value == nullptr || *value == '\0') {
    return 300.0;
  }
  char* end = nullptr;
  double seconds = std::strtod(value, &end);
  HOSTIR_CHECK(end != value && *end == '\0' && seconds >= 0.0, "HOSTIR_KERNEL_LOCK_TIMEOUT=", value,
               " is not a number of seconds; give how long a compile waits for another "
               "process's lock on the same kernel (a number >= 0, default 300)");
  return seconds;
}

// Holds an exclusive lock on `path` (created if missing) for its lifetime:
// processes sharing the cache folder compile a key one at a time. A holder
// that dies releases it (the kernel drops a dead process's flock); one that
// hangs holds it only until lockTimeoutSeconds() has passed, then this
// process warns, naming the holder's pid (written in the file), and goes on
// without it. Where the lock file cannot be made, nothing is held. Either way
// the entries' atomic renames keep the folder consistent: the work is only
// done twice.
class KeyFileLock {
 public:
  explicit KeyFileLock(const fs::path& path) {
    const double timeout = lockTimeoutSeconds();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
    if (fd_ < 0) {
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    auto pause = std::chrono::milliseconds(1);
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) {
        release();  // a file system without flock: nothing held
        return;
      }
      if (secondsSince(start) >= timeout) {
        warn("the kernel cache lock " + path.string() + " is still held by process " + holder() +
             " after " + std::to_string(static_cast<int>(timeout)) +
             " s (a hung compile?); compiling the kernel without it (HOSTIR_KERNEL_LOCK_TIMEOUT "
             "sets how long to wait)");
        release();
        return;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
    std::string pid = std::to_string(::getpid());
    bool written = ::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, pid.data(), pid.size(), 0) >= 0;
    (void)written;  // the pid only names the holder in a waiter's warning
  }
  ~KeyFileLock() {
    release();
  }
  KeyFileLock(const KeyFileLock&) = delete;
  KeyFileLock& operator=(const KeyFileLock&) = delete;

 private:
  void release() {
    if (fd_ >= 0) {
      ::close(fd_);  // releases the lock
      fd_ = -1;
    }
  }
  // The pid the holder wrote, or "?" before it has written it.
  std::string holder() const {
    char text[32] = {};
    ssize_t n = ::pread(fd_, text, sizeof(text) - 1, 0);
    return n > 0 ? std::string(text, static_cast<size_t>(n)) : std::string("?");
  }

  int fd_ = -1;
};

std::string fullKey(const KernelSignature& signature, const KernelTarget& target) {
  return std::string("format:") + kFormat + "\ntarget:" + target.toString() + "\n" +
         signature.canonical;
}

}  // namespace

void setKernelParallelFor(KernelParallelFor parallel_for) {
  g_parallel_for = parallel_for;
}

KernelParallelFor kernelParallelFor() {
  return g_parallel_for;
}

bool kernelsEnabled() {
  const char* value = std::getenv("HOSTIR_KERNELS");
  if (value == nullptr || std::string(value).empty() || std::string(value) == "compiled") {
    return true;
  }
  HOSTIR_CHECK(std::string(value) == "aten", "HOSTIR_KERNELS=", value,
               " is not a kernel mode; valid values are compiled (the default: each segment "
               "runs as one native kernel where it can) and aten (every segment op by op "
               "through ATen)");
  return false;
}

CompiledKernel::CompiledKernel(void* library, int (*entry)(void**), std::string hash,
                               KernelTarget target)
    : library_(library), entry_(entry), hash_(std::move(hash)), target_(std::move(target)) {}

CompiledKernel::~CompiledKernel() {
  // Libraries stay loaded: unloading one whose code another thread may
  // still be returning through is not worth the memory it frees.
  (void)library_;
}

std::optional<std::string> CompiledKernel::call(void** args) const {
  int status = entry_(args);
  if (status == 0) {
    return std::nullopt;
  }
  std::string message;
  {
    std::lock_guard<std::mutex> lock(g_error_mutex);
    message = g_last_error;
  }
  if (status == halide_error_code_requirement_failed) {
    // Halide writes "Requirement Failed: (<condition>) <value> <message>":
    // the message is what the lowering said.
    size_t condition_end = message.find(") ");
    size_t value_end =
        condition_end == std::string::npos ? condition_end : message.find(' ', condition_end + 2);
    return value_end == std::string::npos ? message : message.substr(value_end + 1);
  }
  HOSTIR_THROW("the compiled kernel ", hash_, " failed (status ", status, "): ", message);
}

KernelCache& KernelCache::global() {
  static KernelCache* cache = new KernelCache();  // never destroyed: kernels outlive statics
  return *cache;
}

fs::path KernelCache::directory() const {
  fs::path base;
  if (const char* dir = std::getenv("HOSTIR_KERNEL_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    base = dir;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    base = fs::path(xdg) / "hostir" / "kernels";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    base = fs::path(home) / ".cache" / "hostir" / "kernels";
  } else {
    base = fs::temp_directory_path() / "hostir-kernels";
  }
  return base / kFormat;
}

std::string KernelCache::keyHash(const KernelSignature& signature, const KernelTarget& target) {
  return hex(fnv1a(fullKey(signature, target)));
}

void KernelCache::clearMemory() {
  std::lock_guard<std::mutex> lock(mutex_);
  kernels_.clear();
}

void KernelCache::setHooksForTesting(KernelCacheHooks hooks) {
  std::lock_guard<std::mutex> lock(mutex_);
  hooks_ = std::move(hooks);
}

namespace {

// The runtime entry `name` copied from the runtimes the build made
// (tools/kernel_runtimes), or nullopt where the build made none for it.
std::optional<fs::path> copyOfPrebuiltRuntime(const fs::path& dir, const std::string& name,
                                              const std::string& key) {
#ifdef HOSTIR_PREBUILT_KERNEL_RUNTIMES
  const fs::path prebuilt = fs::path(HOSTIR_PREBUILT_KERNEL_RUNTIMES) / kFormat;
  std::error_code error;
  if (fs::equivalent(prebuilt, dir, error)) {
    return std::nullopt;
  }
  std::optional<fs::path> library = verifiedEntry(prebuilt, name, key);
  if (!library.has_value()) {
    return std::nullopt;
  }
  fs::path copy = temporaryName(dir, ".so");
  if (!fs::copy_file(*library, copy, error) || error) {
    return std::nullopt;
  }
  storeEntry(dir, name, key, copy);
  return dir / (name + ".so");
#else
  (void)dir;
  (void)name;
  (void)key;
  return std::nullopt;
#endif
}

}  // namespace

fs::path KernelCache::runtimeEntry(const fs::path& dir, const KernelTarget& target) {
  std::string key = std::string("format:") + kFormat + "\nruntime:" + target.engine_target;
  std::string name = "runtime-" + hex(fnv1a(key));
  if (std::optional<fs::path> library = verifiedEntry(dir, name, key)) {
    return *library;
  }
  if (std::optional<fs::path> library = copyOfPrebuiltRuntime(dir, name, key)) {
    ++runtimes_copied_;
    return *library;
  }
  fs::path object = temporaryName(dir, ".o");
  fs::path built = temporaryName(dir, ".so");
  Halide::compile_standalone_runtime(object.string(), engineTarget(target, nullptr));
  linkSharedLibrary(object, built);
  fs::remove(object);
  storeEntry(dir, name, key, built);
  return dir / (name + ".so");
}

void KernelCache::prebuildRuntime(const KernelTarget& target) {
  fs::path dir = directory();
  fs::create_directories(dir);
  std::lock_guard<std::mutex> lock(runtime_mutex_);
  runtimeEntry(dir, target);
}

void KernelCache::ensureRuntime(const fs::path& dir, const KernelTarget& target) {
  std::lock_guard<std::mutex> lock(runtime_mutex_);
  if (runtimes_.count(target.engine_target) != 0) {
    return;
  }
  const fs::path library = runtimeEntry(dir, target);
  // Global: the kernels' references to the engine's runtime resolve here.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL);
  HOSTIR_CHECK(handle != nullptr, "cannot load the kernel runtime ", library.string(), ": ",
               dlerror());
  using SetError = void* (*)(void (*)(void*, const char*));
  using SetParallelFor = void* (*)(KernelParallelFor);
  auto set_error = reinterpret_cast<SetError>(dlsym(handle, "halide_set_error_handler"));
  auto set_parallel_for =
      reinterpret_cast<SetParallelFor>(dlsym(handle, "halide_set_custom_do_par_for"));
  HOSTIR_CHECK(set_error != nullptr && set_parallel_for != nullptr, "the kernel runtime ",
               library.string(), " lacks the engine's handler entry points");
  set_error(&recordKernelError);
  HOSTIR_ASSERT(g_parallel_for != nullptr, "no parallel-for installed before loading kernels");
  set_parallel_for(g_parallel_for);
  runtimes_[target.engine_target] = handle;
}

std::shared_ptr<CompiledKernel> KernelCache::load(const fs::path& library, const std::string& hash,
                                                  const KernelTarget& target) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    warn("cannot load the cached kernel " + library.string() + " (" + dlerror() +
         "); recompiling it");
    return nullptr;
  }
  auto entry =
      reinterpret_cast<int (*)(void**)>(dlsym(handle, (std::string(kEntry) + "_argv").c_str()));
  if (entry == nullptr) {
    warn("the cached kernel " + library.string() + " has no entry point; recompiling it");
    return nullptr;
  }
  return std::make_shared<CompiledKernel>(handle, entry, hash, target);
}

std::shared_ptr<const CompiledKernel> KernelCache::get(const Fusion& fusion,
                                                       const KernelSignature& signature,
                                                       const KernelTarget& target) {
  HOSTIR_ASSERT(!signature.unsupported.has_value(), "compiling an unsupported segment");
  const std::string key = fullKey(signature, target);
  const std::string hash = hex(fnv1a(key));
  std::promise<std::shared_ptr<const CompiledKernel>> promise;
  std::shared_ptr<Entry> entry;
  KernelCacheHooks hooks;
  bool compiles_here = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    hooks = hooks_;
    auto [it, inserted] = kernels_.try_emplace(key);
    if (inserted) {
      it->second = std::make_shared<Entry>(Entry{promise.get_future().share(), ""});
      compiles_here = true;
    }
    entry = it->second;
  }
  if (!compiles_here) {
    if (hooks.waiting &&
        entry->kernel.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      hooks.waiting(hash);
    }
    std::shared_ptr<const CompiledKernel> kernel = entry->kernel.get();
    // The first caller's error: each waiter throws an exception of its own
    // (one exception object is not shared between threads).
    HOSTIR_CHECK(kernel != nullptr, entry->failure);
    return kernel;
  }
  auto fail = [&](const char* what) {
    {
      // Not kept: the next caller of the key compiles it again.
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = kernels_.find(key); it != kernels_.end() && it->second == entry) {
        kernels_.erase(it);
      }
    }
    entry->failure = what;  // published to the waiters by set_value
    promise.set_value(nullptr);
  };
  try {
    if (hooks.compiling) {
      hooks.compiling(hash);
    }
    std::shared_ptr<const CompiledKernel> kernel =
        loadOrCompile(fusion, signature, target, key, hash);
    promise.set_value(kernel);
    return kernel;
  } catch (const std::exception& error) {
    fail(error.what());
    throw;
  } catch (...) {
    fail("the kernel's compile failed with an exception that is not a std::exception");
    throw;
  }
}

std::shared_ptr<const CompiledKernel> KernelCache::loadOrCompile(const Fusion& fusion,
                                                                 const KernelSignature& signature,
                                                                 const KernelTarget& target,
                                                                 const std::string& key,
                                                                 const std::string& hash) {
  auto start = std::chrono::steady_clock::now();
  fs::path dir = directory();
  std::error_code error;
  fs::create_directories(dir, error);
  HOSTIR_CHECK(!error, "cannot create the kernel cache directory ", dir.string(), ": ",
               error.message(), "; set HOSTIR_KERNEL_CACHE_DIR to a writable directory");
  std::shared_ptr<CompiledKernel> kernel = loadFromDisk(dir, hash, key, target);
  if (kernel == nullptr) {
    // One process compiles a key at a time: ranks sharing the folder wait
    // for the first and load its entry instead of compiling it again.
    KeyFileLock key_lock(dir / (hash + ".lock"));
    kernel = loadFromDisk(dir, hash, key, target);
    if (kernel == nullptr) {
      KernelCompileTimes times = compileEntry(fusion, signature, target, dir, hash, key);
      // The engine's runtime is built (once) while other threads compile
      // their kernels: only loading a kernel needs it.
      bool runtime_loaded = false;
      {
        std::lock_guard<std::mutex> lock(runtime_mutex_);
        runtime_loaded = runtimes_.count(target.engine_target) != 0;
      }
      auto runtime_start = std::chrono::steady_clock::now();
      ensureRuntime(dir, target);
      if (!runtime_loaded) {  // built, copied or waited for by this call
        times.engine_runtime = secondsSince(runtime_start);
      }
      kernel = load(dir / (hash + ".so"), hash, target);
      HOSTIR_CHECK(kernel != nullptr, "the kernel just compiled into ", dir.string(),
                   " cannot be loaded");
      ++compiled_;
      kernel->setOrigin(false, secondsSince(start));
      kernel->setCompileTimes(times);
      return kernel;
    }
  }
  ++loaded_from_disk_;
  kernel->setOrigin(true, secondsSince(start));
  return kernel;
}

std::shared_ptr<CompiledKernel> KernelCache::loadFromDisk(const fs::path& dir,
                                                          const std::string& hash,
                                                          const std::string& key,
                                                          const KernelTarget& target) {
  std::optional<fs::path> library = verifiedEntry(dir, hash, key);
  if (!library.has_value()) {
    return nullptr;
  }
  ensureRuntime(dir, target);
  return load(*library, hash, target);
}

KernelCompileTimes KernelCache::compileEntry(const Fusion& fusion, const KernelSignature& signature,
                                             const KernelTarget& target, const fs::path& dir,
                                             const std::string& hash, const std::string& key) {
  KernelCompileTimes times;
  auto phase = std::chrono::steady_clock::now();
  auto endPhase = [&phase](double& seconds) {
    seconds = secondsSince(phase);
    phase = std::chrono::steady_clock::now();
  };
  HalideKernel lowered = lowerToHalide(fusion, signature, target);
  endPhase(times.to_engine);
  fs::path object = temporaryName(dir, ".o");
  fs::path built = temporaryName(dir, ".so");
  try {
    // compile_to_object in two steps, so that each is timed.
    Halide::Module module = lowered.pipeline.compile_to_module(lowered.arguments, kEntry,
                                                               engineTarget(target, &fusion));
    endPhase(times.engine_lowering);
    module.compile({{Halide::OutputFileType::object, object.string()}});
    endPhase(times.code_generation);
  } catch (const std::exception& e) {
    HOSTIR_THROW("the kernel compiler (Halide) failed on the segment\n", fusion.toString(),
                 e.what());
  }
  linkSharedLibrary(object, built);
  endPhase(times.link);
  fs::remove(object);
  storeEntry(dir, hash, key, built);
  return times;
}

size_t KernelCache::crossCompile(const Fusion& fusion, const KernelSignature& signature,
                                 const KernelTarget& target) {
  HalideKernel lowered = lowerToHalide(fusion, signature, target);
  fs::path object = temporaryName(fs::temp_directory_path(), ".o");
  lowered.pipeline.compile_to_object(object.string(), lowered.arguments, kEntry,
                                     engineTarget(target, &fusion));
  size_t bytes = fs::file_size(object);
  fs::remove(object);
  return bytes;
}

std::string KernelCache::loopNest(const Fusion& fusion, const KernelSignature& signature,
                                  const KernelTarget& target) {
  HalideKernel lowered = lowerToHalide(fusion, signature, target);
  fs::path stmt = temporaryName(fs::temp_directory_path(), ".stmt");
  lowered.pipeline.compile_to_lowered_stmt(stmt.string(), lowered.arguments, Halide::Text,
                                           engineTarget(target, &fusion));
  std::string text = readFile(stmt).value_or("");
  fs::remove(stmt);
  return text;
}

}  // namespace hostir
