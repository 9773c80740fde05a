#!/usr/bin/env bash
# Model-based test of the write path (tests/model/wpmodel.py, README
# there): random sequences of open (O_CREAT, O_EXCL, O_TRUNC, O_APPEND,
# O_RDONLY/O_WRONLY/O_RDWR), dup, fork, exit, write, pwrite, lseek,
# ftruncate, fsync, close, read, labels, unlink, rename and side files,
# from several processes that share descriptors as a shell does and from
# threads reading a file while another writes and fsyncs it; each on a
# fresh session.  Every call's answer, the session file's entries (read in
# the store) and .pisessionfs/rejected/ must agree with the model of
# docs/layout.md "When a write is committed"; every call is bounded in
# time (a hang prints the daemon's stacks, gdb).  A failure is shrunk to a
# short sequence and printed with its seed, replayable.
#
#   t_model.sh DAEMON [--quick]
#
# --quick (CI): seeds 1.. for up to MODEL_SECONDS (150 s) or MODEL_COUNT
# (2500) sequences.  Full (make stress): MODEL_COUNT 20000 within 800 s,
# from a seed that changes every day (printed; MODEL_SEED=N repeats it).
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh" "$@"

if ((QUICK)); then
	COUNT=${MODEL_COUNT:-2500}
	SECS=${MODEL_SECONDS:-150}
	SEED=${MODEL_SEED:-1}
	SHRINK=40
else
	COUNT=${MODEL_COUNT:-20000}
	SECS=${MODEL_SECONDS:-800}
	DAY=$(($(date +%s) / 86400))
	SEED=${MODEL_SEED:-$((DAY % 10000 * 100000 + 1))}
	SHRINK=150
fi
note "seeds $SEED.. (MODEL_SEED=$SEED MODEL_COUNT=$COUNT repeats them)"
mkdir -p "$T_DIR/model"
# Two kinds of failure are shrunk (each within SHRINK seconds), the rest
# listed: the run fits the runner's budget (300 s quick, 1200 s full).
py_checks timeout -s KILL "$(scaled_int $((SECS + 2 * SHRINK + 60)))" \
	python3 "$ROOT_DIR/tests/model/wpmodel.py" --daemon "$DAEMON" --dir "$T_DIR/model" \
	--seed "$SEED" --count "$COUNT" --seconds "$(scaled_int "$SECS")" --shrink-seconds "$SHRINK" --max-failures 2
finish
