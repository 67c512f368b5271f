# Validation loss by position in the context window at the end of training, mean over
# seeds.  Variables: n (blocks), colors.
load gpdir.'/common.gp'
set xlabel 'position in the context window'
set ylabel 'validation loss (nats)'
# the key above the plot, where the noisy curves cannot run through it; x fitted to the
# positions there are (0 .. context-1)
set key outside top center horizontal samplen 2 width 3
set autoscale xfix
plot for [i=0:n-1] data index i using 1:2 with lines lc rgb color(i) title columnheader(1)
