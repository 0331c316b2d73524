#include "command_library.h"

#include <dlfcn.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>

namespace hostir::tools {

namespace fs = std::filesystem;

int runLoadedCommand(int argc, char** argv) {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  const fs::path folder = error ? fs::path(".") : self.parent_path();
  std::string tried;
  for (const fs::path& path : {folder / "libhostir_commands.so",
                               folder / ".." / "lib" / "hostir" / "libhostir_commands.so"}) {
    if (!fs::exists(path)) {
      tried += "\n  " + path.string() + ": no such file";
      continue;
    }
    // RTLD_LAZY, as the dynamic loader binds a program's functions; RTLD_GLOBAL: Open MPI's
    // components, which libtorch's c10d may load, look up libmpi's symbols in the global scope.
    void* library = dlopen(path.c_str(), RTLD_LAZY | RTLD_GLOBAL);
    if (library == nullptr) {
      tried += "\n  " + path.string() + ": " + dlerror();
      continue;
    }
    using Command = int (*)(int, char**);
    auto command = reinterpret_cast<Command>(dlsym(library, "hostir_run_loaded_command"));
    if (command == nullptr) {
      tried += "\n  " + path.string() + ": no hostir_run_loaded_command in it";
      continue;
    }
    return command(argc, argv);
  }
  std::cerr << "hostir: error: cannot load libhostir_commands, which holds the commands that "
               "run programs (";
  for (std::string_view command : kLoadedCommands) {
    std::cerr << command << (command == kLoadedCommands.back() ? "" : ", ");
  }
  std::cerr << "); tried:" << tried << "\n";
  return 1;
}

}  // namespace hostir::tools
