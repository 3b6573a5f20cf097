// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_view.hpp"

#include <gtest/gtest.h>

namespace pollux::service {
namespace {

TEST(GpuRequestTest, EveryFormSlurmTakes) {
  GpuRequest per_node;  // --gres=gpu:v100:2 -N 3 (or --gpus-per-node)
  per_node.per_node = "gres:gpu:v100:2";
  per_node.nodes = 3;
  EXPECT_EQ(requestedGpus(per_node).count, 6);
  EXPECT_EQ(requestedGpus(per_node).type, "v100");
  GpuRequest per_job;  // --gpus=a100:5
  per_job.per_job = "gres:gpu:a100:5";
  per_job.nodes = 2;
  EXPECT_EQ(requestedGpus(per_job).count, 5);
  EXPECT_EQ(requestedGpus(per_job).type, "a100");
  GpuRequest per_task;  // -n 4 --gpus-per-task=1
  per_task.per_task = "gres:gpu:1";
  per_task.tasks = 4;
  EXPECT_EQ(requestedGpus(per_task).count, 4);
  EXPECT_EQ(requestedGpus(per_task).type, "");
  GpuRequest per_socket;  // -N 2 --sockets-per-node=2 --gpus-per-socket=2
  per_socket.per_socket = "gres/gpu:2";
  per_socket.nodes = 2;
  per_socket.sockets_per_node = 2;
  EXPECT_EQ(requestedGpus(per_socket).count, 8);
  GpuRequest unset_counts;  // Slurm's unset counts read as 0: the per-unit count at least
  unset_counts.per_task = "gres:gpu:2";
  unset_counts.tasks = 0;
  EXPECT_EQ(requestedGpus(unset_counts).count, 2);
  GpuRequest none;
  none.per_node = "gres:mps:100";
  EXPECT_EQ(requestedGpus(none).count, 0);
}

TEST(GpuTypeTest, UntypedGpusOfRunningJobsAreOfTheirNodesType) {
  SlurmJob on_typed, on_untyped;
  on_typed.nodes = {"n1"};
  on_typed.gpus_per_node = GpuGres{"", 2};
  on_untyped.nodes = {"g1"};
  on_untyped.gpus_per_node = GpuGres{"", 2};
  std::vector<SlurmJob> jobs = {on_typed, on_untyped};
  resolveGpuTypes(jobs, {{"n1", {"a100", 4}, true}, {"g1", {"", 4}, true}});
  EXPECT_EQ(jobs[0].gpus_per_node->type, "a100");
  EXPECT_EQ(jobs[1].gpus_per_node->type, kUntypedGpu);
}

TEST(NodeDemandTest, CpusPerNodeAndPerGpu) {
  ResourceRequest request;
  request.min_cpus_per_node = 8;  // --ntasks-per-node=1 --cpus-per-task=8
  request.memory_mb_per_node = 1000;
  EXPECT_EQ(nodeDemandOf(request).cpusFor(4), 8);
  request.cpus_per_tres = "gres:gpu:6";  // --cpus-per-gpu=6
  EXPECT_EQ(nodeDemandOf(request).cpusFor(1), 8);
  EXPECT_EQ(nodeDemandOf(request).cpusFor(4), 24);
  request.cpus_per_tres.clear();
  request.ntasks_per_gpu = 2;  // --ntasks-per-gpu=2 --cpus-per-task=3
  request.cpus_per_task = 3;
  EXPECT_EQ(nodeDemandOf(request).cpusFor(4), 24);
  ResourceRequest no_minimum;
  no_minimum.min_cpus_per_node = 0;
  no_minimum.memory_mb_per_node = 1;
  EXPECT_EQ(nodeDemandOf(no_minimum).cpusFor(2), 1);
}

TEST(NodeDemandTest, MemoryAsSelectConsTresChargesIt) {
  ResourceRequest per_node;
  per_node.memory_mb_per_node = 32000;
  EXPECT_EQ(nodeDemandOf(per_node).memoryFor(4), 32000);
  ResourceRequest per_cpu;
  per_cpu.min_cpus_per_node = 4;
  per_cpu.memory_mb_per_cpu = 2000;  // DefMemPerCPU or --mem-per-cpu
  EXPECT_EQ(nodeDemandOf(per_cpu).memoryFor(1), 8000);
  ResourceRequest per_gpu = per_cpu;
  per_gpu.mem_per_tres = "gres:gpu:16000";  // --mem-per-gpu replaces DefMemPerCPU ...
  EXPECT_EQ(nodeDemandOf(per_gpu).memoryFor(2), 32000);
  per_gpu.memory_set = true;  // ... but not an explicit --mem-per-cpu
  EXPECT_EQ(nodeDemandOf(per_gpu).memoryFor(2), 8000);
  const policy::NodeDemand none = nodeDemandOf(ResourceRequest{});
  EXPECT_TRUE(none.whole_node_memory);  // no request, no default: all of a node's memory
  EXPECT_FALSE(nodeDemandOf(per_node).whole_node_memory);
}

TEST(NodeDemandTest, DefCpuPerGpuAndDefMemPerGpuWhereTheJobGaveNone) {
  ResourceRequest request;
  request.memory_mb_per_cpu = 2000;  // DefMemPerCPU
  request.default_cpus_per_gpu = 6;
  request.default_memory_mb_per_gpu = 40000;
  EXPECT_EQ(nodeDemandOf(request).cpusFor(2), 12);
  EXPECT_EQ(nodeDemandOf(request).memoryFor(2), 80000);  // DefMemPerGPU beats DefMemPerCPU
  ResourceRequest own = request;
  own.cpus_per_tres = "gres:gpu:2";     // --cpus-per-gpu=2
  own.mem_per_tres = "gres:gpu:10000";  // --mem-per-gpu=10000
  EXPECT_EQ(nodeDemandOf(own).cpusFor(2), 4);
  EXPECT_EQ(nodeDemandOf(own).memoryFor(2), 20000);
  ResourceRequest per_task = request;  // --cpus-per-task=4 turns DefCpuPerGPU off
  per_task.cpus_per_task = 4;
  per_task.min_cpus_per_node = 4;
  EXPECT_EQ(nodeDemandOf(per_task).cpusFor(2), 4);
  ResourceRequest explicit_memory = request;  // --mem-per-cpu beats DefMemPerGPU
  explicit_memory.memory_set = true;
  EXPECT_EQ(nodeDemandOf(explicit_memory).memoryFor(2), 2000 * 12);
}

TEST(ReadRequestsTest, ReadsTheCommentAndEveryRequestForm) {
  SlurmJob job;
  job.comment = "adaptive:min_gpus=2,max_gpus=8";
  job.num_nodes = 2;
  job.gpu_request.per_node = "gres:gpu:a100:2";
  job.gpu_request.nodes = 2;
  job.resources.min_cpus_per_node = 4;
  job.resources.memory_mb_per_node = 16000;
  readRequests(job);
  ASSERT_TRUE(job.adaptive.has_value());
  EXPECT_EQ(job.adaptive->min_gpus, 2);
  EXPECT_EQ(*job.adaptive->max_gpus, 8);
  ASSERT_TRUE(job.gpus_per_node.has_value());
  EXPECT_EQ(job.gpus_per_node->type, "a100");
  EXPECT_EQ(job.gpus_per_node->count, 2);
  EXPECT_EQ(job.requested_gpus.type, "a100");
  EXPECT_EQ(job.requested_gpus.count, 4);
  EXPECT_EQ(job.demand.cpus, 4);
  EXPECT_EQ(job.demand.memory_mb, 16000);

  job.comment = "adaptive:min_gpus=zero";  // malformed: rigid, with the reason kept
  job.gpu_request = GpuRequest{};
  readRequests(job);
  EXPECT_FALSE(job.adaptive.has_value());
  EXPECT_NE(job.comment_error.find("min_gpus"), std::string::npos);
  EXPECT_FALSE(job.gpus_per_node.has_value());
  EXPECT_EQ(job.requested_gpus.count, 0);
}

}  // namespace
}  // namespace pollux::service
