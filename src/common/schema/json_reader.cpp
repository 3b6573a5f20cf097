// SPDX-License-Identifier: GPL-2.0-or-later
#include "json_reader.hpp"

#include <cmath>
#include <memory>
#include <sstream>

#include "common/invalid_input.hpp"

namespace pollux::schema {

Json::Value JsonField::parseDocument(const std::string& text) {
  Json::CharReaderBuilder builder;
  builder["collectComments"] = false;
  builder["rejectDupKeys"] = true;
  builder["failIfExtra"] = true;
  builder["allowSpecialFloats"] = false;
  const std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
  Json::Value root;
  std::string errors;
  if (!reader->parse(text.data(), text.data() + text.size(), &root, &errors)) {
    throw InvalidInput("malformed JSON: " + errors);
  }
  return root;
}

void JsonField::fail(const std::string& problem) const {
  throw InvalidInput((path_.empty() ? std::string("document") : path_) + ": " + problem);
}

bool JsonField::isString() const { return value_->isString(); }

bool JsonField::has(const char* key) const {
  return value_->isObject() && value_->isMember(key) && !(*value_)[key].isNull();
}

JsonField JsonField::operator[](const char* key) const {
  if (!value_->isObject()) fail("must be an object");
  if (!value_->isMember(key)) fail(std::string("missing required key '") + key + "'");
  return JsonField((*value_)[key], path_.empty() ? key : path_ + "." + key);
}

JsonField JsonField::member(const std::string& name) const { return (*this)[name.c_str()]; }

JsonField JsonField::at(Json::ArrayIndex index) const {
  if (!value_->isArray()) fail("must be an array");
  return JsonField((*value_)[index], path_ + "[" + std::to_string(index) + "]");
}

Json::ArrayIndex JsonField::arraySize() const {
  if (!value_->isArray()) fail("must be an array");
  return value_->size();
}

std::vector<std::string> JsonField::memberNames() const {
  if (!value_->isObject()) fail("must be an object");
  return value_->getMemberNames();
}

void JsonField::requireOnlyKeys(std::initializer_list<const char*> allowed) const {
  for (const auto& name : memberNames()) {
    bool known = false;
    for (const char* key : allowed) known |= name == key;
    if (!known) fail("unknown key '" + name + "'");
  }
}

double JsonField::number() const {
  if (!value_->isNumeric() || value_->isBool()) fail("must be a number");
  const double number = value_->asDouble();
  if (!std::isfinite(number)) fail("must be finite");
  return number;
}

double JsonField::positiveNumber() const {
  const double value = number();
  if (value <= 0) fail("must be > 0");
  return value;
}

double JsonField::nonNegativeNumber() const {
  const double value = number();
  if (value < 0) fail("must be >= 0");
  return value;
}

long JsonField::integer(long min, long max) const {
  const double value = number();
  if (value != std::floor(value)) fail("must be an integer");
  if (value < min || value > max) {
    std::ostringstream range;
    range << "must be in [" << min << ", " << max << "], got " << value;
    fail(range.str());
  }
  return static_cast<long>(value);
}

bool JsonField::boolean() const {
  if (!value_->isBool()) fail("must be true or false");
  return value_->asBool();
}

std::string JsonField::string() const {
  if (!value_->isString()) fail("must be a string");
  std::string text = value_->asString();
  if (text.empty()) fail("must not be empty");
  return text;
}

std::string JsonField::idString() const {
  if (value_->isString()) return string();
  return std::to_string(integer(0, 0xFFFFFFFFL));
}

}  // namespace pollux::schema
