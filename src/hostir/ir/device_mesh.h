#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hostir/ir/types.h"

namespace hostir {

// The devices a tensor lives on: a list of device ids laid out in a 1-D or
// 2-D shape (row-major). DIDx indexes the last mesh dimension, DIDy the first
// of a 2-D mesh.
class DeviceMesh {
 public:
  DeviceMesh() = default;
  explicit DeviceMesh(std::vector<int64_t> devices, std::vector<int64_t> shape = {});

  // {0, 1, ..., n-1}
  static DeviceMesh createForNumDevices(int64_t num_devices);

  int64_t size() const {
    return static_cast<int64_t>(devices_.size());
  }
  // Number of devices along a parallel type (DIDx: last dimension).
  int64_t size(ParallelType parallel_type) const;
  const std::vector<int64_t>& shape() const {
    return shape_;
  }
  const std::vector<int64_t>& vector() const {
    return devices_;
  }
  bool empty() const {
    return devices_.empty();
  }
  bool has(int64_t device) const;
  // Position of `device` in the flat list; -1 if absent.
  int64_t idxOf(int64_t device) const;
  // Index of `device` along a mesh dimension (DIDx / DIDy).
  int64_t idxOf(int64_t device, ParallelType parallel_type) const;
  // The devices that share `device`'s coordinates except along parallel_type
  // (the team of a collective over that dimension).
  std::vector<int64_t> getSlice(int64_t device, ParallelType parallel_type) const;

  bool operator==(const DeviceMesh& other) const {
    return devices_ == other.devices_ && shape_ == other.shape_;
  }
  bool operator!=(const DeviceMesh& other) const {
    return !(*this == other);
  }
  std::string toString() const;

 private:
  int64_t axisOf(ParallelType parallel_type) const;

  std::vector<int64_t> devices_;
  std::vector<int64_t> shape_;
};

// A list of device ids as messages and the printer write a team: "(0 1 3)".
std::string teamToString(const std::vector<int64_t>& team);

}  // namespace hostir
