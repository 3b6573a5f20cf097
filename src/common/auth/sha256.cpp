// SPDX-License-Identifier: GPL-2.0-or-later
#include "sha256.hpp"

#include <memory>
#include <stdexcept>

#include <openssl/evp.h>

namespace pollux::auth {

namespace {

struct DigestContextDeleter {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};
using DigestContext = std::unique_ptr<EVP_MD_CTX, DigestContextDeleter>;

std::string toLowerHex(const unsigned char* bytes, unsigned int size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 0x0f];
  }
  return hex;
}

}  // namespace

std::string sha256Hex(std::string_view data) {
  const DigestContext context(EVP_MD_CTX_new());
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_size = 0;
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(context.get(), data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(context.get(), digest, &digest_size) != 1) {
    throw std::runtime_error("sha256: libcrypto failed to compute the digest");
  }
  return toLowerHex(digest, digest_size);
}

}  // namespace pollux::auth
