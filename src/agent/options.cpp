// SPDX-License-Identifier: GPL-2.0-or-later
#include "options.hpp"

#include "common/invalid_input.hpp"
#include "common/text_number.hpp"

namespace pollux::agent {
namespace {

double positiveSeconds(const std::string& option, const std::string& text, double min) {
  const auto value = parseFiniteNumber(text);
  if (!value || *value < min)
    throw InvalidInput(option + ": '" + text + "' is not a number of seconds >= " +
                       std::to_string(min).substr(0, 4));
  return *value;
}

int positiveCount(const std::string& option, const std::string& text) {
  const auto value = parseInteger(text, 1, 1 << 20);
  if (!value) throw InvalidInput(option + ": '" + text + "' is not a positive integer");
  return static_cast<int>(*value);
}

// Applies one option that takes a value.
void applyValue(Options& options, const std::string& name, const std::string& value) {
  if (name == "--rest-url") options.rest_url = value;
  else if (name == "--munge-socket") options.munge_socket = value;
  else if (name == "--cacert") options.ca_file = value;
  else if (name == "--report-interval") options.report_interval_s = positiveSeconds(name, value, 1);
  else if (name == "--grace") options.grace_s = positiveSeconds(name, value, 0);
  else if (name == "--state") options.state_file = value;
  else if (name == "--gpu-type") options.gpu_type = value;
  else if (name == "--replicas") options.replicas = positiveCount(name, value);
  else if (name == "--nproc-per-node") options.nproc_per_node = value == "auto" ? 0 : positiveCount(name, value);
  else throw InvalidInput("unknown option " + name);
}

bool takesValue(const std::string& name) {
  static const char* const kWithValue[] = {"--rest-url", "--munge-socket", "--cacert",
                                           "--report-interval", "--grace", "--state",
                                           "--gpu-type", "--replicas", "--nproc-per-node"};
  for (const char* known : kWithValue)
    if (name == known) return true;
  return false;
}

}  // namespace

ParseOutcome parseOptions(int argc, char** argv, Options& options) {
  int i = 1;
  for (; i < argc; ++i) {
    std::string argument = argv[i];
    if (argument == "--") {
      ++i;
      break;
    }
    if (argument == "-h" || argument == "--help") return ParseOutcome::kHelp;
    if (argument == "--version") return ParseOutcome::kVersion;
    if (argument == "--launch") {
      options.launch = true;
      continue;
    }
    options.agent_arguments.push_back(argument);
    if (argument == "-v" || argument == "--verbose") {
      options.verbose = true;
      continue;
    }
    std::string value;
    const auto equals = argument.find('=');
    if (equals != std::string::npos) {
      value = argument.substr(equals + 1);
      argument = argument.substr(0, equals);
    } else if (takesValue(argument)) {
      if (++i == argc) throw InvalidInput(argument + " needs a value");
      value = argv[i];
      options.agent_arguments.push_back(value);
    } else {
      throw InvalidInput(argument.rfind("-", 0) == 0 ? "unknown option " + argument
                                                     : "the training command goes after --");
    }
    applyValue(options, argument, value);
  }
  for (; i < argc; ++i) options.command.push_back(argv[i]);
  if (options.command.empty()) throw InvalidInput("no training command: pollux-agent [OPTIONS] -- COMMAND [ARGS...]");
  return ParseOutcome::kRun;
}

const char* usage() {
  return "usage: srun pollux-agent [OPTIONS] -- COMMAND [ARGS...]\n"
         "       pollux-agent --launch [OPTIONS] -- COMMAND [ARGS...]   (in the batch script)\n"
         "Runs COMMAND (the training processes) inside a Slurm job step, measures it through\n"
         "the channel named by POLLUX_AGENT_SOCKET, and reports its goodput to sched/pollux.\n"
         "  --launch             start the step itself (srun, one agent per node) and start it\n"
         "                       again inside the job when sched/pollux shrinks it in place\n"
         "  --nproc-per-node N|auto  training processes on each node, with torchrun's\n"
         "                       environment (RANK, WORLD_SIZE, MASTER_ADDR...); auto (the\n"
         "                       default): one per GPU the job holds on the node\n"
         "  --report-interval S  seconds between goodput reports (default 30, at least 1)\n"
         "  --grace S            after SIGTERM, seconds the trainer has to checkpoint (default 25)\n"
         "  --state FILE         measurements kept across restarts\n"
         "                       (default $SLURM_SUBMIT_DIR/.pollux-agent-$SLURM_JOB_ID.json)\n"
         "  --gpu-type TYPE      GPU type of the job's nodes if the plugin cannot tell\n"
         "  --replicas N         data-parallel replicas (default: nodes x GPUs per node)\n"
         "  --rest-url URL       sched/pollux's endpoint (default: from slurm.conf)\n"
         "  --munge-socket PATH  munged socket (default: AuthInfo in slurm.conf)\n"
         "  --cacert FILE        CA bundle for an https endpoint\n"
         "  -v, --verbose        log every report\n"
         "See pollux-agent(1).\n";
}

}  // namespace pollux::agent
