# Residual-stream norm by depth at the end of training (0 = the input of the first
# block, after the embedding norm; L = the final residual), mean over seeds with the
# range, on a logarithmic axis.  Variables: n (blocks), colors, pts.
load gpdir.'/common.gp'
set xtics 1
set logscale y
set xlabel 'depth (block input; last = final residual)'
set ylabel 'residual norm (mean over positions)'
# bottom right: the norms start large and the curves rise with depth, so that corner is empty
set key bottom right
plot for [i=0:n-1] data index i using 1:2:3:4 with yerrorlines lc rgb color(i) pt ptype(i) ps 0.6 \
         title columnheader(1)
