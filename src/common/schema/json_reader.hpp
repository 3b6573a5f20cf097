// SPDX-License-Identifier: GPL-2.0-or-later
// Strict reading of JSON documents: every error names the path of the offending value.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include <json/json.h>

namespace pollux::schema {

// A JSON value with its path in the document ("jobs[2].min_gpus") for error messages.
// Every accessor throws pollux::InvalidInput naming the path when the value is unusable.
class JsonField {
 public:
  JsonField(const Json::Value& value, std::string path) : value_(&value), path_(std::move(path)) {}

  // Parses `text`; throws InvalidInput with the parser's message on malformed JSON.
  static Json::Value parseDocument(const std::string& text);

  const std::string& path() const { return path_; }
  bool has(const char* key) const;
  bool isString() const;
  JsonField operator[](const char* key) const;      // required member of an object
  JsonField at(Json::ArrayIndex index) const;       // element of an array
  Json::ArrayIndex arraySize() const;               // requires an array
  std::vector<std::string> memberNames() const;     // requires an object
  JsonField member(const std::string& name) const;  // member by runtime name
  // Requires an object whose keys are all in `allowed`.
  void requireOnlyKeys(std::initializer_list<const char*> allowed) const;

  double number() const;                      // finite number
  double positiveNumber() const;              // finite and > 0
  double nonNegativeNumber() const;           // finite and >= 0
  long integer(long min, long max) const;     // integral number in [min, max]
  bool boolean() const;
  std::string string() const;                 // non-empty string
  std::string idString() const;               // non-empty string or non-negative integer

 private:
  [[noreturn]] void fail(const std::string& problem) const;
  const Json::Value* value_;
  std::string path_;
};

}  // namespace pollux::schema
