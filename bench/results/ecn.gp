set terminal pngcairo size 900,420
set output 'bench/results/ecn.png'
set title "l1's share of h2's subnet through s1; s1 -> l2 marks ECN or is paused from t=0"
set xlabel 'seconds'
set ylabel 'percent'
set yrange [38:52]
set grid
set key bottom left
plot 'bench/results/ecn.dat' using 1:2 with steps lw 2 title 'ECN input on (ecn\_ref 0.1)', '' using 1:3 with steps lw 2 title 'ECN input off (ecn\_ref 0), same marks', '' using 1:4 with steps lw 2 title '800 pause frames/s received'
