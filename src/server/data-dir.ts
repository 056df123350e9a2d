// The data directory of one node: formatting on first start, identity checks
// on every later start, and an exclusive lock while a process uses it.
//
//   <data-dir>/meta.properties          version, node.id, cluster.id (Kafka's file)
//   <data-dir>/__cluster_metadata-0/    the Raft metadata log (raft-disk.ts)
//   <data-dir>/.lock                    pid of the process using the directory
//
// Invariants:
//   - a directory is formatted only when it holds neither meta.properties nor
//     a metadata log (never guess the identity of existing data);
//   - meta.properties is written atomically (temp, fsync, rename, fsync dir);
//   - a start with a node id (or an explicit cluster id) different from the
//     one recorded is refused: that data belongs to another node or cluster;
//   - the cluster id of an existing directory comes from meta.properties, so
//     changing the quorum later (membership changes) keeps the identity;
//   - a live process holding `.lock` keeps others out; a lock left by a dead
//     process (kill -9) is taken over.
// Formatting and the identity checks go through an injected FileSystem (the
// simulation formats its simulated disks); the lock is about processes (pids),
// so it always uses the real disk, and a simulated node takes none.

import nodeFs from 'node:fs';
import path from 'node:path';
import { Errors, SluiceError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { NodeFileSystem, type FileSystem } from '../util/file-system.js';
import { fsyncDir, writeFileAtomic } from '../util/fs-util.js';

export const META_PROPERTIES = 'meta.properties';
export const METADATA_LOG_DIR = '__cluster_metadata-0';
export const LOCK_FILE = '.lock';
export const META_VERSION = 1;

export interface MetaProperties {
  readonly version: number;
  readonly nodeId: number;
  readonly clusterId: string;
}

export interface PreparedDataDir {
  readonly dataDir: string;
  readonly raftDir: string;
  readonly meta: MetaProperties;
  readonly formatted: boolean;
}

function storageError(message: string): SluiceError {
  return new SluiceError(Errors.KAFKA_STORAGE_ERROR, message);
}

function ioReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e.code) {
    case 'EACCES': case 'EPERM': return 'permission denied';
    case 'ENOTDIR': return 'a path component is not a directory';
    case 'EROFS': return 'read-only file system';
    case 'ENOSPC': return 'no space left on device';
    default: return e.message ?? String(err);
  }
}

/** Kafka's text format: `key=value` lines, `#` comments. */
export function parseMetaProperties(text: string, file: string): MetaProperties {
  const props = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq > 0) props.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  const version = Number(props.get('version'));
  const nodeId = Number(props.get('node.id'));
  const clusterId = props.get('cluster.id') ?? '';
  if (version !== META_VERSION || !Number.isSafeInteger(nodeId) || nodeId <= 0 || clusterId === '') {
    throw storageError(`${file} is not a valid version ${META_VERSION} meta.properties (needs version, node.id, cluster.id)`);
  }
  return { version, nodeId, clusterId };
}

export function formatMetaProperties(meta: MetaProperties): string {
  return `#Written by sluice; identifies this data directory. Do not edit.\nversion=${meta.version}\nnode.id=${meta.nodeId}\ncluster.id=${meta.clusterId}\n`;
}

/**
 * Formats `dataDir` on first use, or checks it belongs to this node. `clusterId`
 * is what this start expects: `explicit` when the operator passed --cluster-id
 * (then it must match), otherwise the derived default for a fresh directory.
 */
export function prepareDataDir(
  dataDir: string, nodeId: number, clusterId: { value: string; explicit: boolean }, logger: Logger, fs: FileSystem = NodeFileSystem,
): PreparedDataDir {
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    // Permissions are the real disk's business; a simulated one is always usable.
    if (fs === NodeFileSystem) nodeFs.accessSync(dataDir, nodeFs.constants.W_OK | nodeFs.constants.R_OK);
  } catch (err) {
    throw storageError(`data dir ${dataDir} is not usable: ${ioReason(err)}`);
  }
  const metaFile = path.join(dataDir, META_PROPERTIES);
  const raftDir = path.join(dataDir, METADATA_LOG_DIR);
  if (fs.existsSync(metaFile)) {
    const meta = parseMetaProperties(fs.readFileSync(metaFile).toString('utf8'), metaFile);
    checkIdentity(meta, dataDir, nodeId, clusterId);
    if (!fs.existsSync(raftDir)) fs.mkdirSync(raftDir);
    return { dataDir, raftDir, meta, formatted: false };
  }
  if (fs.existsSync(raftDir)) {
    throw storageError(`data dir ${dataDir} holds a metadata log but no ${META_PROPERTIES}; refusing to guess whose it is`);
  }
  const meta: MetaProperties = { version: META_VERSION, nodeId, clusterId: clusterId.value };
  try {
    fs.mkdirSync(raftDir);
    writeFileAtomic(fs, path.join(dataDir, META_PROPERTIES), formatMetaProperties(meta));
  } catch (err) {
    throw storageError(`cannot format data dir ${dataDir}: ${ioReason(err)}`);
  }
  logger.info({ dataDir, nodeId, clusterId: meta.clusterId }, 'formatted data dir');
  return { dataDir, raftDir, meta, formatted: true };
}

function checkIdentity(meta: MetaProperties, dataDir: string, nodeId: number, clusterId: { value: string; explicit: boolean }): void {
  if (meta.nodeId !== nodeId) {
    throw storageError(`data dir ${dataDir} belongs to node.id=${meta.nodeId} (meta.properties), not node ${nodeId}; refusing to start`);
  }
  if (clusterId.explicit && meta.clusterId !== clusterId.value) {
    throw storageError(`data dir ${dataDir} belongs to cluster.id=${meta.clusterId} (meta.properties), not ${clusterId.value}; refusing to start`);
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The pid of a live process other than this one that holds the data dir's
 * lock, if any (a lock file left by a process that is gone does not count).
 */
export function liveLockHolder(dataDir: string): number | undefined {
  let holder: number;
  try {
    holder = Number(nodeFs.readFileSync(path.join(dataDir, LOCK_FILE), 'utf8').trim());
  } catch {
    return undefined;
  }
  return Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && pidAlive(holder) ? holder : undefined;
}

/** Takes the directory's lock; returns a release function. */
export function lockDataDir(dataDir: string, logger: Logger): () => void {
  const lockFile = path.join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      nodeFs.writeFileSync(lockFile, `${process.pid}\n`, { flag: 'wx' });
      fsyncDir(NodeFileSystem, dataDir);
      return () => nodeFs.rmSync(lockFile, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw storageError(`cannot lock data dir ${dataDir}: ${ioReason(err)}`);
    }
    const holder = liveLockHolder(dataDir);
    if (holder !== undefined) throw storageError(`data dir ${dataDir} is in use by process ${holder}`);
    logger.warn({ lockFile }, 'taking over a lock left by a process that is gone');
    nodeFs.rmSync(lockFile, { force: true });
  }
  throw storageError(`cannot lock data dir ${dataDir}: lost a race for ${LOCK_FILE}`);
}
