#include "launch_command.h"

#include "hostir/runtime/comm/launch_environment.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hostir {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kUsageError = 2;
constexpr int kExecFailed = 127;
// A line longer than this is written out in pieces rather than buffered.
constexpr size_t kMaxBufferedLine = 64 * 1024;

constexpr const char* kUsage =
    "usage: hostir launch -n N [--port P] [--grace-period SECONDS] -- COMMAND [ARGS...]\n"
    "  -n, --nproc-per-node N  number of local ranks to start (N >= 1)\n"
    "  --port P                MASTER_PORT, for commands that run torch's own rendezvous\n"
    "                          (default: a free port; hostir's ranks meet in a private file)\n"
    "  --grace-period SECONDS  time between SIGTERM and SIGKILL when a rank fails "
    "(default 5)\n"
    "environment: HOSTIR_MALLOC=jemalloc preloads Debian's libjemalloc2 into every rank,\n"
    "  keeping the memory it frees for later allocations (fewer page faults when\n"
    "  sizes change between calls); system (the default) leaves glibc's malloc\n";

struct LaunchOptions {
  int num_ranks = 0;
  int port = 0;  // 0: pick a free one
  double grace_period_s = 5.0;
  std::vector<std::string> command;
  // The ranks' rendezvous file (HOSTIR_STORE_FILE), in a private folder.
  std::string store_file;
  // HOSTIR_MALLOC=jemalloc: the ranks start with this kJemalloc preloaded
  // (empty: glibc's malloc).
  std::string jemalloc_path;
};

// Debian's libjemalloc2. The launcher cannot dlopen it to check that it
// loads: it is built for the initial-exec TLS model, so only a process that
// preloads it can (dlopen fails with "cannot allocate memory in static TLS
// block").
constexpr const char* kJemalloc = "libjemalloc.so.2";
// jemalloc gives freed pages back to the system after a decay of 10 s by
// default; a training job whose lengths change would fault them in again.
// Never decaying keeps them for the next allocation of any size that fits;
// huge pages as glibc's tunable below gives glibc's malloc (without them
// the MLP block's training step took 1.1-1.4x as long; docs/performance.md,
// "jemalloc for ranks whose lengths change").
constexpr const char* kJemallocConf = "dirty_decay_ms:-1,muzzy_decay_ms:-1,thp:always";
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerBuild = true;
#else
constexpr bool kSanitizerBuild = false;
#endif

// Set from signal handlers; the supervision loop checks it.
volatile sig_atomic_t g_received_signal = 0;

void recordSignal(int signal_number) {
  g_received_signal = signal_number;
}

void printError(const std::string& message) {
  std::fprintf(stderr, "hostir launch: error: %s\n%s", message.c_str(), kUsage);
}

template <typename Number>
std::optional<Number> parseNumber(std::string_view text) {
  Number value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

// Returns nullopt after printing what is wrong.
std::optional<LaunchOptions> parseLaunchOptions(int argc, char** argv) {
  LaunchOptions options;
  bool have_num_ranks = false;
  int i = 0;
  auto value_of = [&](std::string_view flag) -> std::optional<std::string_view> {
    if (i + 1 >= argc) {
      printError(std::string(flag) + " needs a value");
      return std::nullopt;
    }
    return std::string_view(argv[++i]);
  };
  for (; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return std::nullopt;
    }
    if (arg == "-n" || arg == "--nproc-per-node") {
      auto text = value_of(arg);
      if (!text) {
        return std::nullopt;
      }
      auto n = parseNumber<int>(*text);
      if (!n || *n < 1) {
        printError("-n must be a whole number >= 1, got '" + std::string(*text) + "'");
        return std::nullopt;
      }
      options.num_ranks = *n;
      have_num_ranks = true;
    } else if (arg == "--port") {
      auto text = value_of(arg);
      if (!text) {
        return std::nullopt;
      }
      auto port = parseNumber<int>(*text);
      if (!port || *port < 1 || *port > 65535) {
        printError("--port must be in 1..65535, got '" + std::string(*text) + "'");
        return std::nullopt;
      }
      options.port = *port;
    } else if (arg == "--grace-period") {
      auto text = value_of(arg);
      if (!text) {
        return std::nullopt;
      }
      char* end = nullptr;
      std::string copy(*text);
      double seconds = std::strtod(copy.c_str(), &end);
      if (end != copy.c_str() + copy.size() || !(seconds >= 0)) {
        printError("--grace-period must be a number of seconds >= 0, got '" + copy + "'");
        return std::nullopt;
      }
      options.grace_period_s = seconds;
    } else if (!arg.empty() && arg[0] == '-') {
      printError("unknown option '" + std::string(arg) + "'");
      return std::nullopt;
    } else {
      break;  // the command starts here (the `--` is optional)
    }
  }
  for (; i < argc; ++i) {
    options.command.emplace_back(argv[i]);
  }
  if (!have_num_ranks) {
    printError("missing -n N (the number of ranks)");
    return std::nullopt;
  }
  if (options.command.empty()) {
    printError("missing the command to run after --");
    return std::nullopt;
  }
  return options;
}

// Whether nobody listens on `port` of 127.0.0.1 (0: the kernel picks one);
// the port bound, or nullopt.
std::optional<int> bindableLoopbackPort(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return std::nullopt;
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t length = sizeof(address);
  std::optional<int> bound;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    bound = ntohs(address.sin_port);
  }
  ::close(fd);
  return bound;
}

void writeAll(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0) {
      if (errno == EINTR) {
        continue;
      }
      return;  // e.g. a closed pipe: the output is lost, the ranks still run
    }
    text.remove_prefix(static_cast<size_t>(written));
  }
}

// One of a rank's output streams, forwarded line by line with its prefix.
struct OutputPipe {
  int fd = -1;          // read end; -1 once closed
  int destination_fd;   // our stdout or stderr
  std::string pending;  // the start of a line without its newline yet

  void emitLines(const std::string& prefix, bool flush_partial) {
    size_t start = 0;
    for (size_t newline; (newline = pending.find('\n', start)) != std::string::npos;
         start = newline + 1) {
      writeAll(destination_fd, prefix + pending.substr(start, newline + 1 - start));
    }
    pending.erase(0, start);
    if (!pending.empty() && (flush_partial || pending.size() > kMaxBufferedLine)) {
      writeAll(destination_fd, prefix + pending + "\n");
      pending.clear();
    }
  }

  // Reads what is available; closes on end of file.
  void readAvailable(const std::string& prefix) {
    char buffer[8192];
    ssize_t count = ::read(fd, buffer, sizeof(buffer));
    if (count < 0 && (errno == EINTR || errno == EAGAIN)) {
      return;
    }
    if (count <= 0) {
      ::close(fd);
      fd = -1;
      emitLines(prefix, /*flush_partial=*/true);
      return;
    }
    pending.append(buffer, static_cast<size_t>(count));
    emitLines(prefix, /*flush_partial=*/false);
  }
};

struct RankProcess {
  int rank = 0;
  pid_t pid = -1;
  bool running = false;
  int exit_code = 0;  // valid once !running; 128 + signal for a signal
  std::string prefix;
  OutputPipe out;
  OutputPipe err;
};

std::string describeStatus(int status) {
  if (WIFSIGNALED(status)) {
    int signal_number = WTERMSIG(status);
    return "was killed by signal " + std::to_string(signal_number) + " (" +
           strsignal(signal_number) + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

int exitCodeOf(int status) {
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

// Runs in the forked child: never returns.
[[noreturn]] void execRank(const LaunchOptions& options, int rank, int port, int stdout_fd,
                           int stderr_fd, pid_t launcher) {
  // Its own process group, so ending a rank also ends what it started.
  ::setpgid(0, 0);
  // A launcher that dies without a chance to end its ranks (kill -9) takes
  // them with it: the kernel sends SIGKILL when the launcher exits (kept
  // across exec). A launcher that died before this line is seen by the
  // parent pid having changed.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != launcher) {
    ::_exit(kExecFailed);
  }
  ::dup2(stdout_fd, STDOUT_FILENO);
  ::dup2(stderr_fd, STDERR_FILENO);
  // The launcher ignores SIGPIPE and handles SIGINT/SIGTERM; the rank must
  // start with the default dispositions (ignored signals survive exec).
  for (int signal_number : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) {
    ::signal(signal_number, SIG_DFL);
  }
  const std::string world_size = std::to_string(options.num_ranks);
  const std::string rank_text = std::to_string(rank);
  ::setenv("RANK", rank_text.c_str(), 1);
  ::setenv("LOCAL_RANK", rank_text.c_str(), 1);
  ::setenv("WORLD_SIZE", world_size.c_str(), 1);
  ::setenv("LOCAL_WORLD_SIZE", world_size.c_str(), 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  ::setenv("HOSTIR_STORE_FILE", options.store_file.c_str(), 1);
  // glibc's malloc advises its heaps and large blocks transparent huge pages
  // (glibc 2.35 on; older ones ignore the name), so ATen's first writes
  // fault 2 MiB at a time (docs/performance.md, "Huge pages for the pool's
  // blocks"). Tunables the user set, even empty, are left as they are.
  ::setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", /*overwrite=*/0);
  if (!options.jemalloc_path.empty()) {
    // After the libraries the user preloads: theirs come first.
    const char* theirs = std::getenv("LD_PRELOAD");
    const std::string preload = theirs != nullptr && *theirs != '\0'
                                    ? std::string(theirs) + ":" + options.jemalloc_path
                                    : options.jemalloc_path;
    ::setenv("LD_PRELOAD", preload.c_str(), 1);
    ::setenv("MALLOC_CONF", kJemallocConf, /*overwrite=*/0);
  }

  std::vector<char*> args;
  for (const std::string& arg : options.command) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  std::string message =
      "hostir launch: cannot run '" + options.command[0] + "': " + std::strerror(errno) + "\n";
  writeAll(STDERR_FILENO, message);
  ::_exit(kExecFailed);
}

bool startRank(const LaunchOptions& options, int rank, int port, RankProcess& process) {
  int stdout_pipe[2];
  int stderr_pipe[2];
  if (::pipe2(stdout_pipe, O_CLOEXEC) != 0) {
    return false;
  }
  if (::pipe2(stderr_pipe, O_CLOEXEC) != 0) {
    ::close(stdout_pipe[0]);
    ::close(stdout_pipe[1]);
    return false;
  }
  const pid_t launcher = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    execRank(options, rank, port, stdout_pipe[1], stderr_pipe[1], launcher);
  }
  ::close(stdout_pipe[1]);
  ::close(stderr_pipe[1]);
  if (pid < 0) {
    ::close(stdout_pipe[0]);
    ::close(stderr_pipe[0]);
    return false;
  }
  ::setpgid(pid, pid);  // also here, so a signal sent right away reaches the group
  process.rank = rank;
  process.pid = pid;
  process.running = true;
  process.prefix = "[rank " + std::to_string(rank) + "] ";
  process.out = OutputPipe{stdout_pipe[0], STDOUT_FILENO, {}};
  process.err = OutputPipe{stderr_pipe[0], STDERR_FILENO, {}};
  return true;
}

void signalRunning(std::vector<RankProcess>& ranks, int signal_number) {
  for (RankProcess& process : ranks) {
    if (process.running) {
      ::kill(-process.pid, signal_number);
    }
  }
}

// Forwards output and supervises the ranks until all have exited.
int superviseRanks(std::vector<RankProcess>& ranks, double grace_period_s) {
  int result = 0;
  bool terminating = false;
  bool killed = false;
  Clock::time_point kill_deadline;
  std::optional<Clock::time_point> drain_deadline;

  auto start_termination = [&](const std::string& reason) {
    if (terminating) {
      return;
    }
    terminating = true;
    writeAll(STDERR_FILENO, "hostir launch: " + reason + "; stopping the other ranks\n");
    signalRunning(ranks, SIGTERM);
    kill_deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(grace_period_s));
  };

  while (true) {
    std::vector<pollfd> poll_fds;
    std::vector<std::pair<OutputPipe*, const std::string*>> pipes;  // with the rank's prefix
    for (RankProcess& process : ranks) {
      for (OutputPipe* pipe : {&process.out, &process.err}) {
        if (pipe->fd >= 0) {
          poll_fds.push_back(pollfd{pipe->fd, POLLIN, 0});
          pipes.emplace_back(pipe, &process.prefix);
        }
      }
    }
    bool any_running = false;
    for (const RankProcess& process : ranks) {
      any_running = any_running || process.running;
    }
    if (!any_running) {
      // Background processes a rank left behind may hold its pipes open;
      // don't wait for them for long.
      if (poll_fds.empty()) {
        break;
      }
      if (!drain_deadline) {
        drain_deadline = Clock::now() + std::chrono::seconds(1);
      } else if (Clock::now() > *drain_deadline) {
        break;
      }
    }

    int ready = ::poll(poll_fds.data(), poll_fds.size(), /*timeout_ms=*/50);
    for (size_t k = 0; ready > 0 && k < poll_fds.size(); ++k) {
      if (poll_fds[k].revents != 0) {
        pipes[k].first->readAvailable(*pipes[k].second);
      }
    }

    for (RankProcess& process : ranks) {
      if (!process.running) {
        continue;
      }
      int status = 0;
      pid_t done = ::waitpid(process.pid, &status, WNOHANG);
      if (done != process.pid) {
        continue;
      }
      process.running = false;
      process.exit_code = exitCodeOf(status);
      if (process.exit_code != 0 && !terminating) {
        result = process.exit_code;
        start_termination("rank " + std::to_string(process.rank) + " " + describeStatus(status));
      }
    }

    if (g_received_signal != 0 && !terminating) {
      int signal_number = g_received_signal;
      result = 128 + signal_number;
      start_termination(std::string("received signal ") + strsignal(signal_number));
    }
    if (terminating && !killed && Clock::now() > kill_deadline) {
      killed = true;
      signalRunning(ranks, SIGKILL);
    }
  }
  for (RankProcess& process : ranks) {
    for (OutputPipe* pipe : {&process.out, &process.err}) {
      if (pipe->fd >= 0) {
        ::close(pipe->fd);
        pipe->fd = -1;
      }
      pipe->emitLines(process.prefix, /*flush_partial=*/true);
    }
  }
  return result;
}

// Starts the ranks and supervises them until all have exited.
int superviseJob(const LaunchOptions& options, int port) {
  g_received_signal = 0;
  struct sigaction on_signal {};
  on_signal.sa_handler = recordSignal;
  sigemptyset(&on_signal.sa_mask);
  struct sigaction previous[3];
  const int forwarded[3] = {SIGINT, SIGTERM, SIGHUP};
  for (int k = 0; k < 3; ++k) {
    ::sigaction(forwarded[k], &on_signal, &previous[k]);
  }
  // A closed stdout must not kill the launcher and orphan the ranks.
  void (*previous_sigpipe)(int) = ::signal(SIGPIPE, SIG_IGN);

  std::vector<RankProcess> ranks(static_cast<size_t>(options.num_ranks));
  int result = 0;
  bool started_all = true;
  for (int rank = 0; rank < options.num_ranks; ++rank) {
    if (!startRank(options, rank, port, ranks[static_cast<size_t>(rank)])) {
      writeAll(STDERR_FILENO, "hostir launch: cannot start rank " + std::to_string(rank) + ": " +
                                  std::strerror(errno) + "\n");
      started_all = false;
      ranks.resize(static_cast<size_t>(rank));
      break;
    }
  }
  if (!started_all) {
    signalRunning(ranks, SIGKILL);
    superviseRanks(ranks, 0.0);
    result = 1;
  } else {
    result = superviseRanks(ranks, options.grace_period_s);
  }

  for (int k = 0; k < 3; ++k) {
    ::sigaction(forwarded[k], &previous[k], nullptr);
  }
  ::signal(SIGPIPE, previous_sigpipe);
  return result;
}

}  // namespace

std::pair<int, int> ephemeralPortRange() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0;
  int high = 0;
  if (range >> low >> high && 1024 < low && low <= high && high <= 65535) {
    return {low, high};
  }
  return {32768, 60999};  // Linux's default
}

std::optional<int> findRendezvousPort() {
  const int below = ephemeralPortRange().first;
  const int lowest = std::max(1024, below - 10000);
  if (lowest < below) {
    std::mt19937 random(std::random_device{}());
    std::uniform_int_distribution<int> pick(lowest, below - 1);
    for (int attempt = 0; attempt < 64; ++attempt) {
      if (std::optional<int> port = bindableLoopbackPort(pick(random))) {
        return port;
      }
    }
  }
  return bindableLoopbackPort(0);
}

// kJemalloc's path: in the folder of the C library this process runs on
// (Debian's multiarch folder, where libjemalloc2 installs it) or in one of
// LD_LIBRARY_PATH's; empty when in none.
std::string findJemalloc() {
  std::vector<std::string> folders;
  Dl_info libc{};
  if (::dladdr(reinterpret_cast<void*>(&::fopen), &libc) != 0 && libc.dli_fname != nullptr) {
    folders.push_back(std::filesystem::path(libc.dli_fname).parent_path().string());
  }
  if (const char* paths = std::getenv("LD_LIBRARY_PATH"); paths != nullptr) {
    std::string_view rest(paths);
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      folders.emplace_back(rest.substr(0, colon));
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  for (const std::string& folder : folders) {
    const std::string path = (folder.empty() ? std::string(".") : folder) + "/" + kJemalloc;
    if (::access(path.c_str(), R_OK) == 0) {
      return path;
    }
  }
  return "";
}

// HOSTIR_MALLOC: whether the ranks run on jemalloc ("jemalloc") or on
// glibc's malloc ("system", also when unset or empty). False after printing
// why for any other value, for jemalloc where it cannot be loaded, and in a
// sanitizer's build (its runtime must be the first library a rank loads).
bool readRankAllocator(LaunchOptions& options) {
  const char* text = std::getenv("HOSTIR_MALLOC");
  const std::string choice = text == nullptr ? "" : text;
  if (choice.empty() || choice == "system") {
    return true;
  }
  if (choice != "jemalloc") {
    printError("HOSTIR_MALLOC='" + choice +
               "' is not an allocator the ranks can run on; give jemalloc (Debian's "
               "libjemalloc2, preloaded into every rank) or system (glibc's malloc, the default)");
    return false;
  }
  if (kSanitizerBuild) {
    printError(
        "HOSTIR_MALLOC=jemalloc cannot be used by a sanitizer's build: the sanitizer's "
        "runtime must be the first library a rank loads; unset HOSTIR_MALLOC");
    return false;
  }
  options.jemalloc_path = findJemalloc();
  if (options.jemalloc_path.empty()) {
    printError(std::string("HOSTIR_MALLOC=jemalloc, but ") + kJemalloc +
               " is in none of the folders searched (libc's and LD_LIBRARY_PATH's); install "
               "Debian's libjemalloc2 or unset HOSTIR_MALLOC");
    return false;
  }
  return true;
}

int runLaunchCommand(int argc, char** argv) {
  // --help before the command's `--` prints the usage and succeeds.
  for (int i = 0; i < argc && std::string_view(argv[i]) != "--"; ++i) {
    if (std::string_view(argv[i]) == "-h" || std::string_view(argv[i]) == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  }
  std::optional<LaunchOptions> options = parseLaunchOptions(argc, argv);
  if (!options || !readRankAllocator(*options)) {
    return kUsageError;
  }
  int port = options->port;
  if (port == 0) {
    std::optional<int> free_port = findRendezvousPort();
    if (!free_port) {
      printError(std::string("cannot find a free port on 127.0.0.1: ") + std::strerror(errno) +
                 "; pass --port P");
      return kUsageError;
    }
    port = *free_port;
  }

  // The ranks meet in a file in a folder only this user can enter, not on
  // a port that every interface's strangers can reach (docs/multidevice.md,
  // "Who can join a job"). MASTER_PORT stays for commands that run torch's
  // own rendezvous.
  const char* temporary = std::getenv("TMPDIR");
  std::string folder =
      std::string(temporary != nullptr && *temporary ? temporary : "/tmp") + "/hostir-job-XXXXXX";
  if (::mkdtemp(folder.data()) == nullptr) {  // mode 0700
    printError("cannot make a private folder for the ranks' rendezvous file (" + folder +
               "): " + std::strerror(errno) + "; set TMPDIR to a writable folder");
    return kUsageError;
  }
  options->store_file = folder + "/store";
  const int result = superviseJob(*options, port);
  std::error_code ignored;
  std::filesystem::remove_all(folder, ignored);
  return result;
}

bool launchedAsRank() {
  return LaunchEnvironment::fromEnvironment().launcher != "none";
}

int relaunchAsRanks(int64_t ranks, const std::string& subcommand,
                    const std::vector<std::string>& args) {
  std::vector<std::string> launch{"-n", std::to_string(ranks), "--", "/proc/self/exe", subcommand};
  launch.insert(launch.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : launch) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  return runLaunchCommand(static_cast<int>(launch.size()), argv.data());
}

}  // namespace hostir
