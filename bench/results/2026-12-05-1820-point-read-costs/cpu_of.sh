#!/bin/bash
# cpu_of.sh DATADIR: CPU ticks of the postmaster, its reaped children and its live children
pm=$(head -1 $1/postmaster.pid)
t=$(awk '{print $14+$15+$16+$17}' /proc/$pm/stat)
for p in $(pgrep -P $pm); do
  s=$(awk '{print $14+$15}' /proc/$p/stat 2>/dev/null); t=$((t + ${s:-0}))
done
echo $t
