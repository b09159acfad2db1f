# Runs inside a Panoptes sandbox as its one long-lived process (bwrap's PID 1 is its reaper), and
# runs the commands the worker sends on standard input, one at a time. Arguments: the address
# space limit in KiB and the process limit. Both limits are set here, inside the sandbox's own
# user namespace, where the kernel counts processes per namespace: a fork bomb meets its own
# limit, not the worker's.
#
# Protocol, after this script prints "ready":
#   in:  "<nonce> <length> <seconds>\n" then <length> bytes: the command, run by bash in /work
#   out: "<nonce> <exit status> <size>\n" then <size> bytes: its output, stdout and stderr together
# The output goes to a file in its own small tmpfs, so at most that much is kept; after the
# command every process but this one is killed, so nothing left behind writes into the next one.
set -u
ulimit -c 0
ulimit -S -H -v "$1" || exit 97
ulimit -S -H -u "$2" || exit 98
printf 'ready\n'
exec 2>/dev/null
while IFS=' ' read -r nonce len secs; do
  cmd=$(head -c "$len"; printf x) || exit 99
  cmd=${cmd%x}
  out=/.panoptes/$nonce
  cd /work 2>/dev/null || cd /
  unset OLDPWD
  timeout -s KILL "$secs" nice -n 10 bash -c "$cmd" </dev/null >"$out" 2>&1
  st=$?
  kill -KILL -1
  kill -KILL -1
  size=$(stat -c %s -- "$out") || size=0
  printf '%s %s %s\n' "$nonce" "$st" "$size"
  head -c "$size" -- "$out"
  rm -f -- "$out"
done
