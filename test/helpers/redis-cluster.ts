/**
 * A throw-away Redis Cluster for tests and benchmarks: `redis-server --cluster-enabled yes`
 * nodes on free ports in a temp dir (three masters by default, optionally with replicas),
 * joined with `redis-cli --cluster create`. Without the binaries the suites using it skip with a
 * message, except under CI=true, where their absence fails the run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../process/service.js';
import { until } from './until.js';

export interface ClusterNode {
  readonly port: number;
  readonly process: ChildProcess;
}

export interface TestCluster {
  /** One seed node: redis://127.0.0.1:<port> (the client discovers the others). */
  readonly url: string;
  /** Every node started, masters and replicas, in start order. */
  readonly nodes: readonly ClusterNode[];
  /** The ports of the nodes that are masters now (a failover changes them). */
  masterPorts(): number[];
  stop(): Promise<void>;
}

export interface TestClusterOptions {
  readonly masters?: number;
  /** Replicas per master (0: none, the tests' default). */
  readonly replicas?: number;
  /** `cluster-node-timeout`: how long a master may be silent before its replica takes over. */
  readonly nodeTimeoutMs?: number;
}

const binariesMissing = (): string | undefined => {
  for (const bin of ['redis-server', 'redis-cli']) if (spawnSync(bin, ['--version']).error) return `${bin} is not installed`;
  return undefined;
};

const cli = (port: number, ...args: string[]) => spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' });

/** The ports of the masters that the node on `port` sees as connected and not failed. */
function mastersSeenBy(port: number): number[] {
  const out: number[] = [];
  for (const line of cli(port, 'cluster', 'nodes').stdout.split('\n')) {
    const [, address = '', flags = '', , , , , state = ''] = line.split(' ');
    if (flags.split(',').includes('master') && !flags.includes('fail') && state === 'connected') out.push(Number(address.split(':')[1]?.split('@')[0]));
  }
  return out;
}

/** Starts the cluster, or answers why it cannot (then the caller skips). */
export async function startTestCluster(suite: string, options: TestClusterOptions = {}): Promise<TestCluster | undefined> {
  const why = binariesMissing();
  if (why) {
    if (process.env.CI === 'true') throw new Error(`${why}: the ${suite} suite needs it under CI=true`);
    console.warn(`SKIPPED ${suite}: ${why} (a Redis Cluster is started from it)`);
    return undefined;
  }
  const masters = options.masters ?? 3;
  const replicas = options.replicas ?? 0;
  const dir = mkdtempSync(join(tmpdir(), 'vigil-redis-cluster-'));
  const nodes: ClusterNode[] = [];
  const stop = async () => {
    await Promise.all(
      nodes.map(
        ({ process: n }) =>
          new Promise((resolve) => (n.exitCode !== null || n.signalCode !== null ? resolve(undefined) : (n.once('exit', resolve), n.kill('SIGTERM')))),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters * (1 + replicas); i++) {
      const port = await freePort();
      const nodeDir = mkdtempSync(join(dir, `node-${port}-`));
      const args = [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--dir',
        nodeDir,
        '--save',
        '',
        '--appendonly',
        'no',
        ...(options.nodeTimeoutMs === undefined ? [] : ['--cluster-node-timeout', String(options.nodeTimeoutMs)]),
      ];
      nodes.push({ port, process: spawn('redis-server', args, { stdio: 'ignore' }) });
    }
    const ports = nodes.map((n) => n.port);
    for (const port of ports) await until(() => cli(port, 'ping').stdout.trim() === 'PONG', `Redis Cluster node ${port} answering`, 15_000, 100);
    const create = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes'],
      { encoding: 'utf8' },
    );
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    for (const port of ports)
      await until(() => cli(port, 'cluster', 'info').stdout.includes('cluster_state:ok'), `Redis Cluster cluster_state:ok on ${port}`, 15_000, 100);
    // A replica counts once its master's data has reached it; until then a failover would lose it.
    if (replicas > 0)
      for (const port of ports)
        await until(
          () => !cli(port, 'info', 'replication').stdout.includes('role:slave') || cli(port, 'info', 'replication').stdout.includes('master_link_status:up'),
          `Redis Cluster replica ${port} in sync`,
          15_000,
          100,
        );
  } catch (err) {
    await stop();
    throw err;
  }
  const alive = () => nodes.filter((n) => n.process.exitCode === null && n.process.signalCode === null);
  return {
    url: `redis://127.0.0.1:${nodes[0]?.port}`,
    nodes,
    masterPorts: () => {
      const live = new Set(alive().map((n) => n.port));
      const seer = alive()[0];
      return seer === undefined ? [] : mastersSeenBy(seer.port).filter((p) => live.has(p));
    },
    stop,
  };
}
