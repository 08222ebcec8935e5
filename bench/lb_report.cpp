// The load-balancing benchmark's table and plots (lb_report.h).
#include "lb_report.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "twinrail/lab/shell.h"

namespace twinrail::bench::lb {

using json = nlohmann::json;

namespace {

std::string fixed(const json& v, int digits) {
    if (!v.is_number()) return "-";
    std::ostringstream o;
    o << std::fixed << std::setprecision(digits) << v.get<double>();
    return o.str();
}

// A share as a percentage with enough digits to tell small ones apart.
std::string percent(const json& v) {
    if (!v.is_number()) return "-";
    double p = v.get<double>() * 100;
    std::ostringstream o;
    o << std::fixed << std::setprecision(p < 0.1 ? 3 : 2) << p << "%";
    return o.str();
}

// A share with the counts behind it, "0.012% (6 of 51173)": where a baseline counted
// nothing, its ratios are undefined and the counts are the comparison.
std::string counted(const json& share, double of) {
    if (!share.is_number()) return "-";
    return percent(share) + " (" + std::to_string(std::llround(share.get<double>() * of)) + " of " +
           std::to_string(std::llround(of)) + ")";
}

std::string udpLate(const json& reorder) {
    return counted(reorder["udp_late_share"], reorder.value("udp_received", 0.0));
}

std::string tcpReorder(const json& reorder) {
    double segments = reorder.value("tcp_counters", json::object()).value("Tcp.OutSegs", 0.0);
    return counted(reorder["tcp_reorder_events_per_segment"], segments);
}

json byMode(const json& list, const std::string& mode) {
    for (const auto& m : list)
        if (m["mode"] == mode) return m;
    return json::object();
}

void gnuplot(const std::string& gp) {
    twinrail::lab::run({"gnuplot", gp});
}

void balancePlot(const json& r, const std::string& base) {
    std::ofstream dat(base + ".dat");
    dat << "# mode permutation_ideal_over_job degraded_goodput_over_maxflow "
           "alltoall_ideal_over_job\n";
    for (const auto& m : r["permutation"]) {
        std::string mode = m["mode"];
        dat << "\"" << mode << "\" " << m.value("ratio_to_ideal", 0.0) << " "
            << byMode(r["degraded"], mode).value("ratio_to_max_flow", 0.0) << " "
            << byMode(r["all-to-all"], mode).value("ratio_to_ideal", 0.0) << "\n";
    }
    dat.close();  // gnuplot reads it
    std::ofstream gp(base + ".gp");
    gp << "set terminal pngcairo size 1100,440\nset output '" << base << ".png'\n"
       << "set style data histograms\nset style histogram clustered gap 1\n"
       << "set style fill solid 0.8 border -1\nset yrange [0:1.35]\nset grid y\n"
       << "set key top center horizontal\nset title 'Load balancing, 4x4 leaf, 100 Mbit/s "
          "links (median of the jobs)'\n"
       << "plot '" << base << ".dat' using 2:xtic(1) title 'permutation: ideal / job', "
       << "'' using 3 title 'one spine path at 1/4: goodput / max-flow', "
       << "'' using 4 title 'all-to-all: ideal / job'\n";
    gp.close();
    gnuplot(base + ".gp");
}

void reorderPlot(const json& r, const std::string& base) {
    std::string b = base + "_reorder";
    std::ofstream dat(b + ".dat");
    dat << "# mode permutation: tcp_reorder_events_per_segment udp_late_share (percent, "
           "+0.001 for the log scale)\n";
    for (const auto& m : r["permutation"]) {
        dat << "\"" << m["mode"].get<std::string>() << "\" "
            << m["reorder"]["tcp_reorder_events_per_segment"].get<double>() * 100 + 0.001 << " "
            << m["reorder"]["udp_late_share"].get<double>() * 100 + 0.001 << "\n";
    }
    dat.close();
    std::ofstream gp(b + ".gp");
    gp << "set terminal pngcairo size 1000,420\nset output '" << b << ".png'\n"
       << "set style data histograms\nset style histogram clustered gap 1\n"
       << "set style fill solid 0.8 border -1\nset logscale y\nset grid y\n"
       << "set ylabel 'percent (log)'\nset key top left\n"
       << "set title 'Reordering, permutation: TCP reordering detected by the senders and "
          "late UDP datagrams'\n"
       << "plot '" << b << ".dat' using 2:xtic(1) title 'TCP reordering events / segment sent', "
       << "'' using 3 title 'UDP probe: late datagrams'\n";
    gp.close();
    gnuplot(b + ".gp");
}

// Balance and reordering against the idle time (log scale), on two axes; the reordering
// axis spans at least 0.1%, so that one late datagram in 50,000 does not fill it.
void sweepPlot(const json& r, const std::string& base) {
    if (r["sweep"].empty()) return;
    std::string b = base + "_sweep";
    std::ofstream dat(b + ".dat");
    dat << "# idle_x_half_rtt idle_us ideal_over_job tcp_reorder_events_percent "
           "udp_late_percent load_max_over_mean\n";
    for (const auto& s : r["sweep"]) {
        dat << s["idle_x_half_rtt"].get<double>() << " " << s["idle_us"].get<int>() << " "
            << s["ratio_to_ideal"].get<double>() << " "
            << s["reorder"]["tcp_reorder_events_per_segment"].get<double>() * 100 << " "
            << s["reorder"]["udp_late_share"].get<double>() * 100 << " "
            << s["median_load_max_over_mean"].get<double>() << "\n";
    }
    dat.close();
    const json single = byMode(r["permutation"], "single-path");
    const double singleLate =
        single.contains("reorder") ? single["reorder"]["udp_late_share"].get<double>() * 100 : 0;
    std::ofstream gp(b + ".gp");
    gp << "set terminal pngcairo size 1000,520\nset output '" << b << ".png'\n"
       << "set grid\nset logscale x\nset xlabel 'flowlet idle time (us, log); half the idle "
          "RTT is "
       << fixed(r.value("ars_idle_us", json()), 0) << " us'\n"
       << "set ylabel 'permutation: ideal / job time'\nset yrange [0:1.15]\n"
       << "set y2label 'reordering (%)'\nset y2tics\nset y2range [0:0.1<*]\nset ytics nomirror\n"
       << "set key center right\n"
       << "set title 'ARS flowlet-quality (local): balance and reordering against idle time, "
          "permutation'\n"
       << "plot '" << b << ".dat' using 2:3 with linespoints pt 7 lw 2 title 'ideal / job', "
       << "'' using 2:5 axes x1y2 with linespoints pt 5 title 'UDP probe late (%)', "
       << "'' using 2:4 axes x1y2 with linespoints pt 9 title 'TCP reordering events / segment "
          "(%)', "
       << singleLate << " axes x1y2 with lines dt 2 title 'single path: UDP late (%)'\n";
    gp.close();
    gnuplot(b + ".gp");
}

void table(const json& r, const std::string& base) {
    std::ofstream md(base + ".md");
    md << "| mode | permutation: ideal / job | all-to-all: ideal / job | degraded: goodput / "
          "max-flow | uplink load max/mean (perm.) | UDP late (perm.) | x single path | x static "
          "| TCP reordering / segment (perm.) | x single path | x static | TCP OFO / segment "
          "(perm.) | UDP late (degraded) | x single path "
          "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& m : r["permutation"]) {
        std::string mode = m["mode"];
        const json a = byMode(r["all-to-all"], mode);
        const json d = byMode(r["degraded"], mode);
        const json& ratio = m["reorder_ratio_to_single_path"];
        const json pinned = m.value("reorder_ratio_to_static", json::object());
        const bool haveD = d.contains("reorder");
        md << "| " << mode << " | " << fixed(m["ratio_to_ideal"], 2) << " | "
           << fixed(a.value("ratio_to_ideal", json()), 2) << " | "
           << fixed(d.value("ratio_to_max_flow", json()), 2) << " | "
           << fixed(m["median_load_max_over_mean"], 2) << " | " << udpLate(m["reorder"]) << " | "
           << fixed(ratio["udp_late_share"], 1) << " | "
           << fixed(pinned.value("udp_late_share", json()), 1) << " | " << tcpReorder(m["reorder"])
           << " | " << fixed(ratio["tcp_reorder_events_per_segment"], 1) << " | "
           << fixed(pinned.value("tcp_reorder_events_per_segment", json()), 1) << " | "
           << percent(m["reorder"]["tcp_ofo_per_segment"]) << " | "
           << (haveD ? udpLate(d["reorder"]) : "-") << " | "
           << (haveD ? fixed(d["reorder_ratio_to_single_path"]["udp_late_share"], 1) : "-")
           << " |\n";
    }
    if (r["sweep"].empty()) return;
    md << "\n| idle (x RTT/2) | idle (us) | permutation: ideal / job | uplink load max/mean | UDP "
          "late | x single path | x static | TCP reordering / segment | x single path | x static "
          "| TCP OFO / segment |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& s : r["sweep"]) {
        const json& ratio = s["reorder_ratio_to_single_path"];
        const json pinned = s.value("reorder_ratio_to_static", json::object());
        md << "| " << fixed(s["idle_x_half_rtt"], 2) << " | " << s["idle_us"].get<int>()
           << (s["clamped"].get<bool>() ? " (clamped)" : "") << " | "
           << fixed(s["ratio_to_ideal"], 2) << " | " << fixed(s["median_load_max_over_mean"], 2)
           << " | " << udpLate(s["reorder"]) << " | "
           << fixed(ratio.value("udp_late_share", json()), 1) << " | "
           << fixed(pinned.value("udp_late_share", json()), 1) << " | " << tcpReorder(s["reorder"])
           << " | " << fixed(ratio.value("tcp_reorder_events_per_segment", json()), 1) << " | "
           << fixed(pinned.value("tcp_reorder_events_per_segment", json()), 1) << " | "
           << percent(s["reorder"]["tcp_ofo_per_segment"]) << " |\n";
    }
}

}  // namespace

void writeReport(const json& results, const std::string& base) {
    table(results, base);
    balancePlot(results, base);
    reorderPlot(results, base);
    sweepPlot(results, base);
}

}  // namespace twinrail::bench::lb
