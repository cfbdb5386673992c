#!/usr/bin/env bash
# Stop the one-node SLURM cluster of workflow/cluster/start.sh (its jobs are cancelled) and remove
# the slurm.conf that start.sh wrote (a configuration of another cluster is left alone). With that
# file and no controller, every SLURM client command waits about 9 s for the controller, and
# Snakemake's SLURM executor plugin runs one (`scontrol show config`) each time Snakemake starts.
set -uo pipefail
scancel --user "$(id -un)" 2>/dev/null
pkill -x slurmd
pkill -x slurmctld
pkill -x munged
if grep -qx "ClusterName=itemsampling" /etc/slurm/slurm.conf 2>/dev/null; then
    rm -f /etc/slurm/slurm.conf
fi
exit 0
