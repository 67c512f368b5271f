# Accuracy per task and variant (a task study, summary.tasks): per variant, each task's
# mean accuracy over seeds with a bar of one standard deviation; per task, its chance rate
# (a star), the bigram model's accuracy (an open circle) and the strongest n-gram model's
# (a triangle: the control a task must beat to show more than local statistics).
# Variables: n (variants), colors, pts, marks (the file of chance, bigram and strongest n-gram
# with the task names).
load gpdir.'/common.gp'
set ylabel 'accuracy'
set xrange [0.4:ntasks + 0.6]
set xtics scale 0
set grid noxtics
# the key below the panel, never over a point; its text prints at 8 pt (common.gp's scale)
set key outside below center horizontal maxcols 3 font ',8'
plot for [i=0:n-1] data index i using 1:2:3 with yerrorbars lc rgb color(i) pt ptype(i) ps 0.6 \
       title columnheader(1), \
     marks using 1:2:xtic(5) with points lc rgb '#555555' pt 5 ps 0 notitle, \
     marks using 1:2 with points lc rgb '#555555' pt 3 ps 1.2 title 'chance', \
     marks using 1:3 with points lc rgb '#555555' pt 6 ps 0.9 title 'bigram', \
     marks using 1:4 with points lc rgb '#555555' pt 8 ps 0.9 title 'strongest n-gram'
