// SPDX-License-Identifier: GPL-2.0-or-later
#include "site_policy.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>
#include <utility>

namespace pollux::service {

namespace {

bool startsWith(const std::string& text, const char* prefix) {
  return text.rfind(prefix, 0) == 0;
}

// Reasons of squeue for which Slurm refuses a job, named as in job_state_reason_string().
const std::set<std::string>& refusalReasons() {
  // Not ReqNodeNotAvail or NodeDown: Slurm gives them for nodes still busy or completing too,
  // and Pollux places on nodes that are up and outside others' reservations only.
  static const std::set<std::string> reasons = {
      "BadConstraints", "Reservation", "Licenses", "Dependency", "DependencyNeverSatisfied",
      "JobHeldUser", "JobHeldAdmin", "PartitionDown", "PartitionInactive", "InvalidAccount",
      "InvalidQOS", "AccountNotAllowed", "QOSNotAllowed", "ReservationDeleted",
      "ReservationInvalid", "InactiveLimit", "AccountingPolicy"};
  return reasons;
}

// A --constraint expression evaluated on one node's features (recursive descent).
class FeatureExpression {
 public:
  FeatureExpression(const std::string& text, const std::vector<std::string>& features)
      : text_(text), features_(features.begin(), features.end()) {}

  // nullopt where the expression is not understood.
  std::optional<bool> evaluate() {
    const auto value = anyOf();
    skipSpaces();
    if (!value || at_ != text_.size()) return std::nullopt;
    return value;
  }

 private:
  std::optional<bool> anyOf() {
    auto value = allOf();
    while (value && take('|')) {
      const auto next = allOf();
      if (!next) return std::nullopt;
      value = *value || *next;
    }
    return value;
  }

  std::optional<bool> allOf() {
    auto value = term();
    while (value && (take('&') || take(','))) {
      const auto next = term();
      if (!next) return std::nullopt;
      value = *value && *next;
    }
    return value;
  }

  std::optional<bool> term() {
    if (take('!')) {
      const auto value = term();
      return value ? std::optional<bool>(!*value) : std::nullopt;
    }
    for (const auto& [open, close] : {std::pair{'(', ')'}, std::pair{'[', ']'}}) {
      if (!take(open)) continue;
      const auto value = anyOf();
      if (!value || !take(close)) return std::nullopt;
      return withCount(*value);
    }
    const std::string name = word();
    if (name.empty()) return std::nullopt;
    return withCount(features_.count(name) > 0);
  }

  // A count (name*N) says how many nodes need the feature; each node is judged alone.
  std::optional<bool> withCount(bool value) {
    if (!take('*')) return value;
    const std::size_t digits = at_;
    while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
    return at_ > digits ? std::optional<bool>(value) : std::nullopt;
  }

  std::string word() {
    skipSpaces();
    const std::size_t start = at_;
    while (at_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[at_])) &&
           std::string("&|,!()[]*").find(text_[at_]) == std::string::npos) {
      ++at_;
    }
    return text_.substr(start, at_ - start);
  }

  bool take(char symbol) {
    skipSpaces();
    if (at_ >= text_.size() || text_[at_] != symbol) return false;
    ++at_;
    return true;
  }

  void skipSpaces() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }

  const std::string& text_;
  std::set<std::string> features_;
  std::size_t at_ = 0;
};

std::set<std::string> namesIn(const std::string& commas) {
  std::set<std::string> names;
  std::size_t start = 0;
  while (start <= commas.size()) {
    const std::size_t end = std::min(commas.find(',', start), commas.size());
    if (end > start) names.insert(commas.substr(start, end - start));
    start = end + 1;
  }
  return names;
}

bool overlaps(const SlurmReservation& reservation, double from, double until) {
  return reservation.start_time < until && reservation.end_time > from;
}

// The nodes of the job's own reservations that are active now; none if it asked for none.
std::optional<policy::NodeSet> reservationNodes(const SlurmJob& job, double now,
                                                const std::vector<SlurmReservation>& reservations) {
  if (job.reservation.empty()) return std::nullopt;
  const auto names = namesIn(job.reservation);
  policy::NodeSet nodes;
  for (const auto& reservation : reservations) {
    if (names.count(reservation.name) && overlaps(reservation, now, now + 1)) {
      nodes.insert(reservation.nodes.begin(), reservation.nodes.end());
    }
  }
  return nodes;
}

// The nodes of other reservations active between now and `until`.
policy::NodeSet reservedForOthers(const SlurmJob& job, double now, double until,
                                  const std::vector<SlurmReservation>& reservations) {
  const auto own = namesIn(job.reservation);
  policy::NodeSet nodes;
  for (const auto& reservation : reservations) {
    if (!own.count(reservation.name) && overlaps(reservation, now, until)) {
      nodes.insert(reservation.nodes.begin(), reservation.nodes.end());
    }
  }
  return nodes;
}

bool inPartitions(const std::vector<std::string>& names, const std::string& node,
                  const std::map<std::string, policy::NodeSet>& partitions) {
  bool listed = false;
  for (const auto& name : names) {
    const auto members = partitions.find(name);
    if (members == partitions.end()) continue;
    listed = true;
    if (members->second.count(node)) return true;
  }
  return !listed;  // partitions Slurm did not list restrict nothing
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// One license of a request, "name", "name:N" or "name*N"; a count of 0 where it is malformed.
std::pair<std::string, int> licenseOf(const std::string& token) {
  const std::size_t mark = token.find_first_of(":*");
  if (mark == std::string::npos) return {token, 1};
  const std::string digits = token.substr(mark + 1);
  const bool number = !digits.empty() && digits.size() < 10 &&
                      std::all_of(digits.begin(), digits.end(),
                                  [](unsigned char c) { return std::isdigit(c) != 0; });
  return {token.substr(0, mark), number ? std::stoi(digits) : 0};
}

// A --licenses request as its licenses, and whether any one of them is enough ("a|b").
std::vector<std::pair<std::string, int>> licensesOf(const std::string& request, bool& any_one) {
  any_one = request.find('|') != std::string::npos;
  std::vector<std::pair<std::string, int>> licenses;
  std::size_t start = 0;
  while (start <= request.size()) {
    const std::size_t end = std::min(request.find_first_of(",;|", start), request.size());
    if (end > start) licenses.push_back(licenseOf(request.substr(start, end - start)));
    start = end + 1;
  }
  return licenses;
}

}  // namespace

bool heldByPollux(const SlurmJob& job) { return job.eligible_time >= kPolluxHoldTime; }

bool heldForBadPlacement(const SlurmJob& job) {
  return job.held && job.state_reason == "BadConstraints";
}

std::string whyCannotStart(const SlurmJob& job, double now, double user_begin_time) {
  if (job.held && !heldForBadPlacement(job)) {
    return job.state_reason.empty() || !startsWith(job.state_reason, "JobHeld") ? "JobHeldAdmin"
                                                                                 : job.state_reason;
  }
  if (!job.dependency.empty()) return "Dependency";
  if (user_begin_time > now) return "BeginTime";
  return "";
}

bool refusesPlacement(const std::string& reason) {
  return refusalReasons().count(reason) > 0 || startsWith(reason, "QOS") ||
         startsWith(reason, "Assoc") || startsWith(reason, "Partition") ||
         startsWith(reason, "Max");
}

bool refusalDependsOnSize(const std::string& reason) {
  if (!(startsWith(reason, "QOS") || startsWith(reason, "Assoc") ||
        startsWith(reason, "Partition") || startsWith(reason, "Max"))) {
    return false;
  }
  for (const char* resource : {"GRES", "Cpu", "CPU", "Mem", "Node", "TRES", "Billing"}) {
    if (reason.find(resource) != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> splitFeatures(const std::string& list) {
  const auto names = namesIn(list);
  return {names.begin(), names.end()};
}

bool featuresMatch(const std::string& expression, const std::vector<std::string>& features) {
  if (expression.empty()) return true;
  // An expression Slurm took but this reader does not is left to Slurm (its Reason then says).
  return FeatureExpression(expression, features).evaluate().value_or(true);
}

std::optional<policy::NodeSet> allowedNodes(const NodeRules& rules, double now,
                                            const std::vector<SlurmNode>& nodes,
                                            const std::map<std::string, policy::NodeSet>& partitions,
                                            const std::vector<SlurmReservation>& reservations) {
  const SlurmJob& job = rules.job;
  const auto own_reservation = reservationNodes(job, now, reservations);
  const auto reserved = reservedForOthers(job, now, rules.until, reservations);
  policy::NodeSet allowed;
  bool restricts = false;
  for (const auto& node : nodes) {
    if (node.gpus.count <= 0) continue;
    const bool may = inPartitions(rules.partitions, node.name, partitions) &&
                     (own_reservation ? own_reservation->count(node.name) > 0
                                      : reserved.count(node.name) == 0) &&
                     featuresMatch(job.features, node.features) &&
                     !contains(job.excluded_nodes, node.name) &&
                     (rules.user_nodes.empty() || contains(rules.user_nodes, node.name));
    if (may) allowed.insert(node.name);
    else restricts = true;
  }
  if (!restricts) return std::nullopt;
  return allowed;
}

std::vector<std::string> partitionsWithinMaxTime(const SlurmJob& job,
                                                 const std::map<std::string, int>& max_time_min) {
  if (job.state != JobState::kPending || job.time_limit_min <= 0) return job.partitions;
  std::vector<std::string> within;
  for (const auto& name : job.partitions) {
    const auto limit = max_time_min.find(name);
    if (limit == max_time_min.end() || job.time_limit_min <= limit->second) within.push_back(name);
  }
  return within;
}

LicensePool::LicensePool(const std::vector<SlurmLicense>& licenses,
                         const std::vector<SlurmReservation>& reservations, double now)
    : now_(now) {
  for (const auto& license : licenses) free_[license.name] = {license.available, license.reserved};
  for (const auto& reservation : reservations) {
    if (reservation.start_time <= now || reservation.licenses.empty()) continue;
    bool any_one = false;
    ahead_.push_back({reservation.start_time, licensesOf(reservation.licenses, any_one)});
  }
}

// What reservations that start before the job's time limit would end hold of `name`.
int LicensePool::heldAhead(const std::string& name, const SlurmJob& job) const {
  const double end = job.time_limit_min > 0 ? now_ + 60.0 * job.time_limit_min
                                            : std::numeric_limits<double>::infinity();
  int held = 0;
  for (const auto& reservation : ahead_) {
    if (reservation.start_time >= end) continue;
    for (const auto& [license, count] : reservation.licenses) {
      if (license == name) held += count;
    }
  }
  return held;
}

bool LicensePool::fits(const std::string& name, int count, const SlurmJob& job) const {
  const auto found = free_.find(name);
  if (found == free_.end()) return true;
  if (!job.reservation.empty()) return count <= found->second.available;
  return count <= found->second.available - found->second.reserved - heldAhead(name, job);
}

bool LicensePool::take(const SlurmJob& job) {
  if (job.licenses.empty()) return true;
  bool any_one = false;
  auto wanted = licensesOf(job.licenses, any_one);
  if (any_one) {
    const auto first_free = std::find_if(wanted.begin(), wanted.end(), [&](const auto& license) {
      return fits(license.first, license.second, job);
    });
    if (first_free == wanted.end()) return false;
    wanted = {*first_free};
  } else if (!std::all_of(wanted.begin(), wanted.end(), [&](const auto& license) {
               return fits(license.first, license.second, job);
             })) {
    return false;
  }
  for (const auto& [name, count] : wanted) {
    const auto found = free_.find(name);
    if (found != free_.end()) found->second.available -= count;
  }
  return true;
}

}  // namespace pollux::service
