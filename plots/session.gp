# Multi-turn sessions per turn: resume to first output (top), the
# snapshot each turn saved beside the bytes it changed (middle) and the
# chain the next turn resumes (bottom), one colour per session document
# (its merge policy); turns that merged the chain circled in every panel.
# Input: session.csv from `coldstart report` with the columns
#   session,turn,resume_ms,command_ms,snapshot_ms,saved_mib,changed_mib,
#   chain,merged
# (one row per turn of each session document).
# Variables (gnuplot -e): in, out, fmt ('png' or 'svg'), sessions
#   (space-separated session names present in the file).
if (!exists("in")) in = 'session.csv'
if (!exists("out")) out = 'session.png'
if (!exists("fmt")) fmt = 'png'

if (fmt eq 'svg') {
	set terminal svg size 1000,900 dynamic noenhanced font 'sans,12'
} else {
	set terminal pngcairo size 1000,900 noenhanced font 'sans,10'
}
# out='' draws to stdout: coldstart hands gnuplot the file to draw into
if (out eq '') { set output } else { set output out }
set datafile separator ','
set grid
set key outside right top
# turns are whole numbers: one tick each, half a turn either side
set xtics 1 format '%.0f'
set autoscale xfix
set offsets 0.5, 0.5, graph 0.1, 0
set xlabel 'turn'
set lmargin 10
set rmargin 34

palette = '#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #000000'
colour(i) = word(palette, (i - 1) % 8 + 1)
# Rows of other sessions are NaN in x and y, so they do not stretch the axes.
is(s, col) = strcol(1) eq s ? column(col) : NaN
merged(s, col) = strcol(1) eq s && column(9) == 1 ? column(col) : NaN
n = words(sessions)
set multiplot layout 3, 1 title 'session turns (merges circled)'
set title 'resume -> first output'
set ylabel 'ms'
set yrange [0:*]
plot for [i=1:n] in skip 1 using (is(word(sessions, i), 2)):(is(word(sessions, i), 3)) \
	with linespoints lw 2 pt 7 lc rgb colour(i) title word(sessions, i), \
     for [i=1:n] in skip 1 using (merged(word(sessions, i), 2)):(merged(word(sessions, i), 3)) \
	with points pt 6 ps 2.5 lw 2 lc rgb colour(i) title (i == 1 ? 'merged the chain' : '')
set title 'snapshot per turn: saved solid, changed dashed'
set ylabel 'MiB'
plot for [i=1:n] in skip 1 using (is(word(sessions, i), 2)):(is(word(sessions, i), 6)) \
	with linespoints lw 2 pt 7 lc rgb colour(i) title sprintf('%s saved', word(sessions, i)), \
     for [i=1:n] in skip 1 using (is(word(sessions, i), 2)):(is(word(sessions, i), 7)) \
	with linespoints lw 1 dt 2 pt 6 lc rgb colour(i) title sprintf('%s changed', word(sessions, i)), \
     for [i=1:n] in skip 1 using (merged(word(sessions, i), 2)):(merged(word(sessions, i), 6)) \
	with points pt 6 ps 2.5 lw 2 lc rgb colour(i) notitle
set title 'chain length after the turn'
set ylabel 'snapshots'
set ytics 1
plot for [i=1:n] in skip 1 using (is(word(sessions, i), 2)):(is(word(sessions, i), 8)) \
	with linespoints lw 2 pt 7 lc rgb colour(i) title word(sessions, i), \
     for [i=1:n] in skip 1 using (merged(word(sessions, i), 2)):(merged(word(sessions, i), 8)) \
	with points pt 6 ps 2.5 lw 2 lc rgb colour(i) notitle
unset multiplot
