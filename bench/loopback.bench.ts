// The floor under every figure: what one message costs Node.js on loopback
// TCP on this machine, with nothing of Sluice in the way. A child process
// echoes fixed-size messages; this process keeps `window` of them in flight
// and counts. CPU per message of each side comes from /proc/PID/stat, so the
// per-batch costs in docs/performance.md can be compared with it.
// Bounded: `messages` in all; the child is killed at the end.
//
// Run: node dist/bench/loopback.bench.js [--messages N] [--bytes B] [--window W] [--json]
import { fork } from 'node:child_process';
import net from 'node:net';
import { argValue, isMain } from './cli-args.js';
import { clockTicks, cpuTicksOf } from './suite/proc-stats.js';

/** User plus system CPU seconds, and system alone, of a live process (Linux /proc). */
function cpuSecondsOf(pid: number): { total: number; system: number } {
  const t = cpuTicksOf(pid);
  return { total: (t.user + t.system) / clockTicks(), system: t.system / clockTicks() };
}

export interface LoopbackResult {
  readonly messages: number;
  readonly bytes: number;
  readonly window: number;
  readonly messagesPerS: number;
  /** CPU per message of the echo side (receive + send) and of the sending side. */
  readonly echoCpuUsPerMessage: number;
  readonly echoSysUsPerMessage: number;
  readonly senderCpuUsPerMessage: number;
}

function echoServer(): void {
  const server = net.createServer((s) => {
    s.setNoDelay(true);
    s.on('data', (d) => s.write(d));
  });
  server.listen(0, '127.0.0.1', () => process.send?.((server.address() as net.AddressInfo).port));
}

export async function runLoopbackBench(opts: { messages?: number; bytes?: number; window?: number } = {}): Promise<LoopbackResult> {
  const messages = opts.messages ?? 50_000;
  const size = opts.bytes ?? 1024;
  const window = opts.window ?? 4;
  const child = fork(new URL(import.meta.url), ['--echo-server'], { stdio: 'ignore' });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (m) => resolve(m as number));
      child.once('exit', (code) => reject(new Error(`echo server exited (${code})`)));
    });
    const sock = net.connect(port, '127.0.0.1');
    sock.setNoDelay(true);
    await new Promise<void>((resolve, reject) => { sock.once('connect', resolve); sock.once('error', reject); });
    const msg = Buffer.alloc(size, 1);
    const before = { echo: cpuSecondsOf(child.pid!), self: cpuSecondsOf(process.pid) };
    const t0 = performance.now();
    await new Promise<void>((resolve) => {
      let pending = 0;
      let got = 0;
      let sent = 0;
      sock.on('data', (d: Buffer) => {
        pending += d.length;
        while (pending >= size) {
          pending -= size;
          got++;
          if (sent < messages) {
            sent++;
            sock.write(msg);
          }
          if (got === messages) resolve();
        }
      });
      for (; sent < Math.min(window, messages); sent++) sock.write(msg);
    });
    const seconds = (performance.now() - t0) / 1000;
    const after = { echo: cpuSecondsOf(child.pid!), self: cpuSecondsOf(process.pid) };
    sock.destroy();
    const us = (s: number): number => Math.round((s * 1e6 / messages) * 10) / 10;
    return {
      messages, bytes: size, window, messagesPerS: Math.round(messages / seconds),
      echoCpuUsPerMessage: us(after.echo.total - before.echo.total),
      echoSysUsPerMessage: us(after.echo.system - before.echo.system),
      senderCpuUsPerMessage: us(after.self.total - before.self.total),
    };
  } finally {
    child.kill('SIGKILL');
  }
}

if (process.argv.includes('--echo-server')) {
  echoServer();
} else if (isMain(import.meta.url)) {
  const r = await runLoopbackBench({ messages: argValue('--messages'), bytes: argValue('--bytes'), window: argValue('--window') });
  process.stdout.write(process.argv.includes('--json') ? `${JSON.stringify(r, null, 2)}\n`
    : `Loopback TCP echo, Node.js alone (${r.bytes}-byte messages, ${r.window} in flight, ${r.messages.toLocaleString('en-US')} messages): `
      + `${r.messagesPerS.toLocaleString('en-US')} messages/s; echo side ${r.echoCpuUsPerMessage} µs CPU per message `
      + `(${r.echoSysUsPerMessage} µs system), sender ${r.senderCpuUsPerMessage} µs\n`);
}
