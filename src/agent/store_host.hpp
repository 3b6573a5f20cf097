// SPDX-License-Identifier: GPL-2.0-or-later
// The job's control store in a process of its own for one step under `pollux-agent --launch`
// (`PYTHON -m pollux.store PORT`, pollux.elastic), on the batch host: any worker, rank 0
// included, may then leave or fail without taking the store along.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "child_process.hpp"

namespace pollux::agent {

// Whether `program` (a path or a name) is a Python interpreter: python, python3, python3.11.
bool isPythonInterpreter(const std::string& program);

class StoreHost {
 public:
  // Starts `python -m pollux.store port` and waits until the port accepts connections, at
  // most `timeout`; ready() says whether it did.
  StoreHost(const std::string& python, int port, std::chrono::milliseconds timeout);
  // SIGTERM, then SIGKILL after 5 s; reaped.
  ~StoreHost();
  StoreHost(const StoreHost&) = delete;
  StoreHost& operator=(const StoreHost&) = delete;

  bool ready() const { return ready_; }

 private:
  bool exited();  // reaps it once; true ever after

  std::unique_ptr<ChildProcess> process_;
  bool exited_ = false;
  bool ready_ = false;
};

}  // namespace pollux::agent
