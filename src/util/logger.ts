// One logger for the whole process (pino). Components take a child bound to
// {nodeId, component, ...}; pure cores receive a Logger through their
// constructor and never import pino themselves.

import { pino } from 'pino';
import { PinoPretty } from 'pino-pretty';

export interface Logger {
  trace(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

export type LogFormat = 'json' | 'pretty';

/**
 * JSON lines by default (what log shippers read); `pretty` — for a person at a
 * terminal — renders each line readably (pino-pretty, synchronously on stdout).
 */
export function createLogger(opts: { level?: LogLevel; name?: string; format?: LogFormat } = {}): Logger {
  const options = { level: opts.level ?? 'info', name: opts.name ?? 'sluice' };
  if (opts.format === 'pretty') {
    return pino(options, PinoPretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name', sync: true })) as unknown as Logger;
  }
  return pino(options) as unknown as Logger;
}

/** A logger that drops everything: the default for tests and library use. */
export const silentLogger: Logger = {
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};
