# The fault timeline of one process: guest and host page faults per
# millisecond, and the cumulative guest faults, over time.
# Input: the CSV of `coldstart probe --csv FILE` (time_ms,kind,tid,addr,
# dur_us; one row per fault; kind is guest, host_user or host_kernel).
# Usage: gnuplot -e "in='faults.csv'; out='faults.png'" plots/fault_timeline.gp
if (!exists("in")) in = 'faults.csv'
if (!exists("out")) out = 'faults.png'

set terminal pngcairo size 1000,600 noenhanced
set output out
set datafile separator ','
set key top left
set xlabel 'time since attach (ms)'
set ylabel 'faults per ms'
set y2label 'guest faults so far'
set ytics nomirror
set y2tics
set grid
set autoscale xfix

bin(t) = floor(t) + 0.5
is(kind) = strcol(2) eq kind ? 1 : 0

set style fill solid 0.4 noborder
set boxwidth 1.0
plot in skip 1 using (bin($1)):(is('guest')) smooth frequency with boxes \
        title 'guest faults / ms', \
     in skip 1 using (bin($1)):(is('host_user') + is('host_kernel')) \
        smooth frequency with boxes title 'host faults / ms', \
     in skip 1 using 1:(is('guest')) smooth cumulative axes x1y2 \
        with lines lw 2 title 'guest faults, cumulative'
