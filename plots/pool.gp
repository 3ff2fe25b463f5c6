# A warm pool over time under replayed arrivals: the VMs held, being made
# and the target (top), and requests arriving per second (bottom), one
# line per pool run.
# Input: pool.csv from `coldstart report` with the columns
#   label,t_s,held,making,target,arrivals_per_s
# (one row per occupancy sample, sorted by time).
# Variables (gnuplot -e): in, out, fmt ('png' or 'svg'), labels
#   (space-separated labels present in the file).
if (!exists("in")) in = 'pool.csv'
if (!exists("out")) out = 'pool.png'
if (!exists("fmt")) fmt = 'png'

if (fmt eq 'svg') {
	set terminal svg size 1000,700 dynamic noenhanced font 'sans,12'
} else {
	set terminal pngcairo size 1000,700 noenhanced font 'sans,10'
}
# out='' draws to stdout: coldstart hands gnuplot the file to draw into
if (out eq '') { set output } else { set output out }
set datafile separator ','
set grid
set key outside right top
# headroom above the top line, so a target held flat stays visible
set offsets 0, 0, graph 0.1, 0

is(l, col) = strcol(1) eq l ? column(col) : NaN
set multiplot layout 2, 1 title 'warm pool over time'
set title 'VMs'
set ylabel 'VMs'
set yrange [0:*]
set xlabel 'time (s)'
plot for [l in labels] in skip 1 using (is(l, 2)):(is(l, 3)) with steps lw 2 \
	title sprintf('%s held', l), \
     for [l in labels] in skip 1 using (is(l, 2)):(is(l, 4)) with steps dt 3 \
	title sprintf('%s making', l), \
     for [l in labels] in skip 1 using (is(l, 2)):(is(l, 5)) with steps dt 2 \
	title sprintf('%s target', l)
set title 'arrivals'
set ylabel 'requests per second'
plot for [l in labels] in skip 1 using (is(l, 2)):(is(l, 6)) with steps lw 2 \
	title l
unset multiplot
