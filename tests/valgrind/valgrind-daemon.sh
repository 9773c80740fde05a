#!/bin/sh
# The daemon under valgrind, for tests/mount/run.sh (which takes the path of
# the daemon): make check-valgrind runs
#     tests/mount/run.sh tests/valgrind/valgrind-daemon.sh
# The real daemon is $PS_VALGRIND_DAEMON (default build/pisessionfs).
# valgrind's report goes to $PS_VALGRIND_LOGDIR/daemon.PID.log (default
# tests/valgrind/artifacts), not to stderr, which the tests read; an error or
# a definite leak makes the daemon exit with status 1, which the tests'
# unmount check reports.
here=$(cd "$(dirname "$0")" && pwd)
real=${PS_VALGRIND_DAEMON:-$here/../../build/pisessionfs}
logdir=${PS_VALGRIND_LOGDIR:-$here/artifacts}
mkdir -p "$logdir"
exec valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
	--child-silent-after-fork=yes --log-file="$logdir/daemon.%p.log" "$real" "$@"
