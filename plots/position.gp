# Validation loss by position in the context window at the end of training, mean over
# seeds.  Variables: n (blocks), colors.
load gpdir.'/common.gp'
set xlabel 'position in the context window'
set ylabel 'validation loss (nats)'
set key top right
plot for [i=0:n-1] data index i using 1:2 with lines lc rgb color(i) title columnheader(1)
