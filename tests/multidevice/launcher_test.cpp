// `hostir launch`: environment, output prefixes, failure propagation, and
// the failure of a real multi-rank program whose rank exits mid-way, and
// fault injection (issue 11). Each test runs the launcher in a forked child
// with its output in files. This process is a child subreaper: a rank that
// the launcher leaves behind becomes its child, so every launch can count
// the processes left behind once the launcher has exited.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "launch_command.h"

namespace hostir {
namespace {

struct LaunchResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  double seconds = 0;
  // Processes of the job still alive after the launcher exited (killed
  // once counted).
  int left_behind = 0;
};

// The live children of this process (orphaned ranks reparented to it),
// after reaping those that have exited.
std::vector<pid_t> liveChildren() {
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  std::vector<pid_t> children;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) {
    return children;
  }
  const std::string me = std::to_string(::getpid());
  while (dirent* entry = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0) {
      continue;
    }
    std::ifstream stat("/proc/" + std::string(entry->d_name) + "/stat");
    std::string line;
    std::getline(stat, line);
    // pid (comm) state ppid ...: comm may hold spaces, so parse after ')'.
    const size_t close = line.rfind(')');
    if (close == std::string::npos) {
      continue;
    }
    std::istringstream rest(line.substr(close + 1));
    std::string state;
    std::string ppid;
    rest >> state >> ppid;
    if (ppid == me && state != "Z") {
      children.push_back(pid);
    }
  }
  ::closedir(proc);
  return children;
}

std::string readFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream ss;
  ss << file.rdbuf();
  return ss.str();
}

LaunchResult launch(std::vector<std::string> args,
                    const std::map<std::string, std::string>& env = {}) {
  char out_path[] = "/tmp/hostir_launch_out_XXXXXX";
  char err_path[] = "/tmp/hostir_launch_err_XXXXXX";
  int out_fd = ::mkstemp(out_path);
  int err_fd = ::mkstemp(err_path);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    for (const auto& [name, value] : env) {
      ::setenv(name.c_str(), value.c_str(), 1);
    }
    std::vector<char*> argv;
    for (std::string& arg : args) {
      argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    std::_Exit(runLaunchCommand(static_cast<int>(args.size()), argv.data()));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  LaunchResult result;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  // A rank that exits a moment after the launcher is still one it did not
  // wait for; allow the kernel 100 ms to reparent and report it.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (pid_t orphan : liveChildren()) {
    ++result.left_behind;
    ::kill(orphan, SIGKILL);
    ::waitpid(orphan, nullptr, 0);
  }
  result.out = readFile(out_path);
  result.err = readFile(err_path);
  ::close(out_fd);
  ::close(err_fd);
  ::unlink(out_path);
  ::unlink(err_path);
  return result;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(LauncherTest, SetsTheTorchrunEnvironmentForEveryRank) {
  LaunchResult result = launch(
      {"-n", "3", "--port", "29731", "--", "sh", "-c",
       "echo env $RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  for (int rank = 0; rank < 3; ++rank) {
    const std::string r = std::to_string(rank);
    EXPECT_TRUE(
        contains(result.out, "[rank " + r + "] env " + r + " 3 " + r + " 3 127.0.0.1 29731\n"))
        << result.out;
  }
}

// Ranks start with glibc's malloc advising huge pages, unless the user set
// GLIBC_TUNABLES (even empty): theirs reach the ranks unchanged.
TEST(LauncherTest, RanksGetGlibcsHugePagesUnlessTheUserSetItsTunables) {
  const char* own = std::getenv("GLIBC_TUNABLES");
  const std::string saved = own == nullptr ? "" : own;
  const std::vector<std::string> echo = {"-n", "2",  "--",
                                         "sh", "-c", "echo \"tunables=${GLIBC_TUNABLES-unset}\""};
  ::unsetenv("GLIBC_TUNABLES");
  LaunchResult result = launch(echo);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "[rank 1] tunables=glibc.malloc.hugetlb=1\n")) << result.out;
  for (const char* users : {"glibc.malloc.hugetlb=0", ""}) {
    ::setenv("GLIBC_TUNABLES", users, 1);
    result = launch(echo);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(contains(result.out, "[rank 0] tunables=" + std::string(users) + "\n"))
        << result.out;
  }
  if (own == nullptr) {
    ::unsetenv("GLIBC_TUNABLES");
  } else {
    ::setenv("GLIBC_TUNABLES", saved.c_str(), 1);
  }
}

// HOSTIR_MALLOC=jemalloc: every rank runs with Debian's libjemalloc2
// preloaded (it is mapped into the rank's process) and told never to give
// freed pages back, after any library the user preloads; unset or system:
// nothing preloaded; anything else: an error naming the variable, no rank
// started.
TEST(LauncherTest, HostirMallocPreloadsJemallocIntoEveryRank) {
  const char* own = std::getenv("HOSTIR_MALLOC");
  const std::string saved = own == nullptr ? "" : own;
  const std::vector<std::string> report = {
      "-n",
      "2",
      "--",
      "sh",
      "-c",
      "echo \"preload=${LD_PRELOAD-unset} conf=${MALLOC_CONF-unset} "
      "mapped=$(grep -c libjemalloc.so.2 /proc/$$/maps)\""};
  ::unsetenv("HOSTIR_MALLOC");
  LaunchResult result = launch(report);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "[rank 1] preload=unset conf=unset mapped=0\n")) << result.out;

  ::setenv("HOSTIR_MALLOC", "jemalloc", 1);
  result = launch(report);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.err, "cannot be used by a sanitizer's build")) << result.err;
#else
  EXPECT_EQ(result.exit_code, 0) << result.err;  // ./hostir.sh installs libjemalloc2
  for (const char* rank : {"[rank 0] ", "[rank 1] "}) {
    const size_t line = result.out.find(rank);
    ASSERT_NE(line, std::string::npos) << result.out;
    const std::string text = result.out.substr(line, result.out.find('\n', line) - line);
    EXPECT_TRUE(
        contains(text, "/libjemalloc.so.2 conf=dirty_decay_ms:-1,muzzy_decay_ms:-1,thp:always "))
        << text;
    EXPECT_FALSE(contains(text, "mapped=0")) << text;
  }
#endif

  ::setenv("HOSTIR_MALLOC", "tcmalloc", 1);
  result = launch(report);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.err, "HOSTIR_MALLOC='tcmalloc' is not an allocator")) << result.err;
  EXPECT_FALSE(contains(result.out, "[rank 0]")) << result.out;

  if (own == nullptr) {
    ::unsetenv("HOSTIR_MALLOC");
  } else {
    ::setenv("HOSTIR_MALLOC", saved.c_str(), 1);
  }
}

TEST(LauncherTest, PicksAFreePortWhenNoneIsGiven) {
  LaunchResult result = launch({"-n", "2", "--", "sh", "-c", "echo port=$MASTER_PORT"});
  EXPECT_EQ(result.exit_code, 0);
  const size_t at = result.out.find("port=");
  ASSERT_NE(at, std::string::npos) << result.out;
  const int port = std::atoi(result.out.c_str() + at + 5);
  EXPECT_GE(port, 1024);
  // Below the ephemeral range: a concurrent job's outgoing connections
  // cannot take it between the pick and rank 0's bind.
  EXPECT_LT(port, ephemeralPortRange().first);
}

TEST(LauncherTest, RendezvousPortsAreBelowTheEphemeralRangeAndVary) {
  const auto [low, high] = ephemeralPortRange();
  EXPECT_LT(1024, low);
  EXPECT_LE(low, high);
  std::set<int> seen;
  for (int i = 0; i < 20; ++i) {
    std::optional<int> port = findRendezvousPort();
    ASSERT_TRUE(port.has_value());
    EXPECT_GE(*port, std::max(1024, low - 10000));
    EXPECT_LT(*port, low);
    seen.insert(*port);
  }
  EXPECT_GT(seen.size(), 1u) << "concurrent launches must not all pick one port";
}

TEST(LauncherTest, PrefixesEveryLineOfStdoutAndStderr) {
  LaunchResult result =
      launch({"-n", "2", "--", "sh", "-c", "printf 'one\\ntwo\\nno newline'; echo oops >&2"});
  EXPECT_EQ(result.exit_code, 0);
  for (const std::string rank : {"0", "1"}) {
    EXPECT_TRUE(contains(result.out, "[rank " + rank + "] one\n[rank " + rank + "] two\n"))
        << result.out;
    EXPECT_TRUE(contains(result.out, "[rank " + rank + "] no newline\n")) << result.out;
    EXPECT_TRUE(contains(result.err, "[rank " + rank + "] oops\n")) << result.err;
  }
}

TEST(LauncherTest, AFailingRankEndsTheOthersAndTheLaunch) {
  LaunchResult result = launch({"-n", "3", "--grace-period", "1", "--", "sh", "-c",
                                "if [ $RANK = 1 ]; then exit 3; fi; sleep 60"});
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_LT(result.seconds, 10.0) << "the sleeping ranks must have been ended";
  EXPECT_TRUE(contains(result.err, "rank 1 exited with status 3")) << result.err;
}

TEST(LauncherTest, RanksIgnoringSigtermAreKilledAfterTheGracePeriod) {
  LaunchResult result = launch({"-n", "2", "--grace-period", "0.5", "--", "sh", "-c",
                                "if [ $RANK = 0 ]; then exit 5; fi; trap '' TERM; "
                                "while true; do sleep 0.1; done"});
  EXPECT_EQ(result.exit_code, 5);
  EXPECT_LT(result.seconds, 10.0);
}

TEST(LauncherTest, ARankKilledBySignalFailsTheLaunch) {
  LaunchResult result = launch({"-n", "2", "--", "sh", "-c", "kill -9 $$"});
  EXPECT_EQ(result.exit_code, 128 + 9);
  EXPECT_TRUE(contains(result.err, "killed by signal 9")) << result.err;
}

TEST(LauncherTest, BadUsageExplainsWhatIsValid) {
  LaunchResult zero = launch({"-n", "0", "--", "true"});
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_TRUE(contains(zero.err, "-n must be a whole number >= 1")) << zero.err;
  LaunchResult no_command = launch({"-n", "2"});
  EXPECT_EQ(no_command.exit_code, 2);
  EXPECT_TRUE(contains(no_command.err, "missing the command")) << no_command.err;
  LaunchResult bad_port = launch({"-n", "2", "--port", "0", "--", "true"});
  EXPECT_EQ(bad_port.exit_code, 2);
  LaunchResult missing = launch({"-n", "1", "--", "/nonexistent/program"});
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_TRUE(contains(missing.err, "cannot run '/nonexistent/program'")) << missing.err;
}

// A real job: device 1 exits (status 0) in the middle of the program; device
// 0's next collective fails within the timeout with an error naming it, so
// the launch fails.
TEST(LauncherTest, ARankThatExitsMidProgramFailsTheOthersCollective) {
  LaunchResult result =
      launch({"-n", "2", "--", HOSTIR_COLLECTIVES_TEST_BINARY, "--gtest_filter=RankFailure.*"},
             {{"HOSTIR_TEST_RANK_EXIT", "1"}, {"HOSTIR_COMM_TIMEOUT_S", "10"}});
  const std::string output = result.out + result.err;
  EXPECT_NE(result.exit_code, 0) << output;
  EXPECT_TRUE(contains(output, "[rank 0]")) << output;
  EXPECT_TRUE(contains(output, "Allreduce (Communication")) << output;
  EXPECT_TRUE(contains(output, "over team (0 1)")) << output;
  // Gloo sees the closed connection at once, so the collective fails long
  // before its timeout (10 s); after a failed collective the survivor's
  // shutdown waits at most 1 s for the others, not another whole timeout for
  // the dead rank (which made the job last more than 10 s).
  EXPECT_LT(result.seconds, 9.0) << output;
  EXPECT_EQ(result.left_behind, 0);
}

// The same with a failing exit status: the launcher ends the survivor.
TEST(LauncherTest, ARankThatFailsMidProgramEndsTheJob) {
  LaunchResult result = launch({"-n", "2", "--grace-period", "1", "--",
                                HOSTIR_COLLECTIVES_TEST_BINARY, "--gtest_filter=RankFailure.*"},
                               {{"HOSTIR_TEST_RANK_EXIT", "2"}, {"HOSTIR_COMM_TIMEOUT_S", "30"}});
  // Device 0 may fail (its peer is gone) before the launcher reaps device 1.
  EXPECT_NE(result.exit_code, 0) << result.out << result.err;
  EXPECT_TRUE(contains(result.err, "stopping the other ranks")) << result.err;
  EXPECT_LT(result.seconds, 25.0);
  EXPECT_EQ(result.left_behind, 0);
}

// The check the fault-injection tests rely on: a process that a rank leaves
// running (a background sleep outliving its shell) is counted.
TEST(LauncherTest, AProcessLeftBehindIsCounted) {
  LaunchResult result =
      launch({"-n", "1", "--", "sh", "-c", "sleep 30 </dev/null >/dev/null 2>&1 & exit 0"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.left_behind, 1);
}

// Issue 22: `kill -9` of the launcher leaves no rank running (before, the
// ranks outlived it until their own end). The ranks say they started, then
// sleep; once the launcher is killed, its orphaned ranks would become this
// process's children (a subreaper), so none may be alive within 10 s.
TEST(LauncherTest, RanksDieWithAKilledLauncher) {
  char out_path[] = "/tmp/hostir_launch_out_XXXXXX";
  int out_fd = ::mkstemp(out_path);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  pid_t launcher = ::fork();
  if (launcher == 0) {
    ::dup2(out_fd, STDOUT_FILENO);
    std::vector<std::string> args{"-n", "2", "--", "sh", "-c", "echo started; exec sleep 60"};
    std::vector<char*> argv;
    for (std::string& arg : args) {
      argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    std::_Exit(runLaunchCommand(static_cast<int>(args.size()), argv.data()));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::string out;
  while (std::chrono::steady_clock::now() < deadline) {
    out = readFile(out_path);
    if (contains(out, "[rank 0] started") && contains(out, "[rank 1] started")) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(launcher, SIGKILL);
  ::waitpid(launcher, nullptr, 0);
  EXPECT_TRUE(contains(out, "[rank 1] started")) << out;
  std::vector<pid_t> left = liveChildren();
  const auto gone_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!left.empty() && std::chrono::steady_clock::now() < gone_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    left = liveChildren();
  }
  EXPECT_TRUE(left.empty()) << left.size() << " rank(s) outlived the launcher";
  for (pid_t orphan : left) {
    ::kill(orphan, SIGKILL);
    ::waitpid(orphan, nullptr, 0);
  }
  ::close(out_fd);
  ::unlink(out_path);
}

// Fault injection (issue 11): a 2-rank job of FaultInjection (in the
// reliability test binary, fault_injection_test.cpp) with one fault. Every
// rank that is not the dead one must end with a clear error naming the
// cause within `bound_s`, the launcher must exit non-zero and leave no
// process behind. The communication timeout is 3 s.
struct Fault {
  std::string name;
  std::vector<int> failing_ranks;
  std::vector<std::string> message_parts;
  double bound_s;
};

void expectFaultEndsTheJob(const Fault& fault) {
  SCOPED_TRACE(fault.name);
  LaunchResult result = launch({"-n", "2", "--grace-period", "1", "--",
                                HOSTIR_RELIABILITY_TEST_BINARY, "--gtest_filter=FaultInjection.*"},
                               {{"HOSTIR_TEST_FAULT", fault.name}, {"HOSTIR_COMM_TIMEOUT_S", "3"}});
  const std::string output = result.out + result.err;
  EXPECT_NE(result.exit_code, 0) << output;
  for (int rank : fault.failing_ranks) {
    const std::string prefix = "[rank " + std::to_string(rank) + "] fault injection: device " +
                               std::to_string(rank) + " failed: ";
    const size_t at = result.err.find(prefix);
    ASSERT_NE(at, std::string::npos) << output;
    // The message may span lines (a communication prints its tensors on
    // continuation lines): look in what follows the prefix.
    const std::string line = result.err.substr(at, 2000);
    for (const std::string& part : fault.message_parts) {
      EXPECT_TRUE(contains(line, part)) << "missing \"" << part << "\" in\n" << line;
    }
  }
  EXPECT_FALSE(contains(output, "saw no error")) << output;
  EXPECT_FALSE(contains(output, "terminate called")) << output;
  EXPECT_LT(result.seconds, fault.bound_s) << output;
  EXPECT_EQ(result.left_behind, 0) << output;
}

// Device 1 exits (status 0) after joining, before the program's first
// collective (the cross-rank check): device 0 waits for it to reach that
// collective for the communication timeout T = 3 s, then fails. Bound
// asserted: 25 s (T, a shutdown of at most 1 s, two libtorch start-ups and
// the executor's construction on a loaded 2-core machine: 12-16 s measured).
TEST(LauncherTest, FaultInjectionRankDeadBeforeTheFirstCollective) {
  expectFaultEndsTheJob({"dead_before_first_collective",
                         {0},
                         {"creating the process group of team (0 1)",
                          "every member must reach its first collective", "within 3 s"},
                         25.0});
}

// Device 1 exits after one complete run: device 0's next collective sees
// the closed connection at once. Since issue 22 that collective is the
// cross-rank check every run starts with, not the program's allgather. Bound asserted: 20 s
// (start-ups, two runs, a shutdown of at most 1 s after a failed collective: 7-11 s measured).
TEST(LauncherTest, FaultInjectionRankDeadAfterTheFirstCollective) {
  expectFaultEndsTheJob({"dead_after_first_collective",
                         {0},
                         {"the check that all ranks run the same program failed",
                          "a member of its team may have exited"},
                         20.0});
}

// Shards that disagree: both ranks raise before any collective of the
// program (one allgather of the check). Bound asserted: 20 s (start-ups:
// 6-9 s measured).
TEST(LauncherTest, FaultInjectionMismatchedShards) {
  expectFaultEndsTheJob({"mismatched_shards",
                         {0, 1},
                         {"uneven shards", "T0_g_float", "rank 0 holds 4", "rank 1 holds 5"},
                         20.0});
}

// Programs that differ: both ranks raise before any collective of the
// program. Bound asserted: 20 s (start-ups: 6-9 s measured).
TEST(LauncherTest, FaultInjectionMismatchedPrograms) {
  expectFaultEndsTheJob(
      {"mismatched_programs", {0, 1}, {"the ranks run different programs"}, 20.0});
}

}  // namespace
}  // namespace hostir
