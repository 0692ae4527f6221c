#!/bin/sh
# Device memory (HBM) copy bandwidth from 2 MiB to 8 GiB.
# Extra arguments go to the run, e.g.: sh ./Ironwood/scripts/run_hbm_benchmark.sh --resume
exec sh "$(dirname "$0")/run_configs.sh" hbm "hbm" "$@"
