// scontrol wrapper: answers `scontrol show pollux [job=ID] [--json]` from sched/pollux's REST
// endpoint and hands every other command to the real scontrol unchanged.
#include <strings.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <json/json.h>

#include "client/endpoint.hpp"
#include "client/http_client.hpp"
#include "client/status_request.hpp"
#include "client/status_text.hpp"
#include "common/auth/munge_credential.hpp"
#include "common/schema/json_reader.hpp"

#ifndef REAL_SCONTROL
#error "REAL_SCONTROL must name the real scontrol (set by configure)"
#endif

namespace {

struct Query {
  std::string job_id;  // empty: everything
  bool json = false;
};

std::string scalar(const Json::Value& value) {
  if (value.isNull()) return "(null)";
  if (value.isBool()) return value.asBool() ? "yes" : "no";
  if (value.isString()) {
    const std::string text = value.asString();
    return text.find(' ') == std::string::npos && !text.empty() ? text : "\"" + text + "\"";
  }
  Json::StreamWriterBuilder writer;
  writer["indentation"] = "";
  return Json::writeString(writer, value);
}

// "snake_case" -> "SnakeCase", as scontrol names its fields.
std::string fieldName(const std::string& key) {
  std::string name;
  bool upper = true;
  for (char c : key) {
    if (c == '_') {
      upper = true;
      continue;
    }
    name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return name;
}

std::string allocationText(const Json::Value& allocation) {
  if (!allocation.isObject()) return "(none)";
  std::string text = std::to_string(allocation["gpus"].asInt()) + "x" + allocation["gpu_type"].asString() + "(";
  bool first = true;
  for (const auto& node : allocation["nodes"].getMemberNames()) {
    text += (first ? "" : ",") + node + ":" + std::to_string(allocation["nodes"][node].asInt());
    first = false;
  }
  return text + ")";
}

void printJob(const Json::Value& job) {
  std::cout << "JobId=" << job["job_id"].asString();
  for (const char* key : {"user_id", "state", "phase", "adaptive", "min_gpus", "max_gpus", "gpu_type"}) {
    if (job.isMember(key)) std::cout << " " << fieldName(key) << "=" << scalar(job[key]);
  }
  std::cout << "\n   Allocation=" << allocationText(job["allocation"]);
  for (const char* key : {"batch_size", "local_bsz", "accum_steps", "lr_scale"}) {
    if (job.isMember(key)) std::cout << " " << fieldName(key) << "=" << scalar(job[key]);
  }
  std::cout << "\n  ";
  for (const char* key :
       {"restarts", "restart_cost_s", "reported", "waiting", "status", "comment_error"}) {
    if (job.isMember(key)) std::cout << " " << fieldName(key) << "=" << scalar(job[key]);
  }
  std::cout << "\n";
  if (job.isMember("progress")) {
    std::cout << "   Progress Examples=" << scalar(job["progress"]["examples"])
              << " Epochs=" << scalar(job["progress"]["epochs"]) << "\n";
  }
  if (const std::string length = pollux::client::lengthText(job); !length.empty()) {
    std::cout << "   Length " << length << "\n";
  }
  for (const auto& type : job["models"].getMemberNames()) {
    const Json::Value& model = job["models"][type];
    std::cout << "   Model[" << type << "]";
    for (const auto& key : model.getMemberNames()) {
      std::cout << " " << fieldName(key) << "=" << scalar(model[key]);
    }
    std::cout << "\n";
  }
  std::cout << "\n";
}

void printStatus(const Json::Value& status) {
  const Json::Value& round = status["last_round"];
  std::cout << "Pollux Time=" << scalar(status["time"]) << " Interval=" << scalar(status["interval_s"])
            << " Rest=" << scalar(status["rest"]) << "\n   LastRound";
  for (const auto& key : round.getMemberNames()) {
    std::cout << " " << fieldName(key) << "=" << scalar(round[key]);
  }
  std::cout << "\n\n";
  for (const auto& node : status["nodes"]) {
    std::cout << "NodeName=" << node["name"].asString() << " GpuType=" << scalar(node["gpu_type"])
              << " Gpus=" << scalar(node["gpus"]) << " FreeGpus=" << scalar(node["free_gpus"])
              << " Usable=" << scalar(node["usable"])
              << " FreeCpus=" << scalar(node["free_cpus"]);
    if (node.isMember("free_memory_mb")) std::cout << " FreeMem=" << scalar(node["free_memory_mb"]);
    std::cout << "\n";
  }
  std::cout << "\n";
  for (const auto& job : status["jobs"]) printJob(job);
}

// `scontrol [options] show pollux ...`: the arguments after "pollux", or false.
bool isShowPollux(int argc, char** argv, int& first_argument) {
  int i = 1;
  while (i < argc && argv[i][0] == '-') ++i;
  if (i + 1 >= argc || strcasecmp(argv[i], "show") != 0 || strcasecmp(argv[i + 1], "pollux") != 0) {
    return false;
  }
  first_argument = i + 2;
  return true;
}

Query parseQuery(int argc, char** argv, int first) {
  Query query;
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      query.json = true;
    } else if (strncasecmp(arg.c_str(), "job=", 4) == 0 && arg.size() > 4 &&
               arg.find_first_not_of("0123456789", 4) == std::string::npos) {
      query.job_id = arg.substr(4);
    } else {
      throw std::invalid_argument("unknown argument '" + arg + "' (usage: scontrol show pollux [job=ID] [--json])");
    }
  }
  return query;
}

int showPollux(const Query& query) {
  const pollux::client::SlurmSettings settings = pollux::client::readSlurmSettings();
  const std::string& base = settings.rest_url;
  const std::string path = query.job_id.empty() ? "/v1/status" : "/v1/jobs/" + query.job_id;
  const std::string url = base + path;
  pollux::client::HttpResponse response;
  try {
    pollux::client::HttpClient client;
    response = pollux::client::getStatus(client, base, path, settings.munge_socket);
  } catch (const pollux::auth::CredentialError& error) {
    std::cerr << "scontrol show pollux: cannot get a MUNGE credential: " << error.what() << "\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "scontrol show pollux: cannot reach sched/pollux at " << base << ": " << error.what()
              << "\n";
    return 1;
  }
  Json::Value document;
  try {
    document = pollux::schema::JsonField::parseDocument(response.body);
  } catch (const std::exception& error) {
    std::cerr << "scontrol show pollux: bad answer from " << url << ": " << error.what() << "\n";
    return 1;
  }
  if (response.status != 200) {
    std::cerr << "scontrol show pollux: "
              << document.get("error", "HTTP " + std::to_string(response.status)).asString()
              << "\n";
    return 1;
  }
  if (query.json) {
    std::cout << document << "\n";
  } else if (query.job_id.empty()) {
    printStatus(document);
  } else {
    printJob(document);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int first = 0;
  if (!isShowPollux(argc, argv, first)) {
    argv[0] = const_cast<char*>(REAL_SCONTROL);
    execv(REAL_SCONTROL, argv);
    std::cerr << "scontrol wrapper: cannot run " << REAL_SCONTROL << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  try {
    return showPollux(parseQuery(argc, argv, first));
  } catch (const std::exception& error) {
    std::cerr << "scontrol show pollux: " << error.what() << "\n";
    return 1;
  }
}
