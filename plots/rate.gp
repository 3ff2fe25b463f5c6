# VM creation rate against concurrency: VMs per second (left) and the
# per-VM latency median and p99 (right), one colour per mode in both
# panels (a mode's p99 dashed in its median's colour); one legend, below
# the left panel, outside the data.
# Input: rate.csv from `coldstart report` with the columns
#   mode,concurrency,vms_per_s,p50_ms,p99_ms
# (one row per mode and concurrency level, sorted by concurrency).
# Variables (gnuplot -e): in, out, fmt ('png' or 'svg'), modes
#   (space-separated modes present in the file).
if (!exists("in")) in = 'rate.csv'
if (!exists("out")) out = 'rate.png'
if (!exists("fmt")) fmt = 'png'

if (fmt eq 'svg') {
	set terminal svg size 1200,600 dynamic noenhanced font 'sans,12'
} else {
	set terminal pngcairo size 1200,600 noenhanced font 'sans,10'
}
# out='' draws to stdout: coldstart hands gnuplot the file to draw into
if (out eq '') { set output } else { set output out }
set datafile separator ','
set grid
set key below horizontal maxrows 2 spacing 1.2
# room under the axis label for the two rows of the legend
set bmargin 7
set xlabel 'concurrent starts'
set offsets graph 0.05, graph 0.05, graph 0.05, 0

palette = '#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #000000'
colour(i) = word(palette, (i - 1) % 8 + 1)
# Rows of other modes are NaN in x and y, so they do not stretch the axes.
is(m, col) = strcol(1) eq m ? column(col) : NaN
n = words(modes)
set multiplot layout 1, 2 title 'VM creation rate against concurrency'
set title 'throughput'
set ylabel 'VMs per second'
set yrange [0:*]
plot for [i=1:n] in skip 1 using (is(word(modes, i), 2)):(is(word(modes, i), 3)) \
	with linespoints lw 2 lc rgb colour(i) pt 7 title word(modes, i)
# one legend (the left panel's): a mode keeps its colour here
unset key
set title 'latency per VM: median solid, p99 dashed'
set ylabel 'ms'
plot for [i=1:n] in skip 1 using (is(word(modes, i), 2)):(is(word(modes, i), 4)) \
	with linespoints lw 2 lc rgb colour(i) pt 7 notitle, \
     for [i=1:n] in skip 1 using (is(word(modes, i), 2)):(is(word(modes, i), 5)) \
	with linespoints lw 1 dt 2 lc rgb colour(i) pt 6 notitle
unset multiplot
