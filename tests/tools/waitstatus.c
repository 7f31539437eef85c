/*
 * waitstatus.c - runs a command and prints how it ended, exactly: "exit N" or "signal N". A
 * shell's $? cannot tell exit(143) from death by SIGTERM; run.sh needs to (gpuprio run execs the
 * command, so when the command dies of a signal, the process started as gpuprio dies of it).
 *
 *   waitstatus CMD [ARGS...]
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: waitstatus CMD [ARGS...]\n");
        return 2;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("waitstatus: fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        perror("waitstatus: exec");
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid) {
        perror("waitstatus: waitpid");
        return 2;
    }
    if (WIFSIGNALED(status))
        printf("signal %d\n", WTERMSIG(status));
    else
        printf("exit %d\n", WEXITSTATUS(status));
    return 0;
}
