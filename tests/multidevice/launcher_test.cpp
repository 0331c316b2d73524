// `hostir launch`: environment, output prefixes, failure propagation, and
// the failure of a real multi-rank program whose rank exits mid-way. Each
// test runs the launcher in a forked child with its output in files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "launch_command.h"

namespace hostir {
namespace {

struct LaunchResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  double seconds = 0;
};

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

TEST(LauncherTest, PicksAFreePortWhenNoneIsGiven) {
  LaunchResult result = launch({"-n", "2", "--", "sh", "-c", "echo port=$MASTER_PORT"});
  EXPECT_EQ(result.exit_code, 0);
  const size_t at = result.out.find("port=");
  ASSERT_NE(at, std::string::npos) << result.out;
  EXPECT_GT(std::atoi(result.out.c_str() + at + 5), 0);
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
}

}  // namespace
}  // namespace hostir
