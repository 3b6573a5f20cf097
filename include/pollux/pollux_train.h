/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pollux_train.h: a training loop's side of the pollux-agent channel (header-only, C99).
 *
 * pollux-agent starts the training command with POLLUX_AGENT_SOCKET set to the path of a UNIX
 * SOCK_SEQPACKET socket. Each message is one ASCII line (at most POLLUX_MAX_LINE bytes, the
 * trailing "\n" optional) of the form `KIND key=value key=value ...`; numbers are C-locale
 * decimals. Unknown keys are ignored; unknown kinds and malformed lines are logged by the
 * agent and ignored.
 *
 * trainer -> agent
 *   hello init_batch_size=N max_batch_size=N min_local_bsz=N max_local_bsz=N accumulation=0|1
 *       once, first: the job's batch limits.
 *   step time=S local_bsz=N accum_steps=N examples=X epochs=X
 *        [compute_time=S] [grad_sqr=X grad_var=X]
 *       after every optimizer step: S = seconds of the whole step (all micro-batches),
 *       compute_time = seconds of one micro-batch's forward/backward if measured,
 *       grad_sqr = |g|^2 and grad_var = tr(Sigma) of ONE example's gradient (the agent scales
 *       it to the initial batch size), examples/epochs = totals since the job first started.
 *       accum_steps counts the micro-batches beyond the first (0: no accumulation), here and
 *       in `decision`: a step takes replicas x local_bsz x (accum_steps + 1) examples.
 *   checkpointed
 *       a checkpoint has been written (after a checkpoint request, or on its own).
 *   length examples=X
 *   length epochs=X [examples_per_epoch=N]
 *       optional, any time (again after each restart; the latest wins): how long the job is,
 *       in examples of training or in epochs of a data set of N examples (without N the agent
 *       derives it from the step totals, examples / epochs, once epochs > 0). X and N are
 *       finite, > 0 and at most 1e18. The agent counts the job's progress in the unit of the
 *       goodput model, examples at the initial batch size with statistical efficiency
 *       applied (each step adds its examples x efficiency of its batch size; at the initial
 *       batch size that is the raw count), and takes the target in that unit: X examples, or
 *       X x N for epochs. It reports both to sched/pollux, whose policy uses the remaining
 *       work to shorten job completion times, and refuses (logs, leaves the job undeclared)
 *       a target the progress already reached.
 *
 * agent -> trainer
 *   decision batch_size=N local_bsz=N accum_steps=N lr_scale=X
 *       the batch configuration to train with from the next step on (lr = base lr * lr_scale;
 *       batch_size = replicas x local_bsz x (accum_steps + 1)).
 *   checkpoint
 *       Slurm is about to stop the job (requeue or resize): write a checkpoint, send
 *       `checkpointed`, and exit. The agent kills the trainer when the grace time is up.
 *
 * This header formats and reads numbers with the C library, so LC_NUMERIC must stay "C" (the
 * default unless the program calls setlocale). It reads `decision` keys in the order the agent
 * writes them.
 *
 * Outside pollux-agent (POLLUX_AGENT_SOCKET unset) every call is a cheap no-op, so the same
 * training script runs with and without it. Sends never block: a step the agent cannot take
 * at once is dropped, never delaying training; a message is delivered whole or not at all.
 * A declared length the agent cannot take at once is kept and sent again before each step.
 */
#ifndef POLLUX_TRAIN_H
#define POLLUX_TRAIN_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define POLLUX_MAX_LINE 1024

typedef struct pollux_limits {
  long init_batch_size; /* the total batch the hyper-parameters were tuned for */
  long max_batch_size;  /* the largest total batch the job accepts */
  int min_local_bsz;    /* per-GPU micro-batch bounds (the upper one is GPU memory) */
  int max_local_bsz;
  int accumulation; /* non-zero if gradient accumulation may be used */
} pollux_limits;

typedef struct pollux_step {
  double step_time; /* seconds of the optimizer step, all micro-batches included */
  int local_bsz;
  int accum_steps; /* micro-batches beyond the first: 0 = no accumulation */
  double examples; /* examples processed since the job first started */
  double epochs;
  double compute_time; /* seconds of one micro-batch; < 0 if not measured */
  double grad_sqr;     /* |g|^2 and tr(Sigma) per example; grad_var < 0 if not measured */
  double grad_var;
} pollux_step;

typedef struct pollux_decision {
  long batch_size;
  int local_bsz;
  int accum_steps;
  double lr_scale;
} pollux_decision;

typedef struct pollux_trainer {
  int fd; /* -1: not under pollux-agent */
  int have_decision;
  pollux_decision decision;
  int checkpoint_requested;
  double reported_examples; /* totals of the last step reported (declarations beyond them) */
  double reported_epochs;
  int length_pending; /* a declared length not sent yet: sent before the next step */
  char length_line[128];
} pollux_trainer;

#define POLLUX_MAX_DECLARED 1e18

/* Sends one line; 0 on success or when not under an agent, -1 if it could not be sent now. */
static inline int pollux__send(pollux_trainer* trainer, const char* line, size_t length) {
  if (trainer->fd < 0) return 0;
  const ssize_t sent = send(trainer->fd, line, length, MSG_DONTWAIT | MSG_NOSIGNAL);
  return sent == (ssize_t)length ? 0 : -1;
}

/* Applies one message from the agent. */
static inline void pollux__apply(pollux_trainer* trainer, const char* line) {
  if (strncmp(line, "checkpoint", 10) == 0 &&
      (line[10] == '\0' || line[10] == '\n' || line[10] == ' ')) {
    trainer->checkpoint_requested = 1;
    return;
  }
  pollux_decision next;
  if (sscanf(line, "decision batch_size=%ld local_bsz=%d accum_steps=%d lr_scale=%lf",
             &next.batch_size, &next.local_bsz, &next.accum_steps, &next.lr_scale) == 4) {
    trainer->decision = next;
    trainer->have_decision = 1;
  }
}

/* Reads whatever the agent has sent, without blocking. */
static inline void pollux__drain(pollux_trainer* trainer) {
  if (trainer->fd < 0) return;
  char message[POLLUX_MAX_LINE + 1];
  ssize_t got;
  while ((got = recv(trainer->fd, message, POLLUX_MAX_LINE, MSG_DONTWAIT)) > 0) {
    message[got] = '\0';
    pollux__apply(trainer, message);
  }
}

/* Connects to the agent named by POLLUX_AGENT_SOCKET and sends `hello`. Returns 0 (also when
 * not under an agent: trainer->fd is then -1), or -1 with errno set. */
static inline int pollux_connect(pollux_trainer* trainer, const pollux_limits* limits) {
  memset(trainer, 0, sizeof *trainer);
  trainer->fd = -1;
  const char* path = getenv("POLLUX_AGENT_SOCKET");
  if (path == NULL || *path == '\0') return 0;
  struct sockaddr_un address;
  memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof address.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(address.sun_path, path);
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, (const struct sockaddr*)&address, sizeof address) != 0) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  trainer->fd = fd;
  char line[POLLUX_MAX_LINE];
  const int length = snprintf(line, sizeof line,
                              "hello init_batch_size=%ld max_batch_size=%ld min_local_bsz=%d "
                              "max_local_bsz=%d accumulation=%d\n",
                              limits->init_batch_size, limits->max_batch_size,
                              limits->min_local_bsz, limits->max_local_bsz,
                              limits->accumulation ? 1 : 0);
  return pollux__send(trainer, line, (size_t)length);
}

/* Sends a declared length still pending. */
static inline void pollux__send_length(pollux_trainer* trainer) {
  if (trainer->length_pending &&
      pollux__send(trainer, trainer->length_line, strlen(trainer->length_line)) == 0)
    trainer->length_pending = 0;
}

/* Non-zero if `value` is a declarable amount: finite, > 0, at most POLLUX_MAX_DECLARED. */
static inline int pollux__declarable(double value) {
  return isfinite(value) && value > 0 && value <= POLLUX_MAX_DECLARED;
}

static inline int pollux__refuse_length(const char* what, double value, const char* why) {
  fprintf(stderr, "pollux_train: declared length refused: %s=%g %s; the job runs undeclared\n",
          what, value, why);
  errno = EINVAL;
  return -1;
}

/* Queues the `length` line and sends it now if the agent takes it. */
static inline int pollux__declare(pollux_trainer* trainer, const char* line) {
  snprintf(trainer->length_line, sizeof trainer->length_line, "%s", line);
  trainer->length_pending = trainer->fd >= 0;
  pollux__send_length(trainer);
  return 0;
}

/* Declares the job's length as `examples` examples of training (see `length` above). Returns
 * 0 (also when not under an agent, or when the agent cannot take it at once: it is then sent
 * before the next step), or -1 with errno EINVAL, a message on stderr and nothing sent when
 * `examples` is not finite, not > 0, above 1e18 or not beyond the examples of the last step
 * reported. A refused declaration leaves the job undeclared; training goes on. */
static inline int pollux_declare_examples(pollux_trainer* trainer, double examples) {
  if (!pollux__declarable(examples))
    return pollux__refuse_length("examples", examples, "is not a finite number > 0 (at most 1e18)");
  if (examples <= trainer->reported_examples)
    return pollux__refuse_length("examples", examples, "is not beyond the examples already trained");
  char line[128];
  snprintf(line, sizeof line, "length examples=%.17g\n", examples);
  return pollux__declare(trainer, line);
}

/* Declares the job's length as `epochs` epochs of a data set of `examples_per_epoch` examples
 * (<= 0: unknown; the agent derives it from the steps' totals). Returns as
 * pollux_declare_examples; refused (EINVAL) when `epochs` is not finite, not > 0, above 1e18
 * or not beyond the epochs of the last step reported, or examples_per_epoch is not finite or
 * above 1e18. */
static inline int pollux_declare_epochs(pollux_trainer* trainer, double epochs,
                                        double examples_per_epoch) {
  if (!pollux__declarable(epochs))
    return pollux__refuse_length("epochs", epochs, "is not a finite number > 0 (at most 1e18)");
  if (epochs <= trainer->reported_epochs)
    return pollux__refuse_length("epochs", epochs, "is not beyond the epochs already trained");
  if (!isfinite(examples_per_epoch) || examples_per_epoch > POLLUX_MAX_DECLARED)
    return pollux__refuse_length("examples_per_epoch", examples_per_epoch,
                                 "is not a finite number (at most 1e18)");
  char line[128];
  if (examples_per_epoch > 0)
    snprintf(line, sizeof line, "length epochs=%.17g examples_per_epoch=%.17g\n", epochs,
             examples_per_epoch);
  else
    snprintf(line, sizeof line, "length epochs=%.17g\n", epochs);
  return pollux__declare(trainer, line);
}

/* Reports one optimizer step and picks up any decision or checkpoint request. */
static inline int pollux_report_step(pollux_trainer* trainer, const pollux_step* step) {
  trainer->reported_examples = step->examples;
  trainer->reported_epochs = step->epochs;
  if (trainer->fd < 0) return 0;
  pollux__send_length(trainer);
  char line[POLLUX_MAX_LINE];
  int length = snprintf(line, sizeof line,
                        "step time=%.9g local_bsz=%d accum_steps=%d examples=%.17g epochs=%.9g",
                        step->step_time, step->local_bsz, step->accum_steps, step->examples,
                        step->epochs);
  if (step->compute_time >= 0)
    length += snprintf(line + length, sizeof line - (size_t)length, " compute_time=%.9g",
                       step->compute_time);
  if (step->grad_var >= 0)
    length += snprintf(line + length, sizeof line - (size_t)length,
                       " grad_sqr=%.9g grad_var=%.9g", step->grad_sqr, step->grad_var);
  length += snprintf(line + length, sizeof line - (size_t)length, "\n");
  const int result = pollux__send(trainer, line, (size_t)length);
  pollux__drain(trainer);
  return result;
}

/* 1 and *out set if the agent has sent a decision, else 0. */
static inline int pollux_decision_get(pollux_trainer* trainer, pollux_decision* out) {
  pollux__drain(trainer);
  if (trainer->have_decision) *out = trainer->decision;
  return trainer->have_decision;
}

/* Non-zero once the agent has asked for a checkpoint (the job is about to stop). */
static inline int pollux_checkpoint_requested(pollux_trainer* trainer) {
  pollux__drain(trainer);
  return trainer->checkpoint_requested;
}

/* Tells the agent a checkpoint has been written. */
static inline int pollux_checkpointed(pollux_trainer* trainer) {
  return pollux__send(trainer, "checkpointed\n", 13);
}

static inline void pollux_close(pollux_trainer* trainer) {
  if (trainer->fd >= 0) close(trainer->fd);
  trainer->fd = -1;
}

#endif /* POLLUX_TRAIN_H */
