// The argv the driver execs in a sandbox pod: a command wrapper (own process group recorded so
// a timeout can kill the whole tree, the session's variables, the working directory) and the
// file operations, contained to /workspace by the pod itself (symlinks resolved there).
const EXEC_DIR = '/tmp/.agent-exec';

// $1 id, $2 cwd, $3 command, then NAME=value pairs.
const RUN = `id=$1; cwd=$2; cmd=$3; shift 3
mkdir -p ${EXEC_DIR} 2>/dev/null
cd "$cwd" 2>/dev/null || { echo "cd: $cwd: No such directory" >&2; exit 1; }
env "$@" setsid -w /bin/sh -c 'echo $$ > "$0"; exec /bin/bash -c "$1"' "${EXEC_DIR}/$id" "$cmd"
s=$?
rm -f "${EXEC_DIR}/$id"
exit $s`;

export function runArgv(id: string, cwd: string, command: string, env: Record<string, string>): string[] {
  return ['/bin/sh', '-c', RUN, 'agent-exec', id, cwd, command, ...Object.entries(env).map(([k, v]) => `${k}=${v}`)];
}

// A long-running process (a CLI engine): as RUN, but in the background with a control FIFO that a
// later exec writes a signal name into; the wrapper, in the process's own exec (and so its PID
// namespace, wherever execs get their own), signals the process group. stdin is kept (fd 3).
const SPAWN = `id=$1; cwd=$2; cmd=$3; shift 3
D=${EXEC_DIR}; mkdir -p $D 2>/dev/null
cd "$cwd" 2>/dev/null || { echo "cd: $cwd: No such directory" >&2; exit 1; }
ctl=$D/$id.ctl; rm -f "$ctl"; mkfifo -m 600 "$ctl" || exit 1
exec 3<&0
env "$@" setsid -w /bin/sh -c 'echo $$ > "$0"; exec /bin/bash -c "$1"' "$D/$id" "$cmd" <&3 3<&- &
child=$!
exec 3<&-
( while read -r sig < "$ctl"; do p=$(cat "$D/$id" 2>/dev/null) && kill -"$sig" -"$p" 2>/dev/null; done ) </dev/null >/dev/null 2>&1 &
watcher=$!
wait $child; s=$?
kill $watcher 2>/dev/null; rm -f "$ctl" "$D/$id"
exit $s`;

export function spawnArgv(id: string, cwd: string, command: string, env: Record<string, string>): string[] {
  return ['/bin/sh', '-c', SPAWN, 'agent-spawn', id, cwd, command, ...Object.entries(env).map(([k, v]) => `${k}=${v}`)];
}

/**
 * Signals the command's whole process group: through the control FIFO of a spawned process when
 * there is one, and directly (SIGKILL also forgets it; SIGTERM lets it end by itself).
 */
export function killArgv(id: string, signal: 'KILL' | 'TERM' = 'KILL'): string[] {
  const viaFifo = `[ -p ${EXEC_DIR}/$1.ctl ] && timeout 5 sh -c 'echo ${signal} > "$0"' ${EXEC_DIR}/$1.ctl 2>/dev/null`;
  const direct = `p=$(cat ${EXEC_DIR}/$1 2>/dev/null) && kill -${signal} -$p 2>/dev/null`;
  const forget = signal === 'KILL' ? `; rm -f ${EXEC_DIR}/$1` : '';
  return ['/bin/sh', '-c', `${viaFifo}; ${direct}${forget}; true`, 'agent-kill', id];
}

// Exit codes: 3 outside /workspace, 4 not found, 5 is a directory, 6 not a regular file,
// 7 under a read-only directory.
export const FILE_EXIT = { outside: 3, missing: 4, directory: 5, irregular: 6, readOnly: 7 } as const;

// $1 op, $2 path, $3 arg, then the read-only directories a write or removal must stay out of
// (compared after resolving symbolic links in the pod, both sides).
const FILES = `op=$1; p=$2; arg=$3; shift 3
inside() { case "$1" in /workspace|/workspace/*) return 0;; *) return 1;; esac; }
real() { r=$(realpath -m -- "$1") && inside "$r" && printf '%s' "$r"; }
r=$(real "$p") || exit 3
case $op in write|remove|untar)
  for ro in "$@"; do ro=$(realpath -m -- "$ro"); case "$r" in "$ro"|"$ro"/*) exit 7;; esac; done ;;
esac
case $op in
  read)
    [ -d "$r" ] && exit 5; [ -e "$r" ] || exit 4; [ -f "$r" ] || exit 6
    if [ -n "$arg" ]; then exec head -c "$arg" -- "$r"; else exec cat -- "$r"; fi ;;
  write)
    [ -d "$r" ] && exit 5
    mkdir -p -- "$(dirname -- "$r")" || exit 1
    [ -e "$r" ] && { [ -f "$r" ] || exit 6; chmod u+w -- "$r"; }
    cat > "$r" && { [ -z "$arg" ] || chmod "$arg" -- "$r"; } ;;
  stat)
    if [ -d "$r" ]; then echo "dir $(stat -c %s -- "$r")"; elif [ -f "$r" ]; then echo "file $(stat -c %s -- "$r")"; elif [ -e "$r" ]; then echo "other 0"; else echo none; fi ;;
  remove)
    [ "$r" = /workspace ] && exit 3
    d=$(real "$(dirname -- "$p")") || exit 3
    chmod -R u+w -- "$d/$(basename -- "$p")" 2>/dev/null; rm -rf -- "$d/$(basename -- "$p")" ;;
  untar)
    [ "$r" = /workspace ] && exit 3
    rm -rf -- "$r" && mkdir -p -- "$r" && tar -x -C "$r" --no-same-owner ;;
  *) exit 2 ;;
esac`;

export function fileArgv(op: 'read' | 'write' | 'stat' | 'remove' | 'untar', path: string, arg = '', readOnly: string[] = []): string[] {
  return ['/bin/sh', '-c', FILES, 'agent-files', op, path, arg, ...readOnly];
}

/** The pod's record of its read-only directories (for lifting them after a restart of the service). */
const READ_ONLY_LIST = `${EXEC_DIR}/read-only`;

// Makes $2… (directories under /workspace) read-only for the pod's user: files and directories
// lose their write bits. The directories of the previous list (the pod's record, and $1: the
// driver's, newline-separated, for a pod restored from a snapshot) not in the new one get the
// owner's write bit back first. The pod's user owns the files, so a command that chmods them
// back can still write: what changes there anyway is refused when the service reads the mount
// back (src/memory/mount.ts) and overwritten before the next turn.
const READ_ONLY = `lift=$1; shift
mkdir -p ${EXEC_DIR} 2>/dev/null
{ [ -f ${READ_ONLY_LIST} ] && cat ${READ_ONLY_LIST}; printf '%s\n' "$lift"; } | while IFS= read -r d; do
  [ -n "$d" ] || continue
  keep=; for n in "$@"; do [ "$n" = "$d" ] && keep=1; done
  [ -n "$keep" ] || { [ -e "$d" ] && chmod -R u+w -- "$d"; }
done
: > ${READ_ONLY_LIST}
for d in "$@"; do
  mkdir -p -- "$d" && chmod -R a-w -- "$d" || exit 1
  printf '%s\n' "$d" >> ${READ_ONLY_LIST}
done`;

export function readOnlyArgv(paths: string[], previous: string[]): string[] {
  return ['/bin/sh', '-c', READ_ONLY, 'agent-read-only', previous.join('\n'), ...paths];
}

/** The whole workspace as a tar stream on stdout, and back from stdin. */
export const SNAPSHOT_ARGV = ['/bin/sh', '-c', 'exec tar -c -C /workspace .'];
export const RESTORE_ARGV = ['/bin/sh', '-c', 'exec tar -x -C /workspace --no-same-owner'];
