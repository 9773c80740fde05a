#!/usr/bin/env bash
# Reliability tests: tests/stress/run.sh PATH-OF-pisessionfs [--quick] [t_NAME...]
#
#   t_kill9        kill -9 of the daemon while writers append, remount, stale mount
#   t_concurrency  six writers through the mount and pi outside it, at once
#   t_diskfull     ENOSPC on a full tmpfs store, read-only stores
#   t_storegone    the store removed, truncated, replaced while mounted
#   t_escape       no path in the mount leads outside the store
#   t_million      a session of a million entries (--quick: 100,000)
#   t_sshfs        one store, two machines over sshfs (a private sshd on 127.0.0.1)
#   t_model        the write path against its model: random call sequences from
#                  several processes and threads (tests/model/README.md)
#
# t_model, the longest, starts first, so that the others run beside it
# (tests/run-suite.sh runs TEST_JOBS tests at once).
#
# --quick: CI sizes (the first six in under 2 minutes, t_sshfs in about 30 s,
# t_model 150 s); without it, `make stress`
# sizes (under 10 minutes each; t_model 800 s of sequences).  They run through the one runner,
# tests/run-suite.sh, judged as the mount tests are, and it ends with
# exactly "N passed, M failed" (tests).  Each test prints one line per
# check; the runner shows a test's notes (its figures, "# " lines) and, for
# a failed test, all but its passed checks (everything with VERBOSE=1).
#
# A test's budget only guards against a hang: it must fit the slowest
# machine the tests run on (a full t_kill9 took 533 s of a 540 s budget on
# a fresh machine, a quick one 113 s of 110 on a loaded one), so it is
# generous, and TIME_SCALE stretches it like every limit in the tests.
here=$(cd "$(dirname "$0")" && pwd)
daemon=${1:?usage: tests/stress/run.sh PATH-OF-pisessionfs [--quick] [t_NAME...]}
shift
opts=(--budget 1200)
names=()
for a in "$@"; do
	case $a in
	--quick) opts=(--budget 300 --arg --quick) ;;
	*) names+=("$a") ;;
	esac
done
exec "$here/../run-suite.sh" "${opts[@]}" \
	--default "t_model t_kill9 t_concurrency t_diskfull t_storegone t_escape t_million t_sshfs" \
	"$here" "$daemon" "${names[@]}"
