// SPDX-License-Identifier: GPL-2.0-or-later
// Strict parsing of numbers written as text (command lines, the environment, configuration,
// the trainer's channel): the whole text and nothing else, in plain decimal notation.
#pragma once

#include <optional>
#include <string>

namespace pollux {

// A finite decimal number ("12", "-0.5", "1e3"); nullopt for empty text, blanks, trailing
// characters, hexadecimal, "inf", "nan" or a value out of double's range.
std::optional<double> parseFiniteNumber(const std::string& text);

// A base-10 integer within [min, max]; nullopt otherwise (a fraction or exponent included).
std::optional<long> parseInteger(const std::string& text, long min, long max);

}  // namespace pollux
