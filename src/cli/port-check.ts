// Is a TCP port on 127.0.0.1 free, and if not, who holds it? `sluice local`
// checks every port before it starts anything, so a clash is one clear line
// instead of a node dying half-way through start-up.
//
// The check binds and closes a listener (the only portable test). The owner
// lookup is best effort and Linux-only: /proc/net/tcp{,6} maps a listening
// port to a socket inode, and /proc/<pid>/fd maps the inode to a process we
// may inspect (our own user's). Elsewhere, or for another user's process, it
// returns undefined and the caller prints a generic hint instead. The scan is
// bounded by procScanFdsMax so a busy machine cannot stall the start.

import fs from 'node:fs';
import net from 'node:net';

/** Upper bound on the /proc/<pid>/fd entries read while looking for a port's owner. */
const PROC_SCAN_FDS_MAX = 200_000;
const CMDLINE_CHARS_MAX = 80;
const TCP_LISTEN_STATE = '0A';

export type PortState = { readonly free: true } | { readonly free: false; readonly reason: string };

/** Tries to listen on host:port; reports why not (address in use, permission denied, ...). */
export function checkPort(port: number, host: string): Promise<PortState> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (err: NodeJS.ErrnoException) => {
      const reason = err.code === 'EADDRINUSE' ? 'in use' : err.code === 'EACCES' ? 'not allowed (permission denied)' : err.message;
      resolve({ free: false, reason });
    });
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve({ free: true })));
  });
}

/** Inodes of the sockets listening on `port` (any local address), from /proc/net/tcp and tcp6. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const local = cols[1];
      if (!local || cols[3] !== TCP_LISTEN_STATE) continue;
      const hexPort = local.slice(local.lastIndexOf(':') + 1);
      if (parseInt(hexPort, 16) === port && cols[9]) inodes.add(cols[9]);
    }
  }
  return inodes;
}

function cmdlineOf(pid: string): string {
  try {
    const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a.length > 0);
    const text = args.join(' ');
    return text.length > CMDLINE_CHARS_MAX ? `${text.slice(0, CMDLINE_CHARS_MAX - 3)}...` : text;
  } catch {
    return '?';
  }
}

/** "process 1234 (node dist/src/cli/main.js server ...)" for the holder of `port`, when it can be found. */
export function portOwner(port: number): string | undefined {
  if (process.platform !== 'linux') return undefined;
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  let budget = PROC_SCAN_FDS_MAX;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // another user's process, or gone
    }
    for (const fd of fds) {
      if (--budget < 0) return undefined;
      try {
        const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m?.[1] && inodes.has(m[1])) return `process ${pid} (${cmdlineOf(pid)})`;
      } catch {
        // fd closed meanwhile
      }
    }
  }
  return undefined;
}

/** The first port of `ports` that cannot be bound, as a one-line reason naming the port and, if found, its holder. */
export async function firstBusyPort(ports: readonly number[], host: string): Promise<string | undefined> {
  for (const port of ports) {
    const state = await checkPort(port, host);
    if (state.free) continue;
    const owner = portOwner(port);
    const who = owner ? `held by ${owner}` : `is another sluice running? \`ss -ltnp 'sport = :${port}'\` shows the owner`;
    return `port ${port} on ${host} is ${state.reason} (${who}); stop it or choose another --base-port`;
  }
  return undefined;
}
