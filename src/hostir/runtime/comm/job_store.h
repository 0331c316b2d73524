#pragma once

#include <string>

#include <torch/csrc/distributed/c10d/Store.hpp>

// Who can join a job (docs/multidevice.md, "Who can join a job"). The ranks
// meet in a key-value store; c10d's TCPStore (1.13) listens on every
// interface and has no authentication, so anyone who reaches its port can
// read and write the job's keys. Two defences:
//   - a single-host job needs no port: `hostir launch` gives its ranks a
//     FileStore in a folder only its user can enter (HOSTIR_STORE_FILE);
//   - a multi-host job can carry a secret (HOSTIR_JOB_SECRET, the same on
//     every rank): every key the job reads or writes lives under a prefix
//     derived from it, so a process without it cannot write a key the job
//     reads, nor find one (the store has no listing).
// The secret travels in the clear inside the key names: it keeps out a
// stranger who can reach the port, not one who can read the job's traffic
// (use a private network for that, or the mpi backend).
namespace hostir {

struct JobStoreAccess {
  // The launch environment's store file (HOSTIR_STORE_FILE; every rank on
  // this host names the same); empty: the TCPStore at MASTER_ADDR:MASTER_PORT.
  std::string file;
  // From HOSTIR_JOB_SECRET: the prefix of every key; empty without one.
  std::string key_prefix;

  // `store_file` and HOSTIR_JOB_SECRET. Throws hostir::Error for a store
  // file whose folder other users can enter or that another user owns, and
  // for a secret shorter than kMinimumSecretLength.
  static JobStoreAccess fromEnvironment(const std::string& store_file);

  // `store` as this job sees it: every key under key_prefix.
  c10::intrusive_ptr<c10d::Store> guard(c10::intrusive_ptr<c10d::Store> store) const;

  static constexpr size_t kMinimumSecretLength = 16;
};

// The key prefix of a job secret ("hostir-job/<sha1 of it>/"); throws
// hostir::Error for one shorter than kMinimumSecretLength characters.
std::string jobKeyPrefix(const std::string& secret);

// Throws hostir::Error unless the folder of `file` exists, belongs to this
// user and no one else may enter or list it (mode 0700 or stricter).
void checkPrivateStoreFile(const std::string& file);

}  // namespace hostir
