// Progress of a suite run on stderr: a cli-progress bar for the workload in
// progress when stderr is a terminal (finished workloads leave a summary
// line above it), plain lines — a start and a summary per workload — when it
// is not (CI logs, pipes), or nothing. stdout is left to the report.
import cliProgress from 'cli-progress';

export type ProgressMode = 'auto' | 'bars' | 'lines' | 'none';

export interface WorkloadProgress {
  update(done: number): void;
  /** Removes the bar (if any) and prints the summary line. */
  end(summary: string): void;
}

export interface ProgressSink {
  log(line: string): void;
  begin(title: string, total: number, unit: string): WorkloadProgress;
  stop(): void;
}

const TITLE_WIDTH = 52;

export function progressSink(mode: ProgressMode, stream: NodeJS.WriteStream = process.stderr): ProgressSink {
  const resolved = mode === 'auto' ? (stream.isTTY ? 'bars' : 'lines') : mode;
  if (resolved === 'none') return { log: () => undefined, begin: () => ({ update: () => undefined, end: () => undefined }), stop: () => undefined };
  if (resolved === 'lines') return linesSink(stream);
  return barsSink(stream);
}

function linesSink(stream: NodeJS.WritableStream): ProgressSink {
  const log = (line: string): void => {
    stream.write(`${line}\n`);
  };
  return {
    log,
    begin: (title, total, unit) => {
      log(`${title}: started (${total.toLocaleString('en-US')} ${unit})`);
      return { update: () => undefined, end: (summary) => log(`${title}: ${summary}`) };
    },
    stop: () => undefined,
  };
}

function barsSink(stream: NodeJS.WritableStream): ProgressSink {
  const multi = new cliProgress.MultiBar({
    stream,
    format: '{title} [{bar}] {percentage}% | {value}/{total} {unit} | {duration_formatted}',
    hideCursor: true,
    clearOnComplete: false,
    autopadding: true,
    barsize: 24,
  }, cliProgress.Presets.shades_classic);
  return {
    log: (line) => multi.log(`${line}\n`),
    begin: (title, total, unit) => {
      const bar = multi.create(Math.max(1, total), 0, { title: title.slice(0, TITLE_WIDTH).padEnd(TITLE_WIDTH), unit });
      return {
        update: (done) => bar.update(Math.min(done, Math.max(1, total))),
        end: (summary) => {
          multi.remove(bar);
          multi.log(`${title}: ${summary}\n`);
        },
      };
    },
    stop: () => multi.stop(),
  };
}
