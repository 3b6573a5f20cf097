// SPDX-License-Identifier: GPL-2.0-or-later
// Test support (header only, for test programs; in no library): a private munged, running as
// user munge in the foreground as our child in a fresh temp dir, and stopped by its PID.
// Tests that need MUNGE start one; they must run as root, as CI does.
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace pollux::auth::testing {

using namespace std::chrono_literals;


inline constexpr const char* kMunged = "/usr/sbin/munged";
inline constexpr const char* kMungeKey = "/etc/munge/munge.key";

inline std::string fileText(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

inline bool isSocket(const std::string& path) {
  struct stat status {};
  return stat(path.c_str(), &status) == 0 && S_ISSOCK(status.st_mode);
}

// A munged of our own, running as user munge in the foreground as our child, so that we stop
// exactly that process. error() is non-empty when it could not be started.
class PrivateMunged {
 public:
  PrivateMunged() {
    if (geteuid() != 0) {
      error_ = "these tests start a private munged as user munge and must run as root (CI "
               "does); running as uid " + std::to_string(geteuid());
      return;
    }
    const passwd* munge_user = getpwnam("munge");
    if (munge_user == nullptr) {
      error_ = "no user 'munge': install the munge package (scripts/install-deps)";
      return;
    }
    if (!createDirectory(munge_user->pw_uid, munge_user->pw_gid)) return;
    spawn(munge_user->pw_uid, munge_user->pw_gid);
    if (error_.empty()) waitForSocket();
  }

  ~PrivateMunged() {
    if (pid_ > 0) stop();
    if (!base_dir_.empty()) std::filesystem::remove_all(base_dir_);
  }

  PrivateMunged(const PrivateMunged&) = delete;
  PrivateMunged& operator=(const PrivateMunged&) = delete;

  const std::string& error() const { return error_; }
  const std::string& socket() const { return socket_; }
  const std::string& baseDir() const { return base_dir_; }

 private:
  // BASE (root) / munge (munge), both 0755 as munged requires: its socket, pid, seed and log.
  bool createDirectory(uid_t munge_uid, gid_t munge_gid) {
    std::string pattern = (std::filesystem::temp_directory_path() / "pollux-munge-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      error_ = "mkdtemp failed: " + std::string(strerror(errno));
      return false;
    }
    base_dir_ = pattern;
    munge_dir_ = base_dir_ + "/munge";
    socket_ = munge_dir_ + "/munge.socket";
    if (chmod(base_dir_.c_str(), 0755) != 0 || mkdir(munge_dir_.c_str(), 0755) != 0 ||
        chmod(munge_dir_.c_str(), 0755) != 0 ||
        chown(munge_dir_.c_str(), munge_uid, munge_gid) != 0) {
      error_ = "cannot prepare " + munge_dir_ + ": " + strerror(errno);
      return false;
    }
    return true;
  }

  void spawn(uid_t munge_uid, gid_t munge_gid) {
    const std::vector<std::string> arguments = {
        kMunged, "--foreground", "--socket=" + socket_,
        "--pid-file=" + munge_dir_ + "/munged.pid", "--seed-file=" + munge_dir_ + "/seed",
        "--log-file=" + munge_dir_ + "/munged.log", std::string("--key-file=") + kMungeKey};
    std::vector<char*> argv;
    for (const auto& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    const std::string output_path = base_dir_ + "/munged.out";
    const int output = open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (output < 0) {
      error_ = "cannot create " + output_path + ": " + strerror(errno);
      return;
    }
    pid_ = fork();
    if (pid_ == 0) {  // child: only async-signal-safe calls until execv
      dup2(output, STDOUT_FILENO);
      dup2(output, STDERR_FILENO);
      if (setgroups(1, &munge_gid) == 0 && setgid(munge_gid) == 0 && setuid(munge_uid) == 0) {
        execv(kMunged, argv.data());
      }
      _exit(127);
    }
    close(output);
    if (pid_ < 0) error_ = "fork failed: " + std::string(strerror(errno));
  }

  void waitForSocket() {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (isSocket(socket_)) return;
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        error_ = "munged exited at start-up (wait status " + std::to_string(status) +
                 "): " + startupOutput();
        return;
      }
      std::this_thread::sleep_for(20ms);
    }
    error_ = "munged did not create " + socket_ + " within 10 s: " + startupOutput();
  }

  std::string startupOutput() const {
    return fileText(base_dir_ + "/munged.out") + fileText(munge_dir_ + "/munged.log");
  }

  // SIGTERM, then SIGKILL if it lingers; always to our child's PID, never by name.
  void stop() {
    kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(20ms);
    }
    pid_ = 0;
  }

  std::string error_;
  std::string base_dir_;
  std::string munge_dir_;
  std::string socket_;
  pid_t pid_ = 0;
};

}  // namespace pollux::auth::testing
