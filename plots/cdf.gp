# Latency CDFs: one line per series of one report label (and one group
# of its series, e.g. a phase, cache state and memory size), the fraction
# of samples at or below a value. Only time series are drawn, so one plot
# never mixes units.
# Input: cdf.csv from `coldstart report` with the columns
#   label,group,series,unit,value,fraction
# (one row per sample, sorted by value within a series; ns shown as ms).
# Variables (gnuplot -e): in, out, fmt ('png' or 'svg'), bench (the
#   label: column 1), group, series (space-separated names to draw),
#   colours and dashes (per series: a palette index 1-10 and a dash
#   pattern 1-5; the report keeps a restore strategy's colour and a
#   working set's dash in every plot), unit (the axis unit, e.g. 'us'),
#   scale (value * scale is in that unit; default 1: ms), title.
# Usage: gnuplot -e "in='cdf.csv'; out='cdf.png'; fmt='png'; \
#   bench='lifecycle'; group='all'; series='inproc.coldstart inproc.floor'; \
#   colours='1 2'; dashes='1 1'; unit='ms'; title='lifecycle'" plots/cdf.gp
if (!exists("in")) in = 'cdf.csv'
if (!exists("out")) out = 'cdf.png'
if (!exists("fmt")) fmt = 'png'
if (!exists("unit")) unit = 'ms'
if (!exists("scale")) scale = 1
if (!exists("title")) title = bench
if (!exists("colours")) colours = ''
if (!exists("dashes")) dashes = ''

if (fmt eq 'svg') {
	set terminal svg size 1200,600 dynamic noenhanced font 'sans,12'
} else {
	set terminal pngcairo size 1200,600 noenhanced font 'sans,10'
}
# out='' draws to stdout: coldstart hands gnuplot the file to draw into
if (out eq '') { set output } else { set output out }
set datafile separator ','
set title title
set xlabel sprintf('latency (%s, log scale)', unit)
set ylabel 'fraction of samples at or below'
set logscale x
set yrange [0:1.02]
set ytics 0.1
set grid
set key outside right top
set offsets graph 0.02, graph 0.02, 0, 0

# ten colours told apart on screen and paper
palette = '#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #000000 #17becf #bcbd22'
colour(i) = word(palette, (words(colours) >= i ? int(word(colours, i)) : (i - 1) % 10 + 1))
dash(i) = words(dashes) >= i ? int(word(dashes, i)) : (i - 1) / 10 + 1
# A row belongs to the line when label, group and series match.
# Rows of other lines are NaN in x and y, so they do not stretch the axes.
mine(s) = strcol(1) eq bench && strcol(2) eq group && strcol(3) eq s
plot for [i=1:words(series)] in skip 1 \
	using (mine(word(series, i)) ? $5 * scale : NaN):(mine(word(series, i)) ? $6 : NaN) \
	with steps lw 2 lc rgb colour(i) dt dash(i) title word(series, i)
