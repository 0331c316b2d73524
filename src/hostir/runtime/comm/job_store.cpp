#include "hostir/runtime/comm/job_store.h"

#include <c10/util/hash.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include "hostir/ir/error.h"

namespace hostir {

std::string jobKeyPrefix(const std::string& secret) {
  HOSTIR_CHECK(secret.size() >= JobStoreAccess::kMinimumSecretLength, "HOSTIR_JOB_SECRET has ",
               secret.size(), " characters; give at least ", JobStoreAccess::kMinimumSecretLength,
               " random ones, the same on every rank (e.g. `od -An -N16 -tx1 /dev/urandom | "
               "tr -d ' \\n'`)");
  return "hostir-job/" + c10::sha1(secret).str() + "/";
}

void checkPrivateStoreFile(const std::string& file) {
  const std::string folder = std::filesystem::path(file).parent_path().string();
  struct stat info {};
  HOSTIR_CHECK(!folder.empty() && ::stat(folder.c_str(), &info) == 0 && S_ISDIR(info.st_mode),
               "HOSTIR_STORE_FILE=", file, ": its folder '", folder,
               "' is not there; give a file in a folder of mode 0700 (hostir launch makes one)");
  char mode[8];
  std::snprintf(mode, sizeof(mode), "%03o", static_cast<unsigned>(info.st_mode & 0777));
  HOSTIR_CHECK(info.st_uid == ::geteuid() && (info.st_mode & 077) == 0, "HOSTIR_STORE_FILE=", file,
               ": its folder '", folder, "' is open to other users (mode 0", mode, ", owner uid ",
               info.st_uid, "); the rendezvous file must be in a folder only this user (uid ",
               ::geteuid(), ") can enter, mode 0700, as hostir launch makes");
}

JobStoreAccess JobStoreAccess::fromEnvironment(const std::string& store_file) {
  JobStoreAccess access;
  if (!store_file.empty()) {
    checkPrivateStoreFile(store_file);
    access.file = store_file;
  }
  if (const char* secret = std::getenv("HOSTIR_JOB_SECRET"); secret != nullptr) {
    access.key_prefix = jobKeyPrefix(secret);
  }
  return access;
}

c10::intrusive_ptr<c10d::Store> JobStoreAccess::guard(c10::intrusive_ptr<c10d::Store> store) const {
  if (key_prefix.empty()) {
    return store;
  }
  return c10::make_intrusive<c10d::PrefixStore>(key_prefix, std::move(store));
}

}  // namespace hostir
