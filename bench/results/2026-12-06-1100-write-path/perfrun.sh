#!/bin/bash
# run tp.sh in background and perf record -a -g for 10 s in the middle
( DUR=${DUR:-25} /work/s13/tp.sh ${1:-relaxed} ${2:-tides} > /work/s13/perfrun.out 2>&1 ) &
sleep ${DELAY:-25}
perf record -a -g -o /work/s13/perf.data -- sleep 10 2>/dev/null >/dev/null
wait
