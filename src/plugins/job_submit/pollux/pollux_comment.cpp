#include "pollux_comment.h"

#include <cstring>
#include <exception>

#include "report/adaptive_comment.hpp"

extern "C" int pollux_parse_adaptive_comment(const char* comment, char* error, size_t error_size) {
  try {
    return pollux::report::parseAdaptiveComment(comment ? comment : "") ? 1 : 0;
  } catch (const std::exception& problem) {
    if (error && error_size > 0) {
      std::strncpy(error, problem.what(), error_size - 1);
      error[error_size - 1] = '\0';
    }
    return -1;
  }
}
