// SPDX-License-Identifier: GPL-2.0-or-later
#include "applications.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "common/invalid_input.hpp"
#include "test_support.hpp"

namespace pollux::emulate {
namespace {

TEST(Applications, AnUnknownNameListsTheAvailableOnes) {
  try {
    loadProfile(tracesDir(), "resnet");
    FAIL() << "loaded an unknown application";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("bert, cifar10, deepspeech2, imagenet, ncf, yolov3"),
              std::string::npos)
        << error.what();
  }
  EXPECT_THROW(loadProfile(tracesDir(), "../traces"), InvalidInput);
  EXPECT_THROW(loadProfile(tracesDir() + "/nowhere", "cifar10"), InvalidInput);
}

// The traces validate once per epoch at the initial batch: their first point is one epoch.
TEST(Applications, DatasetSizesAreOneEpochOfEachTrace) {
  for (const char* name : {"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"}) {
    const trace::Application& app = traceApp(name);
    const double epoch = app.curves.progressKnots().front() * double(app.curves.initBatchSize());
    EXPECT_NEAR(datasetSize(app) / epoch, 1, 0.01) << name;
  }
}

TEST(Applications, OtherApplicationsGetOneEpochOfTheirTrace) {
  const TempDir dir;
  writeTinyApp(dir);
  EXPECT_DOUBLE_EQ(datasetSize(loadProfile(dir.file(""), "tiny")), 10.0 * 64);
}

}  // namespace
}  // namespace pollux::emulate
