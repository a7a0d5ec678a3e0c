#!/usr/bin/env bash
# The agent on a machine with real NVIDIA GPUs and driver (CI has none).
#
#   scripts/gpucheck/run.sh build   # where Go is: builds into scripts/gpucheck/bin (ignored by git)
#   scripts/gpucheck/run.sh         # on the GPU machine, as root: runs what build made
#
# It prints what nvidia-smi sees next to what the agent's NVML backend sees
# (gpubook-agent probe), then runs TestLockOnRealGPUs (agent/lock, build
# tag gpudevice): a user's process opens the real /dev/nvidiaN of her
# booking, is refused the others (EPERM), and is refused hers once the
# booking has ended; unlock lifts every rule. Nothing is left behind.
set -uo pipefail
cd "$(dirname "$0")"
if [ "${1:-}" = build ]; then
  mkdir -p bin
  go build -o bin/gpubook-agent ../../cmd/gpubook-agent &&
    go test -c -tags gpudevice -o bin/lock.test ../../agent/lock/
  exit
fi
echo "== machine"; id; uname -r; sed -n 1,2p /etc/os-release
echo "== nvidia-smi"
nvidia-smi --query-gpu=index,name,uuid,memory.total,mig.mode.current,driver_version --format=csv
echo "== devices and cgroups"
ls -l /dev/nvidia* 2>&1 | sed -n 1,12p
echo "cgroup fs: $(stat -fc %T /sys/fs/cgroup); this shell: $(sed -n 1p /proc/self/cgroup)"
conf=$(mktemp)
printf 'portal = http://127.0.0.1:1\n' > "$conf"
echo "== gpubook-agent probe"
timeout 60 bin/gpubook-agent probe --config "$conf"; echo "probe exit $?"
rm -f "$conf"
echo "== the lock on the real GPUs"
timeout 120 bin/lock.test -test.v -test.run 'TestLockOnRealGPUs$'
