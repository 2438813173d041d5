// The doctest main of every suite; it says first which plugins this build
// left out, since the test cases that need them are skipped (test::needs).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const char* off = std::getenv("STOWAGE_PLUGINS_OFF");
  if (off && *off)
    std::printf(
        "[stowage] plugins left out of this build: %s (test cases needing them are skipped)\n",
        off);
  return doctest::Context(argc, argv).run();
}
