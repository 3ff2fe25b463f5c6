# Warm-pool configurations of `coldstart tune pool`: the SLO's metric
# against idle VM-seconds, one colour per policy, the Pareto frontier as a
# line and the SLO's goal as a horizontal line.
# Input: pareto.csv with the columns
#   policy,params,idle_vm_s,slo_metric,hit_pct,p99_ms,peak_mib,meets_slo,
#   pareto
# (slo_metric: the latency percentile in seconds, or the hit percentage;
# pareto 1 on the frontier; the frontier's rows come first, by idle
# VM-seconds, so they draw as one line).
# Variables (gnuplot -e): in, out, fmt ('png' or 'svg'), hits (1: the SLO
#   is a hit percentage, else a latency in ms), goal (its value: percent
#   or ms), slo (its text, for the title).
if (!exists("in")) in = 'pareto.csv'
if (!exists("out")) out = 'pareto.png'
if (!exists("fmt")) fmt = 'png'
if (!exists("hits")) hits = 0
if (!exists("goal")) goal = NaN
if (!exists("slo")) slo = ''

if (fmt eq 'svg') {
	set terminal svg size 1000,650 dynamic noenhanced font 'sans,12'
} else {
	set terminal pngcairo size 1000,650 noenhanced font 'sans,10'
}
# out='' draws to stdout: coldstart hands gnuplot the file to draw into
if (out eq '') { set output } else { set output out }
set datafile separator ','
set xlabel 'idle VM-seconds'
set grid
set key outside right top
set title sprintf('warm-pool configurations against the SLO %s', slo)
# latencies in ms; hit percentages as they are
y(v) = hits ? v : 1000 * v
if (hits) { set ylabel 'hit ratio (%)' } else { set ylabel 'SLO latency percentile (ms)'; set logscale y }
policies = 'fixed ttl hybrid follow marginal'
pol(p) = strcol(1) eq p
plot for [i=1:words(policies)] in skip 1 \
        using (pol(word(policies, i)) ? $3 : NaN):(pol(word(policies, i)) ? y($4) : NaN) \
        with points pt i + 4 lc i title word(policies, i), \
     in skip 1 using ($9 == 1 ? $3 : NaN):($9 == 1 ? y($4) : NaN) \
        with lines lw 2 lc 'black' title 'Pareto frontier', \
     goal with lines dt 2 lc 'red' title 'SLO goal'
