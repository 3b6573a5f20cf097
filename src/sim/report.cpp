// SPDX-License-Identifier: GPL-2.0-or-later
#include "report.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace pollux::sim {

namespace fs = std::filesystem;

void printSummary(std::ostream& out, const std::string& policy, const Summary& s) {
  char line[160];
  const auto row = [&](const char* label, const char* format, auto value) {
    std::snprintf(line, sizeof line, format, value);
    out << label << line << "\n";
  };
  out << "policy            " << policy << "\n";
  row("jobs              ", "%zu", s.jobs);
  row("avg JCT           ", "%.0f s", s.avg_jct_s);
  row("median JCT        ", "%.0f s", s.median_jct_s);
  row("p99 JCT           ", "%.0f s", s.p99_jct_s);
  row("makespan          ", "%.0f s", s.makespan_s);
  row("restarts per job  ", "%.2f", s.restarts_per_job);
  row("most restarts     ", "%d", s.max_restarts);
  row("restart and stall time / JCT: avg ", "%.4f", s.avg_paused_share);
  row("restart and stall time / JCT: max ", "%.4f", s.max_paused_share);
  row("allocations changed and changed back at the next round ", "%d", s.flip_backs);
  row("GPU-hours per job ", "%.2f", s.gpu_hours_per_job);
  row("finish-time fairness (JCT / isolated run time): avg ", "%.2f", s.avg_ftf);
  row("finish-time fairness (JCT / isolated run time): max ", "%.2f", s.max_ftf);
  row("Themis finish-time fairness (JCT / alone on a 1/N share): p99 ", "%.2f", s.themis_ftf_p99);
  row("Themis finish-time fairness (JCT / alone on a 1/N share): max ", "%.2f", s.themis_ftf_max);
  std::snprintf(line, sizeof line, "%zu rounds, median %.2f ms, p95 %.2f ms, max %.2f ms",
                s.rounds, s.round_ms_median, s.round_ms_p95, s.round_ms_max);
  out << "policy rounds     " << line << "\n";
}

Json::Value summaryJson(const std::string& policy, const Summary& s) {
  Json::Value out;
  out["policy"] = policy;
  out["jobs"] = Json::UInt64(s.jobs);
  out["avg_jct_s"] = s.avg_jct_s;
  out["median_jct_s"] = s.median_jct_s;
  out["p99_jct_s"] = s.p99_jct_s;
  out["makespan_s"] = s.makespan_s;
  out["restarts_per_job"] = s.restarts_per_job;
  out["max_restarts"] = s.max_restarts;
  out["paused_share"]["avg"] = s.avg_paused_share;
  out["paused_share"]["max"] = s.max_paused_share;
  out["flip_backs"] = s.flip_backs;
  out["gpu_hours_per_job"] = s.gpu_hours_per_job;
  out["ftf"]["avg"] = s.avg_ftf;
  out["ftf"]["max"] = s.max_ftf;
  out["themis_ftf"]["p99"] = s.themis_ftf_p99;
  out["themis_ftf"]["max"] = s.themis_ftf_max;
  out["rounds"] = Json::UInt64(s.rounds);
  out["round_ms"]["median"] = s.round_ms_median;
  out["round_ms"]["p95"] = s.round_ms_p95;
  out["round_ms"]["max"] = s.round_ms_max;
  return out;
}

void writeTimeline(const std::string& path, const std::vector<TimelineRow>& timeline) {
  std::ofstream out(path);
  out << "time,job,gpu_type,gpus,batch_size,seconds\n";
  for (const auto& row : timeline) {
    out << row.time << "," << row.job << "," << row.gpu_type << "," << row.gpus << ","
        << row.batch_size << "," << row.seconds << "\n";
  }
  if (!out.flush()) throw std::runtime_error(path + ": cannot write the timeline");
}

void writeJobs(const std::string& path, const std::vector<JobResult>& jobs) {
  std::ofstream out(path);
  out << "name,application,submit_s,completion_s,jct_s,restarts,gpu_hours,isolated_s,fair_share_s,"
         "paused_s\n";
  out.precision(10);  // millisecond resolution for a year of simulated time
  for (const auto& job : jobs) {
    out << job.name << "," << job.application << "," << job.submit_time << ","
        << job.completion_time << "," << job.completion_time - job.submit_time << ","
        << job.restarts << "," << job.gpu_seconds / 3600 << "," << job.isolated_s << ","
        << job.fair_share_s << "," << job.paused_s << "\n";
  }
  if (!out.flush()) throw std::runtime_error(path + ": cannot write the job results");
}

void requireWritable(const std::string& path) {
  std::ofstream probe(path, std::ios::app);  // app: an existing file keeps its content
  if (!probe) throw std::runtime_error(path + ": cannot write there");
}

void requireGnuplot() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && access((dir + "/gnuplot").c_str(), X_OK) == 0) return;
  }
  throw std::runtime_error("--plot needs gnuplot, which is not on PATH (Debian: apt-get install gnuplot-nox)");
}

namespace {

// A single-quoted gnuplot string literal.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace

void plotTimeline(const std::string& png_path, const SimulationResult& result) {
  std::map<std::string, size_t> row_of_job;
  for (const auto& job : result.jobs) row_of_job.emplace(job.name, row_of_job.size());
  char dir_template[] = "/tmp/pollux-sim-plot-XXXXXX";
  if (!mkdtemp(dir_template)) throw std::runtime_error("cannot create a temporary directory");
  const fs::path dir = dir_template;
  {
    std::ofstream data(dir / "timeline.dat");
    for (const auto& row : result.timeline) {  // x y dx dy gpus: one bar per job and round
      data << row.time / 3600 << " " << row_of_job.at(row.job) << " " << row.seconds / 3600 << " 0 "
           << row.gpus << "\n";
    }
    std::ofstream script(dir / "plot.gp");
    script << "set terminal pngcairo size 1400,900\n"
           << "set output " << quoted(png_path) << "\n"
           << "set title 'GPUs per job over time'\n"
           << "set xlabel 'time (hours)'\nset ylabel 'job (submit order)'\n"
           << "set cblabel 'GPUs'\nset palette rgbformulae 33,13,10\nunset key\n"
           << "plot " << quoted((dir / "timeline.dat").string())
           << " using 1:2:3:4:5 with vectors nohead lw 3 lc palette\n";
  }
  const std::string command = "gnuplot " + (dir / "plot.gp").string() + " 1>&2";
  const int status = std::system(command.c_str());
  fs::remove_all(dir);
  if (status != 0) throw std::runtime_error("gnuplot failed to draw " + png_path);
}

}  // namespace pollux::sim
