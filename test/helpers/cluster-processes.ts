// What /proc says about a WORKERS supervisor's processes: its children, and which connections
// each of them holds, so that a test knows it reached every worker.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Process ids whose parent is `pid`, read from /proc. */
export function childrenOf(pid: number | undefined): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // The process ended while the list was read.
    }
  }
  return out.sort((a, b) => a - b);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Connections a process holds whose local port is `port` (accepted ones, on a listener). */
export function connectionsOn(pid: number, port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match?.[1] !== undefined) inodes.add(match[1]);
    } catch {
      // closed meanwhile
    }
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let count = 0;
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    // local_address is field 1 (ADDR:PORT), the state field 3 (01 = established), inode 9.
    if (
      fields[1]?.endsWith(`:${hexPort}`) === true &&
      fields[3] === '01' &&
      inodes.has(fields[9] ?? '')
    )
      count += 1;
  }
  return count;
}
