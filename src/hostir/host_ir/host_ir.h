#pragma once

// Everything needed to build a host program by hand.
#include "hostir/host_ir/alias_select.h"
#include "hostir/host_ir/allocation.h"
#include "hostir/host_ir/communication.h"
#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/host_ir_container.h"
#include "hostir/host_ir/host_unit.h"
#include "hostir/host_ir/launch_kernel.h"
#include "hostir/host_ir/scope.h"
#include "hostir/host_ir/set_encoding.h"
#include "hostir/host_ir/stream.h"
#include "hostir/host_ir/stream_ops.h"
