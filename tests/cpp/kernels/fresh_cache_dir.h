#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/scoped_env.h"
#include "hostir/kernels/kernel_cache.h"

namespace hostir::test {

// A fresh kernel cache directory for one test (HOSTIR_KERNEL_CACHE_DIR, the
// in-memory kernels forgotten), removed afterwards.
class FreshCacheDir {
 public:
  FreshCacheDir()
      : dir_(std::filesystem::temp_directory_path() /
             ("hostir-kernel-cache-test-" + std::to_string(::getpid()) + "-" +
              std::to_string(counter_++))),
        env_("HOSTIR_KERNEL_CACHE_DIR", dir_.c_str()) {
    std::filesystem::remove_all(dir_);
    KernelCache::global().clearMemory();
  }
  ~FreshCacheDir() {
    KernelCache::global().clearMemory();
    std::filesystem::remove_all(dir_);
  }
  const std::filesystem::path& path() const {
    return dir_;
  }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
  ScopedEnv env_;
};

}  // namespace hostir::test
