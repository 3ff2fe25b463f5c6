# VM creation rate against concurrency: VMs per second (left) and the
# per-VM latency median and p99 (right), one line per mode.
# Input: rate.csv from `coldstart report` with the columns
#   mode,concurrency,vms_per_s,p50_ms,p99_ms
# (one row per mode and concurrency level, sorted by concurrency).
# Variables (gnuplot -e): in, out, fmt ('png' or 'svg'), modes
#   (space-separated modes present in the file).
if (!exists("in")) in = 'rate.csv'
if (!exists("out")) out = 'rate.png'
if (!exists("fmt")) fmt = 'png'

if (fmt eq 'svg') {
	set terminal svg size 1200,550 dynamic noenhanced font 'sans,12'
} else {
	set terminal pngcairo size 1200,550 noenhanced font 'sans,10'
}
set output out
set datafile separator ','
set grid
set key top left
set xlabel 'concurrent starts'
set offsets graph 0.05, graph 0.05, graph 0.05, 0

# Rows of other modes are NaN in x and y, so they do not stretch the axes.
is(m, col) = strcol(1) eq m ? column(col) : NaN
set multiplot layout 1, 2 title 'VM creation rate against concurrency'
set title 'throughput'
set ylabel 'VMs per second'
set yrange [0:*]
plot for [m in modes] in skip 1 using (is(m, 2)):(is(m, 3)) with linespoints lw 2 \
	title m
set title 'latency per VM'
set ylabel 'ms'
plot for [m in modes] in skip 1 using (is(m, 2)):(is(m, 4)) with linespoints lw 2 \
	title sprintf('%s median', m), \
     for [m in modes] in skip 1 using (is(m, 2)):(is(m, 5)) with linespoints dt 2 \
	title sprintf('%s p99', m)
unset multiplot
