# Reliability diagram: accuracy against mean confidence per confidence bin, the bins of
# all seeds pooled, one line per variant; the diagonal is perfect calibration.
# Variables: n (blocks), colors, pts.
load gpdir.'/common.gp'
set xlabel 'confidence (top-1 probability)'
set ylabel 'accuracy'
set xrange [0:1]
set yrange [0:1]
set size ratio -1
set key bottom right
plot x with lines lc rgb '#888888' dt 2 notitle, \
     for [i=0:n-1] data index i using 1:2 with linespoints lc rgb color(i) pt ptype(i) ps 0.5 \
         title columnheader(1)
