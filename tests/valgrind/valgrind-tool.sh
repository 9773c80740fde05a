#!/bin/sh
# The pisession tool under valgrind, for tests/golden/run.sh (which takes the
# path of the tool): make check-valgrind runs
#     tests/golden/run.sh tests/valgrind/valgrind-tool.sh
# The real tool is $PS_VALGRIND_TOOL (default build/pisession); valgrind's
# report goes to $PS_VALGRIND_LOGDIR/tool.PID.log (default
# tests/valgrind/artifacts); an error or a definite leak makes the command
# exit with status 1, which fails the golden case.
here=$(cd "$(dirname "$0")" && pwd)
real=${PS_VALGRIND_TOOL:-$here/../../build/pisession}
logdir=${PS_VALGRIND_LOGDIR:-$here/artifacts}
mkdir -p "$logdir"
exec valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
	--log-file="$logdir/tool.%p.log" "$real" "$@"
