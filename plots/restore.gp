# Memory-restore strategies side by side per size: restore -> DONE
# (median) of each strategy at each measured guest-memory and working-set
# size (only sizes that were measured, evenly spaced), one panel per
# page-cache state, with the never-stopped request phase for scale. One
# colour and point type per strategy, so the legend names each strategy
# once (at most ten, plus never stopped).
# Input: restore.csv from `coldstart report` with the columns
#   strategy,cache,mem_mib,ws_mib,n,first_run_ms,first_progress_ms,
#   done_ms,done_p90_ms,request_ms,faults,mib_read,host_faults,
#   major_faults,disk_mib_read
# (ws_mib empty where the working set is not known, as of a Linux
# guest's snapshot; faults, mib_read: what the strategy did itself;
# host_faults, major_faults, disk_mib_read: the host's page faults and
# storage reads for the process, empty in documents that lack them; this
# plot reads columns 1-4 and 8).
# (never-stopped rows: strategy never-stopped, cache '-', done_ms = its
# request phase).
# Variables (gnuplot -e): in, out, fmt ('png' or 'svg'), strategies and
#   caches (space-separated values present in the file), cells (the
#   sizes as MEM:WS words in MiB, e.g. '64:16 256:16 256:64', matched
#   against columns 3 and 4 as text; WS empty: a working set not known,
#   as of a Linux guest's snapshot, '32:', labelled by its memory alone,
#   '32 MiB'; WS 0 is read so too, as files from before the empty field
#   wrote it), baseline (0: no never-stopped rows, so no legend entry for
#   them).
if (!exists("in")) in = 'restore.csv'
if (!exists("out")) out = 'restore.png'
if (!exists("fmt")) fmt = 'png'
if (!exists("caches")) caches = 'warm cold'
if (!exists("baseline")) baseline = 1

if (fmt eq 'svg') {
	set terminal svg size 1400,600 dynamic noenhanced font 'sans,12'
} else {
	set terminal pngcairo size 1400,600 noenhanced font 'sans,10'
}
# out='' draws to stdout: coldstart hands gnuplot the file to draw into
if (out eq '') { set output } else { set output out }
set datafile separator ','
set logscale y 2
set format y '%g'
set ylabel 'restore -> DONE, median (ms, log scale)'
set grid
# room above and below, so the lowest and highest points show whole
set offsets 0, 0, graph 0.05, graph 0.05
nx = words(cells)
set xrange [0.5:nx + 0.5]
set xtics ()
anyws = 0
do for [i=1:nx] {
	c = word(cells, i)
	p = strstrt(c, ':')
	if (c[p + 1:] eq '' || c[p + 1:] eq '0') {
		set xtics add (sprintf('%s MiB', c[1:p - 1]) i)
	} else {
		set xtics add (sprintf('%s / %s', c[1:p - 1], c[p + 1:]) i)
		anyws = 1
	}
}
if (anyws) {
	set xlabel 'guest memory / working set (MiB)'
	what = 'memory and working-set size'
} else {
	set xlabel 'guest memory'
	what = 'memory size'
}

palette = '#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #17becf #bcbd22 #7f7f7f'
colour(i) = word(palette, (i - 1) % 10 + 1)
# The x of a row: the position of its MEM:WS among the cells, NaN when
# it is not one (rows of other lines are NaN too, so they do not stretch
# the axes). Text, not numbers: an empty ws_mib is no number.
cellx(m, w) = (cp = strstrt(' '.cells.' ', ' '.m.':'.w.' '), \
	cp ? words((' '.cells.' ')[1:cp]) + 1 : NaN)
row(s, c) = (strcol(1) eq s && strcol(2) eq c)
nc = words(caches)
set multiplot layout 1, nc title 'restore strategies per '.what
do for [c in caches] {
	set title sprintf('page cache %s', c)
	# one legend, beside the last panel
	if (c eq word(caches, nc)) { set key outside right top } else { unset key }
	plot for [i=1:words(strategies)] in skip 1 \
	        using (row(word(strategies, i), c) ? cellx(strcol(3), strcol(4)) : NaN):\
	              (row(word(strategies, i), c) ? $8 : NaN) \
	        with linespoints lw 2 lc rgb colour(i) pt (i - 1) % 13 + 1 \
	        title word(strategies, i), \
	     in skip 1 using (strcol(1) eq 'never-stopped' ? cellx(strcol(3), strcol(4)) : NaN):\
	        (strcol(1) eq 'never-stopped' ? $8 : NaN) \
	        with linespoints lc 'black' dt 2 pt 7 ps 0.6 \
	        title (baseline ? 'never stopped' : '')
}
unset multiplot
