/**
 * A throw-away Redis Cluster for tests: three `redis-server --cluster-enabled yes` masters on
 * free ports in a temp dir, joined with `redis-cli --cluster create`. Without the binaries the
 * suites using it skip with a message, except under CI=true, where their absence fails the run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../process/service.js';
import { until } from './until.js';

export interface TestCluster {
  /** One seed node: redis://127.0.0.1:<port> (the client discovers the others). */
  readonly url: string;
  stop(): Promise<void>;
}

const binariesMissing = (): string | undefined => {
  for (const bin of ['redis-server', 'redis-cli']) if (spawnSync(bin, ['--version']).error) return `${bin} is not installed`;
  return undefined;
};

const cli = (port: number, ...args: string[]) => spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' });

/** Starts the cluster, or answers why it cannot (then the caller skips). */
export async function startTestCluster(suite: string): Promise<TestCluster | undefined> {
  const why = binariesMissing();
  if (why) {
    if (process.env.CI === 'true') throw new Error(`${why}: the ${suite} suite needs it under CI=true`);
    console.warn(`SKIPPED ${suite}: ${why} (a Redis Cluster is started from it)`);
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'vigil-redis-cluster-'));
  const ports: number[] = [];
  const nodes: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => new Promise((resolve) => (n.exitCode !== null ? resolve(undefined) : (n.once('exit', resolve), n.kill('SIGTERM'))))));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      ports.push(port);
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
      ];
      nodes.push(spawn('redis-server', args, { stdio: 'ignore' }));
    }
    for (const port of ports) await until(() => cli(port, 'ping').stdout.trim() === 'PONG', `Redis Cluster node ${port} answering`, 15_000, 100);
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], {
      encoding: 'utf8',
    });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    for (const port of ports)
      await until(() => cli(port, 'cluster', 'info').stdout.includes('cluster_state:ok'), `Redis Cluster cluster_state:ok on ${port}`, 15_000, 100);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `redis://127.0.0.1:${ports[0]}`, stop };
}
