/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pollux_train.h compiled as strict C99 (-std=c99 -pedantic -Werror). pollux_train_test.cpp
 * calls these wrappers to check that the C build sends the same lines as the C++ build. */
#include <pollux/pollux_train.h>

int pollux_c_connect(pollux_trainer* trainer, const pollux_limits* limits);
int pollux_c_report_step(pollux_trainer* trainer, const pollux_step* step);
int pollux_c_decision_get(pollux_trainer* trainer, pollux_decision* out);
int pollux_c_declare_examples(pollux_trainer* trainer, double examples);
int pollux_c_declare_epochs(pollux_trainer* trainer, double epochs, double examples_per_epoch);

int pollux_c_connect(pollux_trainer* trainer, const pollux_limits* limits) {
  return pollux_connect(trainer, limits);
}

int pollux_c_report_step(pollux_trainer* trainer, const pollux_step* step) {
  return pollux_report_step(trainer, step);
}

int pollux_c_decision_get(pollux_trainer* trainer, pollux_decision* out) {
  return pollux_decision_get(trainer, out);
}

int pollux_c_declare_examples(pollux_trainer* trainer, double examples) {
  return pollux_declare_examples(trainer, examples);
}

int pollux_c_declare_epochs(pollux_trainer* trainer, double epochs, double examples_per_epoch) {
  return pollux_declare_epochs(trainer, epochs, examples_per_epoch);
}
