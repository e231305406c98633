/*
 * statbisect watch: the command-line client's watch commands (issue 12),
 * over /api/v1/watches and the push hook.
 */
#ifndef STATBISECT_CLI_WATCH_H
#define STATBISECT_CLI_WATCH_H

/*
 * Runs "statbisect watch SUBCOMMAND ..." with argv[0] = "watch": add,
 * list, show, pause, resume, delete, history, push.  Returns the exit
 * status: 0 done, 2 any failure (the message on standard error).
 */
int watch_main(int argc, char **argv);

#endif
