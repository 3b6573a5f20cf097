// SPDX-License-Identifier: GPL-2.0-or-later
// pollux-agent: `srun pollux-agent [OPTIONS] -- COMMAND` in an adaptive job's script, or
// `pollux-agent --launch [OPTIONS] -- COMMAND` to let it start (and restart) the step itself.
#include <signal.h>
#include <sys/signalfd.h>

#include <iostream>

#include "agent.hpp"
#include "client/endpoint.hpp"
#include "common/invalid_input.hpp"
#include "launcher.hpp"
#include "log.hpp"

namespace {

// Signals the agent handles through a signalfd; blocked before any thread starts.
int blockHandledSignals() {
  sigset_t handled;
  sigemptyset(&handled);
  for (const int number : {SIGTERM, SIGINT, SIGCHLD, SIGHUP, SIGUSR1, SIGUSR2})
    sigaddset(&handled, number);
  pthread_sigmask(SIG_BLOCK, &handled, nullptr);
  return signalfd(-1, &handled, SFD_CLOEXEC);
}

pollux::agent::ReporterSettings reporterSettings(const pollux::agent::Options& options) {
  pollux::client::SlurmSettings slurm;
  if (options.rest_url.empty() || options.munge_socket.empty())
    slurm = pollux::client::readSlurmSettings();
  return {options.rest_url.empty() ? slurm.rest_url : options.rest_url,
          options.munge_socket.empty() ? slurm.munge_socket : options.munge_socket,
          options.ca_file,
          options.report_interval_s,
          !options.gpu_type.empty(),
          options.verbose};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace pollux::agent;
  Options options;
  StepEnvironment step;
  NodeWorkers workers;
  ReporterSettings reporter;
  try {
    switch (parseOptions(argc, argv, options)) {
      case ParseOutcome::kHelp: std::cout << usage(); return 0;
      case ParseOutcome::kVersion: std::cout << "pollux-agent " PACKAGE_VERSION "\n"; return 0;
      case ParseOutcome::kRun: break;
    }
    step = readStepEnvironment(processEnv, options.replicas);
    if (!options.launch) workers = readNodeWorkers(processEnv, options.nproc_per_node);
    reporter = reporterSettings(options);
  } catch (const pollux::InvalidInput& error) {
    std::cerr << "pollux-agent: " << error.what() << "\n" << usage();
    return 2;
  }
  const int signal_fd = blockHandledSignals();
  try {
    if (options.launch) {
      setLogPrefix("pollux-agent[" + step.job_id + " launcher]: ");
      return Launcher(options, step.job_id, step.node_name, reporter, signal_fd).run();
    }
    setLogPrefix("pollux-agent[" + step.job_id + "." + std::to_string(step.rank) + "]: ");
    return Agent(options, step, workers, reporter, signal_fd).run();
  } catch (const std::exception& error) {
    logLine(error.what());
    return 1;
  }
}
