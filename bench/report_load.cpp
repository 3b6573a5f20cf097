// SPDX-License-Identifier: GPL-2.0-or-later
// Load generator for the plugin's report endpoint (bench/report-ingestion runs it).
//
//   report_load --url http://127.0.0.1:PORT --job ID [--socket MUNGE_SOCKET]
//               [--count N] [--connections K] [--duration S] [--encode-threads T]
//               [--warmup W] [--decode-probe D] [--rate R] [--allow STATUS,...]
//
// 1. Pre-encodes N (+W) MUNGE credentials, each with the payload
//    "pollux-report/1 <ID> <sha256 of the body>", with T threads (untimed; the time is printed).
//    munged accepts each credential once, so every request needs its own.
// 2. Optionally (--decode-probe D > 0) decodes D extra credentials straight through munged with
//    T threads: the ceiling munged alone puts on the plugin, which decodes once per report.
// 3. Sends W warm-up reports, then N timed reports as POST /v1/jobs/ID/report over K keep-alive
//    connections (libcurl multi interface, one request in flight per connection), stopping
//    early after S seconds if --duration is given.
// With --rate R the timed requests are paced to R per second over all connections (a flood of
// a given size rather than as fast as the server answers).
// Prints requests/s, latency p50/p95/p99/max and the count of each HTTP status. Exits 1 unless
// every timed request got 200 or a status listed by --allow (and 2 on usage or setup errors).
//
//   report_load --url URL --agents FILE [--socket PATH] [--interval S] [--connections K]
//               [--duration S] [--allow STATUS,...]
//
// Agents mode (bench/cluster-scale): one agent's cadence per job instead of a flood. FILE
// lists the running adaptive jobs, one id a line, and is re-read every half second (replace
// it by a rename). A job reports when it first appears and then every S seconds (default 30,
// pollux-agent's --report-interval) while listed, each report with a credential encoded when
// it is sent (munged refuses a replay). Runs until --duration or SIGTERM/SIGINT, then prints
// as above (requests, latency, statuses) and the number of jobs that reported.
#include <curl/curl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>
#include <munge.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <json/json.h>

#include "munge/munge_credential.hpp"
#include "common/schema/goodput_report.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string url;
  std::string job;
  std::string socket;
  long count = 20000;
  int connections = 8;
  double duration_s = 0;  // 0 = no limit: send all N
  int encode_threads = 4;
  long warmup = 200;
  long decode_probe = 0;
  double rate = 0;                 // timed requests per second; 0 = as fast as answered
  std::vector<long> allowed{200};  // statuses that count as success
  std::vector<std::pair<std::string, int>> watch;  // --watch NAME=PID: CPU used while timed
  std::string agents;            // agents mode: the file listing the running adaptive jobs
  double interval_s = 30;        // agents mode: seconds between one job's reports
};

[[noreturn]] void usage(const char* message) {
  std::fprintf(stderr, "report_load: %s\n", message);
  std::fprintf(stderr,
               "usage: report_load --url URL --job ID [--socket PATH] [--count N] "
               "[--connections K] [--duration S] [--encode-threads T] [--warmup W] "
               "[--decode-probe D] [--rate R] [--allow STATUS,...] [--watch NAME=PID ...]\n"
               "       report_load --url URL --agents FILE [--socket PATH] [--interval S] "
               "[--connections K] [--duration S] [--allow STATUS,...]\n");
  std::exit(2);
}

// "200,429" -> {200, 429}
std::vector<long> statusList(const std::string& text) {
  std::vector<long> statuses{200};
  size_t start = 0;
  while (start < text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    char* end = nullptr;
    const std::string item = text.substr(start, comma - start);
    const long status = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || status < 100 || status > 599) usage("bad --allow list");
    statuses.push_back(status);
    start = comma + 1;
  }
  return statuses;
}

Options parseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
    const char* value = argv[++i];
    char* end = nullptr;
    auto number = [&](double low) {
      const double v = std::strtod(value, &end);
      if (end == value || *end != '\0' || v < low) usage(("bad value for " + arg).c_str());
      return v;
    };
    if (arg == "--url") o.url = value;
    else if (arg == "--job") o.job = value;
    else if (arg == "--socket") o.socket = value;
    else if (arg == "--count") o.count = static_cast<long>(number(1));
    else if (arg == "--connections") o.connections = static_cast<int>(number(1));
    else if (arg == "--duration") o.duration_s = number(0);
    else if (arg == "--encode-threads") o.encode_threads = static_cast<int>(number(1));
    else if (arg == "--warmup") o.warmup = static_cast<long>(number(0));
    else if (arg == "--decode-probe") o.decode_probe = static_cast<long>(number(0));
    else if (arg == "--rate") o.rate = number(0);
    else if (arg == "--allow") o.allowed = statusList(value);
    else if (arg == "--agents") o.agents = value;
    else if (arg == "--interval") o.interval_s = number(0.1);
    else if (arg == "--watch") {
      const std::string spec = value;
      const auto eq = spec.find('=');
      if (eq == std::string::npos || eq == 0) usage("--watch takes NAME=PID");
      o.watch.emplace_back(spec.substr(0, eq), std::atoi(spec.c_str() + eq + 1));
    }
    else usage(("unknown option " + arg).c_str());
  }
  if (o.url.empty() || (o.job.empty() && o.agents.empty())) {
    usage("--url and --job (or --agents) are required");
  }
  while (!o.url.empty() && o.url.back() == '/') o.url.pop_back();
  return o;
}

// A plausible report from the job's rank-0 agent (one a100 fitted, running on 2 GPUs).
std::string reportBody(const std::string& job) {
  pollux::schema::GoodputReport r;
  r.job_id = job;
  r.gpu_type = "a100";
  r.placement = {1, 2};
  r.perf_params["a100"] = {0.05, 0.001, 0.2, 0.01, 0.01, 0.001, 1.5};
  r.grad = {0.5, 2.0};
  r.limits = {128, 4096, 32, 512, true};
  r.progress = {123456.0, 3.5};
  r.restart_cost_s = 30.0;
  Json::StreamWriterBuilder writer;
  writer["indentation"] = "";
  const std::string body = Json::writeString(writer, pollux::schema::reportToJson(r));
  pollux::schema::parseGoodputReport(body);  // what the plugin will do; throws if invalid
  return body;
}

std::vector<std::string> encodeMany(const std::string& payload, const std::string& socket,
                                    long n, int threads) {
  std::vector<std::string> out(static_cast<size_t>(n));
  std::atomic<long> next{0};
  std::atomic<bool> failed{false};
  std::string error;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      try {
        for (long i; !failed && (i = next++) < n;) {
          out[static_cast<size_t>(i)] = pollux::auth::encodeCredential(payload, socket);
        }
      } catch (const std::exception& e) {
        if (!failed.exchange(true)) error = e.what();
      }
    });
  }
  for (auto& t : pool) t.join();
  if (failed) throw std::runtime_error("encoding credentials: " + error);
  return out;
}

// Decodes every credential with `threads` threads; returns decodes per second.
double decodeProbe(const std::vector<std::string>& creds, const std::string& socket, int threads) {
  std::atomic<size_t> next{0};
  std::atomic<long> errors{0};
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i; (i = next++) < creds.size();) {
        try {
          pollux::auth::decodeCredential(creds[i], socket);
        } catch (const std::exception&) {
          ++errors;
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  if (errors) std::fprintf(stderr, "report_load: %ld probe decodes failed\n", errors.load());
  return static_cast<double>(creds.size()) / s;
}

// CPU seconds (user + system) a process has used so far; -1 if unreadable.
double processCpuSeconds(int pid) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!f) return -1;
  char buf[4096];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');  // the command name may contain spaces
  if (!p) return -1;
  unsigned long utime = 0, stime = 0;
  // after ") ": state(3) ... utime is field 14, stime 15
  if (std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) {
    return -1;
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double selfCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto sec = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return sec(usage.ru_utime) + sec(usage.ru_stime);
}

struct Slot {
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  Clock::time_point sent;
  std::string reply;
  bool timed = false;
};

size_t collect(char* data, size_t size, size_t n, void* slot) {
  auto* s = static_cast<Slot*>(slot);
  if (s->reply.size() < 4096) s->reply.append(data, size * n);
  return size * n;
}

struct RunResult {
  std::vector<double> latency_ms;  // timed requests only
  std::map<long, long> statuses;   // HTTP status (0 = transport error) -> count
  double seconds = 0;
  std::string sample_reply, sample_error;
  std::vector<double> watched_cpu_s;  // per --watch process, during the timed part
  double self_cpu_s = 0;
};

// Sends creds[0, warmup) untimed, then the rest timed, keeping one request per connection.
RunResult run(const Options& o, const std::string& body, const std::vector<std::string>& creds) {
  const std::string url = o.url + "/v1/jobs/" + o.job + "/report";
  CURLM* multi = curl_multi_init();
  curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(o.connections));
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, static_cast<long>(o.connections));
  std::vector<Slot> slots(static_cast<size_t>(o.connections));
  RunResult result;
  result.latency_ms.reserve(creds.size());
  size_t next = 0;
  const size_t warmup = static_cast<size_t>(std::min<long>(o.warmup, static_cast<long>(creds.size())));
  Clock::time_point timed_start{}, deadline = Clock::time_point::max();
  bool timing = false;
  int in_flight = 0;
  std::vector<Slot*> idle;  // connections waiting for the pace to allow another request

  // With --rate, a timed request may leave only when fewer than rate x elapsed have left.
  auto paceAllows = [&] {
    if (!timing || o.rate <= 0) return true;
    const double elapsed = std::chrono::duration<double>(Clock::now() - timed_start).count();
    return static_cast<double>(next - warmup) < o.rate * elapsed;
  };
  auto launch = [&](Slot& s) {
    if (next >= creds.size()) return false;
    if (timing && Clock::now() >= deadline) return false;
    if (!timing && next >= warmup) return false;  // wait for warm-up to drain
    if (!paceAllows()) {
      idle.push_back(&s);
      return false;
    }
    if (s.headers) curl_slist_free_all(s.headers);
    s.headers = curl_slist_append(nullptr, "Content-Type: application/json");
    s.headers = curl_slist_append(s.headers, "Expect:");
    s.headers = curl_slist_append(s.headers, ("X-Munge-Cred: " + creds[next]).c_str());
    ++next;
    curl_easy_setopt(s.easy, CURLOPT_HTTPHEADER, s.headers);
    s.reply.clear();
    s.timed = timing;
    s.sent = Clock::now();
    curl_multi_add_handle(multi, s.easy);
    ++in_flight;
    return true;
  };

  for (auto& s : slots) {
    s.easy = curl_easy_init();
    curl_easy_setopt(s.easy, CURLOPT_URL, url.c_str());
    curl_easy_setopt(s.easy, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(s.easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    curl_easy_setopt(s.easy, CURLOPT_WRITEFUNCTION, &collect);
    curl_easy_setopt(s.easy, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(s.easy, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(s.easy, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(s.easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(s.easy, CURLOPT_PRIVATE, &s);
  }

  std::vector<double> cpu_before(o.watch.size());
  double self_before = 0;
  auto startTiming = [&] {
    for (size_t i = 0; i < o.watch.size(); ++i) cpu_before[i] = processCpuSeconds(o.watch[i].second);
    self_before = selfCpuSeconds();
    timing = true;
    timed_start = Clock::now();
    if (o.duration_s > 0) {
      deadline = timed_start + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(o.duration_s));
    }
  };
  if (warmup == 0) startTiming();
  for (auto& s : slots) launch(s);

  auto launchIdle = [&] {
    std::vector<Slot*> waiting;
    waiting.swap(idle);
    for (Slot* s : waiting) launch(*s);
  };
  while (in_flight > 0 || !idle.empty()) {
    launchIdle();
    int running = 0;
    curl_multi_perform(multi, &running);
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      const auto done = Clock::now();
      Slot* s = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &s);
      long status = 0;
      if (msg->data.result == CURLE_OK) {
        curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
      } else if (result.sample_error.empty()) {
        result.sample_error = curl_easy_strerror(msg->data.result);
      }
      curl_multi_remove_handle(multi, s->easy);
      --in_flight;
      if (s->timed) {
        result.latency_ms.push_back(std::chrono::duration<double, std::milli>(done - s->sent).count());
        ++result.statuses[status];
        if (status == 200 && result.sample_reply.empty()) result.sample_reply = s->reply;
      } else if (status != 200 && result.sample_error.empty()) {
        result.sample_error = "warm-up got HTTP " + std::to_string(status) + ": " + s->reply;
      }
      if (status != 200 && result.sample_error.empty()) {
        result.sample_error = "HTTP " + std::to_string(status) + ": " + s->reply;
      }
      launch(*s);
    }
    if (!timing && in_flight == 0 && next >= warmup) {
      startTiming();
      for (auto& s : slots) launch(s);
    }
    curl_multi_poll(multi, nullptr, 0, idle.empty() ? 100 : 2, nullptr);
  }
  if (timing) {
    result.seconds = std::chrono::duration<double>(Clock::now() - timed_start).count();
    result.self_cpu_s = selfCpuSeconds() - self_before;
    for (size_t i = 0; i < o.watch.size(); ++i) {
      result.watched_cpu_s.push_back(processCpuSeconds(o.watch[i].second) - cpu_before[i]);
    }
  }
  for (auto& s : slots) {
    curl_easy_cleanup(s.easy);
    curl_slist_free_all(s.headers);
  }
  curl_multi_cleanup(multi);
  return result;
}

volatile sig_atomic_t stop_agents = 0;
void stopAgents(int) { stop_agents = 1; }

// The job ids listed in `path`, one a line (an unreadable file lists none).
std::set<std::string> listedJobs(const std::string& path) {
  std::set<std::string> jobs;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.find_first_not_of("0123456789") == std::string::npos) {
      jobs.insert(line);
    }
  }
  return jobs;
}

// Agents mode: every listed job reports when it appears and then every interval.
RunResult runAgents(const Options& o, std::set<std::string>& reported_jobs) {
  signal(SIGTERM, stopAgents);
  signal(SIGINT, stopAgents);
  CURLM* multi = curl_multi_init();
  curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(o.connections));
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, static_cast<long>(o.connections));
  std::vector<Slot> slots(static_cast<size_t>(o.connections));
  std::vector<Slot*> idle;
  std::vector<std::string> slot_body(slots.size()), slot_url(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    Slot& s = slots[i];
    s.easy = curl_easy_init();
    curl_easy_setopt(s.easy, CURLOPT_WRITEFUNCTION, &collect);
    curl_easy_setopt(s.easy, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(s.easy, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(s.easy, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(s.easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(s.easy, CURLOPT_PRIVATE, &s);
    idle.push_back(&s);
  }
  struct Job {
    std::string body, payload;
    Clock::time_point due;
  };
  std::map<std::string, Job> jobs;  // listed now
  std::deque<std::string> queue;    // due to report, in order
  RunResult result;
  const auto start = Clock::now();
  const auto every = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(o.interval_s));
  auto next_read = start;
  int in_flight = 0;
  auto launch = [&](Slot& s, const std::string& id) {
    const size_t i = static_cast<size_t>(&s - slots.data());
    const Job& job = jobs.at(id);
    slot_body[i] = job.body;
    slot_url[i] = o.url + "/v1/jobs/" + id + "/report";
    if (s.headers) curl_slist_free_all(s.headers);
    s.headers = curl_slist_append(nullptr, "Content-Type: application/json");
    s.headers = curl_slist_append(s.headers, "Expect:");
    const std::string cred = pollux::auth::encodeCredential(job.payload, o.socket);
    s.headers = curl_slist_append(s.headers, ("X-Munge-Cred: " + cred).c_str());
    curl_easy_setopt(s.easy, CURLOPT_URL, slot_url[i].c_str());
    curl_easy_setopt(s.easy, CURLOPT_POSTFIELDS, slot_body[i].data());
    curl_easy_setopt(s.easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(slot_body[i].size()));
    curl_easy_setopt(s.easy, CURLOPT_HTTPHEADER, s.headers);
    s.reply.clear();
    s.timed = true;
    s.sent = Clock::now();
    curl_multi_add_handle(multi, s.easy);
    ++in_flight;
    reported_jobs.insert(id);
  };
  const auto deadline = o.duration_s > 0
                            ? start + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(o.duration_s))
                            : Clock::time_point::max();
  while (!stop_agents && Clock::now() < deadline) {
    const auto now = Clock::now();
    if (now >= next_read) {
      next_read = now + std::chrono::milliseconds(500);
      const std::set<std::string> listed = listedJobs(o.agents);
      for (auto it = jobs.begin(); it != jobs.end();) {
        it = listed.count(it->first) ? std::next(it) : jobs.erase(it);
      }
      for (const auto& id : listed) {
        if (jobs.count(id)) continue;
        Job job;
        job.body = reportBody(id);
        job.payload = pollux::auth::reportPayload(id, job.body);
        job.due = now;
        jobs.emplace(id, std::move(job));
      }
      for (auto& [id, job] : jobs) {
        if (job.due <= now) {
          queue.push_back(id);
          job.due = now + every;
        }
      }
    }
    while (!idle.empty() && !queue.empty()) {
      const std::string id = queue.front();
      queue.pop_front();
      if (!jobs.count(id)) continue;  // no longer listed
      Slot* s = idle.back();
      idle.pop_back();
      launch(*s, id);
    }
    int running = 0;
    curl_multi_perform(multi, &running);
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      Slot* s = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &s);
      long status = 0;
      if (msg->data.result == CURLE_OK) {
        curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
      } else if (result.sample_error.empty()) {
        result.sample_error = curl_easy_strerror(msg->data.result);
      }
      curl_multi_remove_handle(multi, s->easy);
      --in_flight;
      result.latency_ms.push_back(
          std::chrono::duration<double, std::milli>(Clock::now() - s->sent).count());
      ++result.statuses[status];
      if (status == 200 && result.sample_reply.empty()) result.sample_reply = s->reply;
      if (status != 200 && result.sample_error.empty()) {
        result.sample_error = "HTTP " + std::to_string(status) + ": " + s->reply;
      }
      idle.push_back(s);
    }
    curl_multi_poll(multi, nullptr, 0, 50, nullptr);
  }
  // Let the reports in flight finish (up to their timeout).
  while (in_flight > 0) {
    int running = 0;
    curl_multi_perform(multi, &running);
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      Slot* s = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &s);
      long status = 0;
      if (msg->data.result == CURLE_OK) curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
      curl_multi_remove_handle(multi, s->easy);
      --in_flight;
      result.latency_ms.push_back(
          std::chrono::duration<double, std::milli>(Clock::now() - s->sent).count());
      ++result.statuses[status];
    }
    curl_multi_poll(multi, nullptr, 0, 50, nullptr);
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& s : slots) {
    curl_easy_cleanup(s.easy);
    curl_slist_free_all(s.headers);
  }
  curl_multi_cleanup(multi);
  return result;
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * sorted.size()));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parseOptions(argc, argv);
  try {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (!o.agents.empty()) {
      std::set<std::string> reported;
      const RunResult r = runAgents(o, reported);
      std::vector<double> sorted = r.latency_ms;
      std::sort(sorted.begin(), sorted.end());
      std::printf("agents: %zu jobs reported every %.1f s over %.0f s\n", reported.size(),
                  o.interval_s, r.seconds);
      std::printf("  %-14s %12zu\n", "requests", sorted.size());
      std::printf("  %-14s %12.3f\n", "p50 ms", percentile(sorted, 50));
      std::printf("  %-14s %12.3f\n", "p95 ms", percentile(sorted, 95));
      std::printf("  %-14s %12.3f\n", "p99 ms", percentile(sorted, 99));
      std::printf("  %-14s %12.3f\n", "max ms", sorted.empty() ? 0.0 : sorted.back());
      bool all_ok = true;
      for (const auto& [status, n] : r.statuses) {
        std::printf("  HTTP %-9ld %12ld\n", status, n);
        if (std::find(o.allowed.begin(), o.allowed.end(), status) == o.allowed.end()) all_ok = false;
      }
      if (!r.sample_error.empty()) std::printf("  first error: %s\n", r.sample_error.c_str());
      curl_global_cleanup();
      return all_ok ? 0 : 1;
    }
    const std::string body = reportBody(o.job);
    const std::string payload = pollux::auth::reportPayload(o.job, body);

    const long total = o.warmup + o.count;
    auto start = Clock::now();
    const std::vector<std::string> creds = encodeMany(payload, o.socket, total, o.encode_threads);
    const double encode_s = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("encode:  %ld credentials in %.2f s (%.0f/s, %d client threads; untimed)\n", total,
                encode_s, total / encode_s, o.encode_threads);
    std::fflush(stdout);  // a caller may wait for this line before it starts measuring

    if (o.decode_probe > 0) {
      const auto probe = encodeMany(payload, o.socket, o.decode_probe, o.encode_threads);
      const int thread_counts[] = {1, 2, 4, 8};
      const size_t share = probe.size() / 4;
      for (size_t k = 0; k < 4; ++k) {
        const std::vector<std::string> part(probe.begin() + share * k, probe.begin() + share * (k + 1));
        std::printf("munged decode alone: %zu decodes with %d client threads: %.0f/s\n",
                    part.size(), thread_counts[k], decodeProbe(part, o.socket, thread_counts[k]));
      }
    }

    const RunResult r = run(o, body, creds);
    std::vector<double> sorted = r.latency_ms;
    std::sort(sorted.begin(), sorted.end());
    const long sent = static_cast<long>(sorted.size());
    std::printf("\nreport ingestion: POST %s/v1/jobs/%s/report, body %zu bytes, %d connections\n",
                o.url.c_str(), o.job.c_str(), body.size(), o.connections);
    std::printf("  %-14s %12s\n", "metric", "value");
    std::printf("  %-14s %12ld\n", "requests", sent);
    std::printf("  %-14s %12.2f\n", "seconds", r.seconds);
    std::printf("  %-14s %12.0f\n", "requests/s", r.seconds > 0 ? sent / r.seconds : 0.0);
    std::printf("  %-14s %12.3f\n", "p50 ms", percentile(sorted, 50));
    std::printf("  %-14s %12.3f\n", "p95 ms", percentile(sorted, 95));
    std::printf("  %-14s %12.3f\n", "p99 ms", percentile(sorted, 99));
    std::printf("  %-14s %12.3f\n", "max ms", sorted.empty() ? 0.0 : sorted.back());
    bool all_ok = sent > 0;
    for (const auto& [status, n] : r.statuses) {
      std::printf("  HTTP %-9ld %12ld\n", status, n);
      if (std::find(o.allowed.begin(), o.allowed.end(), status) == o.allowed.end()) all_ok = false;
    }
    if (sent > 0) {
      std::printf("  CPU while timed (ms of CPU; us per request; share of one core):\n");
      auto row = [&](const std::string& name, double cpu) {
        std::printf("    %-12s %9.0f ms %8.1f us/req %6.0f %%\n", name.c_str(), cpu * 1e3,
                    cpu * 1e6 / sent, r.seconds > 0 ? 100 * cpu / r.seconds : 0.0);
      };
      for (size_t i = 0; i < o.watch.size(); ++i) row(o.watch[i].first, r.watched_cpu_s[i]);
      row("report_load", r.self_cpu_s);
    }
    if (!r.sample_reply.empty()) std::printf("  sample reply: %s", r.sample_reply.c_str());
    if (!r.sample_error.empty()) std::printf("  first error: %s\n", r.sample_error.c_str());
    curl_global_cleanup();
    return all_ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "report_load: %s\n", e.what());
    return 2;
  }
}
