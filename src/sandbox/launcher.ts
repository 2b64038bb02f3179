// What runs first inside a jail: starts the sandbox's end of the egress bridge (socat, or the
// node forwarder where socat is missing) listening on 127.0.0.1:3128 in the jail's own network
// namespace, waits until it listens, then execs `bash -c <command>` in the requested directory.
// The forwarder dies with the command (it is in the command's PID namespace).
import { settings } from '../config.js';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

/** How the jail's end of the bridge is made: socat, the node script, or none (no network namespace). */
export type ForwarderKind = 'socat' | 'node' | 'none';

/** Inside the jail: the egress socket, the forwarder script, node, the CA files. */
export const AGENT_DIR = '/run/agent-service';

export const FORWARDER_SCRIPT = fileURLToPath(new URL('./assets/egress-forwarder.mjs', import.meta.url));

// 0100007F:0C38 is 127.0.0.1:3128 in /proc/net/tcp; state 0A is LISTEN.
const LAUNCH = `kind=$1; cwd=$2; cmd=$3; D=${AGENT_DIR}
case $kind in
  socat) socat TCP-LISTEN:3128,bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:$D/egress.sock </dev/null >/dev/null 2>&1 & ;;
  node) $D/node $D/egress-forwarder.mjs 127.0.0.1:3128 $D/egress.sock </dev/null >/dev/null 2>&1 & ;;
esac
if [ "$kind" != none ]; then
  i=0
  while [ $i -lt 1000 ] && ! grep -q '0100007F:0C38 00000000:0000 0A' /proc/net/tcp 2>/dev/null; do i=$((i+1)); sleep 0.005; done
fi
cd "$cwd" 2>/dev/null || { echo "cd: $cwd: No such directory" >&2; exit 1; }
unset OLDPWD
exec /bin/bash -c "$cmd"`;

/** argv (inside the jail) that starts the forwarder and then the command. */
export function launchArgs(kind: ForwarderKind, cwd: string, command: string): string[] {
  return ['/bin/sh', '-c', LAUNCH, 'launch', kind, cwd, command];
}

let socatPresent: boolean | undefined;
/** socat where the host has it (the jail sees the host's /usr), else the node script (SANDBOX_FORWARDER=node forces it). */
export function forwarderKind(): Exclude<ForwarderKind, 'none'> {
  socatPresent ??= ['/usr/bin/socat', '/bin/socat'].some((p) => fs.existsSync(p));
  return socatPresent && settings.sandboxForwarder() !== 'node' ? 'socat' : 'node';
}

/** Host files bound read-only at AGENT_DIR in every jail (the socket itself is added per session). */
export function agentFiles(ca: { cert: string; bundle: string } | null): [string, string][] {
  const files: [string, string][] = [
    [FORWARDER_SCRIPT, `${AGENT_DIR}/egress-forwarder.mjs`],
    [process.execPath, `${AGENT_DIR}/node`],
  ];
  if (ca) files.push([ca.cert, `${AGENT_DIR}/ca.crt`], [ca.bundle, `${AGENT_DIR}/ca-bundle.crt`]);
  return files;
}
