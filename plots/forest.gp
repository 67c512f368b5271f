# A forest plot of the paired effects on one primary metric: per comparison the mean
# difference (treatment - baseline) and its 95 % interval (BCa, t where BCa is
# undefined), the band of +-minimum effect of its study (grey), and the design's minimum
# detectable effect at 80 % power marked with open diamonds at +-MDE.
# Variables: rows, lmargin (characters), xlabel.
height = 0.8 + 0.22 * rows
# wide: the row labels take half of it
width = 6.5
# room for the axis label under a narrow plot, and a tick step of 1, 2 or 5 x 10^k
# chosen from this plot's range so that about four labels fit
stats data using 3 nooutput prefix "LO"
stats data using 4 nooutput prefix "HI"
stats data using 5 nooutput prefix "MDE"
stats data using 6 nooutput prefix "ME"
edge = MDE_max > ME_max ? MDE_max : ME_max
span = (HI_max > edge ? HI_max : edge) - (LO_min < -edge ? LO_min : -edge)
raw = span > 0 ? span / 4.0 : 1.0
mag = 10 ** floor(log10(raw))
step = (raw / mag >= 5 ? 5 : raw / mag >= 2 ? 2 : 1) * mag
load gpdir.'/common.gp'
set xlabel xlabel
set yrange [0.4:rows + 0.6]
set ytics scale 0
set grid noytics
set key off
set arrow 1 from first 0, graph 0 to first 0, graph 1 nohead lc rgb '#888888' lw 0.6
set lmargin lmargin
set rmargin 8
set xtics step
set mxtics 2
plot data using (0):1:(-$6):($6):($1 - 0.3):($1 + 0.3) with boxxyerror \
         fs transparent solid 0.25 noborder lc rgb '#888888', \
     data using 2:1:3:4:ytic(7) with xerrorbars lc rgb '#0072B2' pt 7 ps 0.7, \
     data using 5:1 with points lc rgb '#D55E00' pt 12 ps 0.8, \
     data using (-$5):1 with points lc rgb '#D55E00' pt 12 ps 0.8
