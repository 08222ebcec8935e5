set terminal pngcairo size 1400,900 font ',10'
set output 'bench/results/failure_matrix.png'
set datafile separator '\t'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key outside right
set grid ytics
set xtics rotate by -20
set linetype 9 lc rgb '#8c564b'
set linetype 10 lc rgb '#7f7f7f'
set linetype 11 lc rgb '#bcbd22'
set linetype 12 lc rgb '#17becf'
set multiplot layout 2,1
set title "Failure matrix: p95 over flows of the longest silence (ms, log scale; 14000 = never recovered)"
set logscale y
set yrange [1:20000]
set ylabel 'ms'
plot for [c=2:10] 'bench/results/failure_matrix.dat' using c:xtic(1) title columnheader(c)
set title "Flows not recovered within 12 s of the event (16 per pair: 16 toward each, 32 away)"
unset logscale y
set yrange [0:32]
set ylabel 'flows'
plot for [c=11:19] 'bench/results/failure_matrix.dat' using c:xtic(1) title columnheader(c)
unset multiplot
