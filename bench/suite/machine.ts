// The machine a benchmark run measured on, as every report states it: figures
// from different machines (or a loaded one) are not comparable, ratios from
// the same run are. Read once from node:os at the start of a run.
import os from 'node:os';

export interface MachineInfo {
  readonly cpuModel: string;
  /** Logical cores the OS reports. */
  readonly cores: number;
  readonly memoryMb: number;
  readonly node: string;
  /** e.g. "Linux linux x64". */
  readonly os: string;
  /** Kernel release and build string. */
  readonly kernel: string;
  readonly hostname: string;
  /** 1, 5 and 15 minute load averages at the start: a loaded machine shows lower absolute figures. */
  readonly loadAverage: readonly number[];
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryMb: Math.round(os.totalmem() / (1024 * 1024)),
    node: process.version,
    os: `${os.type()} ${os.platform()} ${os.arch()}`,
    kernel: `${os.release()} ${os.version()}`,
    hostname: os.hostname(),
    loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

/** One line for logs and report headers. */
export function describeMachine(m: MachineInfo): string {
  return `${m.cpuModel}, ${m.cores} cores, ${(m.memoryMb / 1024).toFixed(1)} GiB RAM, Node.js ${m.node}, ${m.os}, kernel ${m.kernel.split(' ')[0]}`
    + `, load ${m.loadAverage.join(' ')}`;
}
