# The effect of each embedding norm against none (primary metric, treatment - baseline)
# with its 95 % interval, by model size; the grey band is +-minimum effect.
# Variables: n (blocks), colors, min_effect, ylabel.
load gpdir.'/common.gp'
set logscale x
set xlabel 'parameters'
set ylabel ylabel
set format x '%.0s%c'
set key top right
set object 1 rectangle from graph 0, first -min_effect to graph 1, first min_effect \
    behind fc rgb '#888888' fs transparent solid 0.2 noborder
set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lc rgb '#888888' lw 0.6
set offsets graph 0.08, graph 0.08, 0, 0
plot for [i=0:n-1] data index i using ($1 * (1 + 0.04 * (i - (n - 1) / 2.0))):2:3:4 \
         with yerrorlines lc rgb color(i) pt 7 ps 0.7 title columnheader(1)
