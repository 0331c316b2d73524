// `hostir_launcher -n N [--port P] [--grace-period S] -- COMMAND ARGS...`:
// `hostir launch` without the rest of the CLI. The sanitizer build's
// launched tests start their ranks with it, so that build need not compile
// the whole CLI under ASan (tools/CMakeLists.txt).
#include "launch_command.h"

int main(int argc, char** argv) {
  return hostir::runLaunchCommand(argc - 1, argv + 1);
}
