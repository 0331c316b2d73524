# Sourced by the benchmarks that emulate a link slower than loopback: two
# network namespaces joined by a veth pair whose both ends are shaped with
# `tc qdisc ... tbf`. The caller sets, before calling these:
#   link_ns=(NS0 NS1) link_dev=(DEV0 DEV1) link_addr=(ADDR0 ADDR1)
# (names and /24 addresses that only exist inside the namespaces created
# here), and removes them on exit with shaped_link_down.

# shaped_link_up: (re)creates both namespaces and the veth pair between them.
shaped_link_up() {
  shaped_link_down
  local i
  for i in 0 1; do ip netns add "${link_ns[$i]}"; done
  ip link add "${link_dev[0]}" type veth peer name "${link_dev[1]}"
  for i in 0 1; do
    ip link set "${link_dev[$i]}" netns "${link_ns[$i]}"
    ip -n "${link_ns[$i]}" addr add "${link_addr[$i]}/24" dev "${link_dev[$i]}"
    ip -n "${link_ns[$i]}" link set "${link_dev[$i]}" up
    ip -n "${link_ns[$i]}" link set lo up
  done
}

# shaped_link_rate RATE [BURST [LATENCY]]: shapes both directions (e.g. 500mbit).
# The bucket (BURST, default 2mbit = 256 KB) must hold whole GSO packets
# (64 KB on a veth): with a smaller one, tbf splits every packet and throttles
# per segment, and the emulated link costs the ranks' cores ~55 % of a core
# while it carries data (at 512kbit, 500mbit: 79 ms of CPU to move 8 MB each
# way, against 6 ms at 2mbit; docs/performance.md, "The emulated link's CPU").
# A real NIC does that work in hardware.
shaped_link_rate() {
  local i
  for i in 0 1; do
    ip netns exec "${link_ns[$i]}" tc qdisc replace dev "${link_dev[$i]}" root tbf rate "$1" \
      burst "${2:-2mbit}" latency "${3:-100ms}"
  done
}

# shaped_link_down: removes both namespaces (and with them the veth pair).
shaped_link_down() {
  local n
  for n in "${link_ns[@]}"; do ip netns del "$n" 2>/dev/null || true; done
}
