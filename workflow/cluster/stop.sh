#!/usr/bin/env bash
# Stop the one-node SLURM cluster of workflow/cluster/start.sh (its jobs are cancelled).
set -uo pipefail
scancel --user "$(id -un)" 2>/dev/null
pkill -x slurmd
pkill -x slurmctld
pkill -x munged
exit 0
