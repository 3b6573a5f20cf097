// SPDX-License-Identifier: GPL-2.0-or-later
// Runs a fuzz target over every file of its corpus (tests/fuzz/TARGET: the seeds, what
// fuzzing found worth keeping, and every crasher once fixed), so `make check` replays them
// with the ordinary build. TARGET is the program's name without "_corpus".
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int, char** argv) {
  const char* root = std::getenv("POLLUX_FUZZ_CORPORA");
  std::string target = std::filesystem::path(argv[0]).filename().string();
  target = target.substr(0, target.rfind("_corpus"));
  const std::filesystem::path dir = std::filesystem::path(root ? root : ".") / target;
  int inputs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ++inputs;
  }
  std::cout << target << ": " << inputs << " corpus inputs replayed\n";
  return inputs > 0 ? 0 : 1;
}
