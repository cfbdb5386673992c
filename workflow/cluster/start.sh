#!/usr/bin/env bash
# Start a one-node SLURM cluster on this machine (as root) from Debian's packages slurm-wlm and
# munge: munged, slurmctld and slurmd with a slurm.conf of a dozen lines and no accounting
# database. Used by `make cluster-check` and tests/workflow/test_cluster.py; stop it with
# workflow/cluster/stop.sh. Installs the packages when apt-get can (root, Debian/Ubuntu).
#
#   workflow/cluster/start.sh            # prints the node's CPUs and memory when it is up
set -euo pipefail

need() { command -v "$1" >/dev/null 2>&1; }
if ! need slurmctld || ! need slurmd || ! need munged; then
    if [ "$(id -u)" -ne 0 ] || ! need apt-get; then
        echo "workflow/cluster/start.sh: SLURM is not installed and cannot be installed here (needs root and apt-get:" \
             "apt-get install slurm-wlm munge)" >&2
        exit 3
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "workflow/cluster/start.sh: starting the SLURM daemons needs root" >&2
    exit 3
fi

node=$(hostname -s)
cpus=$(nproc)
# the node offers what the machine has, less 2 GB for the system
memory=$(( $(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) - 2048 ))
conf_dir=/etc/slurm
state=/var/lib/itemsampling-slurm
mkdir -p "$conf_dir" "$state/ctld" "$state/d" /var/log/slurm /run/munge /etc/munge

if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
fi
chown -R munge:munge /etc/munge /run/munge 2>/dev/null || true
chmod 400 /etc/munge/munge.key
pgrep -x munged >/dev/null || munged --force

cat > "$conf_dir/slurm.conf" <<CONF
ClusterName=itemsampling
SlurmctldHost=$node
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
MinJobAge=600
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=main Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF

pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd
for _ in $(seq 1 30); do
    if sinfo -h -o "%t" 2>/dev/null | grep -qE "^(idle|mix|alloc)"; then
        sinfo -h -o "node %N: %c CPUs, %m MB, partition %P, state %t"
        exit 0
    fi
    sleep 1
done
echo "workflow/cluster/start.sh: the node did not come up; see /var/log/slurm/" >&2
sinfo >&2 || true
exit 1
