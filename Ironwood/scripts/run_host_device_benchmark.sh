#!/bin/sh
# Host-device transfer bandwidth, both directions, pageable and pinned host memory.
# Extra arguments go to the run, e.g.: sh ./Ironwood/scripts/run_host_device_benchmark.sh --max-dim 64
exec sh "$(dirname "$0")/run_configs.sh" host_device "host_device" "$@"
