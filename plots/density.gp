# The density curve: host memory used against VMs started, one line per
# variant (fresh VMs, clones sharing snapshot memory): PSS plus the
# kernel's memory (page tables, KVM structures), and PSS alone, dashed
# in the variant's colour.
# Input: density.csv from `coldstart report` with the columns
#   variant,vms,rss_mib,pss_mib,uss_mib,kernel_mib
# (one row per variant and VM count, sorted by VM count).
# Variables (gnuplot -e): in, out, fmt ('png' or 'svg'), variants
#   (space-separated variants present in the file).
if (!exists("in")) in = 'density.csv'
if (!exists("out")) out = 'density.png'
if (!exists("fmt")) fmt = 'png'

if (fmt eq 'svg') {
	set terminal svg size 1000,600 dynamic noenhanced font 'sans,12'
} else {
	set terminal pngcairo size 1000,600 noenhanced font 'sans,10'
}
# out='' draws to stdout: coldstart hands gnuplot the file to draw into
if (out eq '') { set output } else { set output out }
set datafile separator ','
set grid
set key top left
set title 'host memory against VMs running'
set xlabel 'VMs running'
set ylabel 'host memory (MiB)'
set yrange [0:*]

palette = '#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #000000'
colour(i) = word(palette, (i - 1) % 8 + 1)
is(v, col) = strcol(1) eq v ? column(col) : NaN
# a variant's two lines in one colour: PSS + kernel solid, PSS dashed
n = words(variants)
plot for [i=1:n] in skip 1 using (is(word(variants, i), 2)):(is(word(variants, i), 4) + is(word(variants, i), 6)) \
	with linespoints lw 2 lc rgb colour(i) pt 7 title sprintf('%s PSS + kernel', word(variants, i)), \
     for [i=1:n] in skip 1 using (is(word(variants, i), 2)):(is(word(variants, i), 4)) \
	with linespoints dt 2 lc rgb colour(i) pt 6 title sprintf('%s PSS', word(variants, i))
