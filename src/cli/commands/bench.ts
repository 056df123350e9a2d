// `sluice bench compare [...]` and `sluice bench run <scenario...> [...]`: the
// benchmark suite from the sluice binary. The benchmarks live outside src/
// (bench/, compiled next to it), so this command only finds their entry
// point relative to its own compiled file (<out>/src/cli/commands/bench.js →
// <out>/bench/...) and runs it in a child node process with the same stdio,
// ending with the child's exit code (a signal counts as 1). The child
// validates its own flags; `run` passes everything after the scenario names
// on, so each scenario's flags (--json, --records ...) work unchanged.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Argv, ArgumentsCamelCase, CommandModule } from 'yargs';

/** The compiled bench/ folder of this build. */
export const BENCH_DIR = fileURLToPath(new URL('../../../bench/', import.meta.url));
export const COMPARE_JS = fileURLToPath(new URL('../../../bench/suite/compare.js', import.meta.url));
export const RUN_JS = fileURLToPath(new URL('../../../bench/run.js', import.meta.url));

/** Runs `node script ...args` with this process's stdio; resolves with its exit code. */
export function runNodeScript(script: string, args: readonly string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: 'inherit' });
    child.once('error', (err) => {
      process.stderr.write(`sluice bench: cannot run ${script}: ${err.message}\n`);
      resolve(1);
    });
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** The raw arguments after `bench <sub>`, as typed (yargs would reorder and camel-case them). */
export function argsAfter(argv: readonly string[], sub: string): string[] {
  const i = argv.indexOf(sub, argv.indexOf('bench') + 1);
  return i < 0 ? [] : argv.slice(i + 1).filter((a) => a !== '--');
}

interface CompareFlags {
  readonly profile: string;
  readonly systems?: string;
  readonly out?: string;
  readonly render?: string;
}

const compareCommand: CommandModule<object, CompareFlags> = {
  command: 'compare',
  describe: 'Sluice vs Apache Kafka, NATS JetStream and Redis Streams, same workloads, same run; writes JSON, Markdown and HTML reports',
  builder: (y: Argv) => y
    .usage('$0 bench compare [--profile quick|full] [--systems sluice,kafka,nats,redis] [--only KEYS] [--out DIR]')
    .option('profile', { type: 'string', choices: ['quick', 'full'], default: 'quick', describe: 'run sizes: quick (minutes) or full (the published figures)' })
    .option('systems', { type: 'string', describe: 'which systems run, comma-separated (default all)' })
    .option('only', { type: 'string', describe: 'only these deployments, comma-separated keys (kafka-r3, sluice-rf3-client, perf-tools, ...)' })
    .option('out', { type: 'string', describe: 'directory of the results files (default bench-results/)' })
    .option('render', { type: 'string', describe: 'write the .md and .html of an earlier results .json (runs nothing)' })
    .strict(false)
    .example('$0 bench compare --profile full', 'every system, full sizes')
    .example('$0 bench compare --systems sluice', 'Sluice only')
    .example('$0 bench compare --only kafka-r3,sluice-rf3-client', 'Kafka R3 against Sluice\'s real Producer/Consumer') as unknown as Argv<CompareFlags>,
  handler: async (_args: ArgumentsCamelCase<CompareFlags>) => {
    process.exit(await runNodeScript(COMPARE_JS, argsAfter(process.argv, 'compare')));
  },
};

interface RunFlags {
  readonly scenarios: string[];
}

const runCommand: CommandModule<object, RunFlags> = {
  command: 'run <scenarios..>',
  describe: 'Run benchmark scenarios (storage, raft-disk, raft, controller, produce, ...) one after another',
  builder: (y: Argv) => y
    .usage('$0 bench run <scenario...> [scenario flags]')
    .positional('scenarios', { type: 'string', array: true, describe: 'scenario names (see bench/run.ts)' })
    .strict(false)
    .example('$0 bench run storage raft', 'two scenarios')
    .example('$0 bench run produce --records 100000 --json', 'with the scenario\'s own flags') as unknown as Argv<RunFlags>,
  handler: async (_args: ArgumentsCamelCase<RunFlags>) => {
    process.exit(await runNodeScript(RUN_JS, argsAfter(process.argv, 'run')));
  },
};

export const benchCommand: CommandModule = {
  command: 'bench',
  describe: 'Benchmarks: compare with Apache Kafka, NATS and Redis, or run single scenarios',
  builder: (y) => y
    .usage('$0 bench <compare|run> [options]')
    .command(compareCommand)
    .command(runCommand)
    .demandCommand(1, 'Name a bench command: compare or run.'),
  handler: () => undefined,
};
