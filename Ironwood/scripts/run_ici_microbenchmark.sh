#!/bin/sh
# Collectives over the chip interconnect (ICI): the reference's 40 collective configs, in its order.
# Run the same command on every host of a slice with --multihost (or see Ironwood/gke/).
# Extra arguments go to every run, e.g.: sh ./Ironwood/scripts/run_ici_microbenchmark.sh --multihost
cd "$(dirname "$0")/../configs/collectives"
names=$(ls ./*.yaml | sed 's|^\./||; s|\.yaml$||' | sort)
exec sh ../../scripts/run_configs.sh collectives "$names" "$@"
