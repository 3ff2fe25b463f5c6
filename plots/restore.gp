# Memory-restore strategies side by side against guest memory size:
# restore -> DONE (median) per strategy and working-set size, one panel
# per page-cache state, with the never-stopped request phase for scale.
# Input: restore.csv from `coldstart report` with the columns
#   strategy,cache,mem_mib,ws_mib,n,first_run_ms,first_progress_ms,
#   done_ms,done_p90_ms,request_ms,faults,mib_read,host_faults,
#   major_faults,disk_mib_read
# (faults, mib_read: what the strategy did itself; host_faults,
# major_faults, disk_mib_read: the host's page faults and storage reads
# for the process, empty in documents that lack them; this plot reads
# columns 1-4 and 8).
# (never-stopped rows: strategy never-stopped, cache '-', done_ms = its
# request phase).
# Variables (gnuplot -e): in, out, fmt ('png' or 'svg'), strategies and
#   wss and caches (space-separated values present in the file).
if (!exists("in")) in = 'restore.csv'
if (!exists("out")) out = 'restore.png'
if (!exists("fmt")) fmt = 'png'
if (!exists("caches")) caches = 'warm cold'

if (fmt eq 'svg') {
	set terminal svg size 1400,600 dynamic noenhanced font 'sans,12'
} else {
	set terminal pngcairo size 1400,600 noenhanced font 'sans,10'
}
set output out
set datafile separator ','
set logscale xy 2
set format y '%g'
set xlabel 'guest memory (MiB, log scale)'
set ylabel 'restore -> DONE, median (ms, log scale)'
set grid
set offsets graph 0.08, graph 0.08, 0, 0

# Rows of other lines are NaN in x and y, so they do not stretch the axes.
row(s, c, w) = (strcol(1) eq s && strcol(2) eq c && $4 == w)
never(w) = (strcol(1) eq 'never-stopped' && $4 == w)
nc = words(caches)
set multiplot layout 1, nc title 'restore strategies against guest memory size'
do for [c in caches] {
	set title sprintf('page cache %s', c)
	# one legend, beside the last panel
	if (c eq word(caches, nc)) { set key outside right top } else { unset key }
	# colour per strategy, dash pattern per working-set size
	plot for [i=1:words(strategies)] for [j=1:words(wss)] in skip 1 \
	        using (row(word(strategies, i), c, word(wss, j) + 0) ? $3 : NaN):\
	              (row(word(strategies, i), c, word(wss, j) + 0) ? $8 : NaN) \
	        with linespoints lw 2 lc i dt j pt i \
	        title sprintf('%s ws %sM', word(strategies, i), word(wss, j)), \
	     for [j=1:words(wss)] in skip 1 \
	        using (never(word(wss, j) + 0) ? $3 : NaN):(never(word(wss, j) + 0) ? $8 : NaN) \
	        with linespoints lc 'black' dt j pt 7 ps 0.6 \
	        title sprintf('never stopped ws %sM', word(wss, j))
}
unset multiplot
