#include "hostir/ir/device_mesh.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <sstream>

#include "hostir/ir/error.h"

namespace hostir {

namespace {
std::string listString(const std::vector<int64_t>& values) {
  std::stringstream ss;
  ss << "{";
  for (size_t i = 0; i < values.size(); ++i) {
    ss << (i ? ", " : "") << values[i];
  }
  ss << "}";
  return ss.str();
}
}  // namespace

DeviceMesh::DeviceMesh(std::vector<int64_t> devices, std::vector<int64_t> shape)
    : devices_(std::move(devices)), shape_(std::move(shape)) {
  if (shape_.empty()) {
    shape_ = {static_cast<int64_t>(devices_.size())};
  }
  HOSTIR_CHECK(shape_.size() == 1 || shape_.size() == 2, "DeviceMesh ", listString(devices_),
               ": a mesh is 1-D or 2-D, got shape ", listString(shape_));
  int64_t product = std::accumulate(shape_.begin(), shape_.end(), int64_t{1}, std::multiplies<>());
  HOSTIR_CHECK(product == size(), "DeviceMesh ", listString(devices_), ": shape ",
               listString(shape_), " holds ", product, " devices but ", size(),
               " are listed; the shape's product must equal the number of devices");
  std::set<int64_t> unique(devices_.begin(), devices_.end());
  HOSTIR_CHECK(unique.size() == devices_.size(), "DeviceMesh ", listString(devices_),
               " lists a device twice; each device id may appear once");
  HOSTIR_CHECK(devices_.empty() || *unique.begin() >= 0, "DeviceMesh ", listString(devices_),
               ": device ids must be non-negative");
}

DeviceMesh DeviceMesh::createForNumDevices(int64_t num_devices) {
  std::vector<int64_t> devices(static_cast<size_t>(num_devices));
  std::iota(devices.begin(), devices.end(), 0);
  return DeviceMesh(devices);
}

bool DeviceMesh::has(int64_t device) const {
  return idxOf(device) >= 0;
}

int64_t DeviceMesh::idxOf(int64_t device) const {
  auto it = std::find(devices_.begin(), devices_.end(), device);
  return it == devices_.end() ? -1 : it - devices_.begin();
}

int64_t DeviceMesh::axisOf(ParallelType parallel_type) const {
  HOSTIR_CHECK(isDeviceDim(parallel_type), "a mesh has no ", hostir::toString(parallel_type),
               " dimension");
  int64_t axis = parallel_type == ParallelType::DIDx ? static_cast<int64_t>(shape_.size()) - 1 : 0;
  HOSTIR_CHECK(parallel_type == ParallelType::DIDx || shape_.size() == 2, toString(),
               " is 1-D and has no DIDy dimension");
  return axis;
}

int64_t DeviceMesh::size(ParallelType parallel_type) const {
  return shape_.at(static_cast<size_t>(axisOf(parallel_type)));
}

int64_t DeviceMesh::idxOf(int64_t device, ParallelType parallel_type) const {
  int64_t flat = idxOf(device);
  if (flat < 0) {
    return -1;
  }
  int64_t axis = axisOf(parallel_type);
  if (shape_.size() == 1) {
    return flat;
  }
  return axis == 1 ? flat % shape_[1] : flat / shape_[1];
}

std::vector<int64_t> DeviceMesh::getSlice(int64_t device, ParallelType parallel_type) const {
  int64_t flat = idxOf(device);
  HOSTIR_CHECK(flat >= 0, "device ", device, " is not in ", toString());
  if (shape_.size() == 1) {
    axisOf(parallel_type);
    return devices_;
  }
  std::vector<int64_t> slice;
  if (axisOf(parallel_type) == 1) {
    int64_t row = flat / shape_[1];
    for (int64_t c = 0; c < shape_[1]; ++c) {
      slice.push_back(devices_[static_cast<size_t>(row * shape_[1] + c)]);
    }
  } else {
    int64_t col = flat % shape_[1];
    for (int64_t r = 0; r < shape_[0]; ++r) {
      slice.push_back(devices_[static_cast<size_t>(r * shape_[1] + col)]);
    }
  }
  return slice;
}

std::string DeviceMesh::toString() const {
  std::stringstream ss;
  ss << "DeviceMesh{";
  for (size_t i = 0; i < devices_.size(); ++i) {
    ss << (i ? " " : "") << devices_[i];
  }
  if (shape_.size() == 2) {
    ss << " shape=" << shape_[0] << "x" << shape_[1];
  }
  ss << "}";
  return ss.str();
}

std::string teamToString(const std::vector<int64_t>& team) {
  std::stringstream ss;
  ss << "(";
  for (size_t i = 0; i < team.size(); ++i) {
    ss << (i ? " " : "") << team[i];
  }
  ss << ")";
  return ss.str();
}

}  // namespace hostir
