/** HAProxy in front of the fleet: `balance leastconn`, active checks on /readyz, on loopback. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const HAPROXY = process.env.FLEET_HAPROXY ?? '/usr/sbin/haproxy';

export interface Balancer {
  readonly port: number;
  readonly process: ChildProcess;
}

/** Why HAProxy cannot run here, or undefined when it can. */
export function haproxyMissing(): string | undefined {
  const run = spawnSync(HAPROXY, ['-v'], { encoding: 'utf8' });
  return run.error ? `${HAPROXY} is not installed (${run.error.message})` : undefined;
}

/**
 * The configuration: a POST is never resent once sent (`retry-on conn-failure`, HAProxy's
 * default), so a balancer retry cannot store an event twice; a connection refused by a dead
 * instance is redispatched to another. Checks every 500 ms, down after two failures; a check
 * may take 2 s, so a loaded instance that still answers is not taken for a dead one.
 */
export interface BalancerLimits {
  /** Client connections HAProxy holds at once. */
  readonly maxconn: number;
  /** Connections to each instance; requests past it wait in HAProxy's own queue. */
  readonly serverMaxconn: number;
}

export const FLEET_LIMITS: BalancerLimits = { maxconn: 4000, serverMaxconn: 256 };

/**
 * Limits under which the instances, not HAProxy, shed an overload: each instance may hold as many
 * connections as its in-flight and waiting bounds let requests in, so none waits in HAProxy's
 * queue, whose timeout answers a 503 of HAProxy's own without Retry-After.
 */
export const SHEDDING_LIMITS: BalancerLimits = { maxconn: 9_000, serverMaxconn: 4_096 };

export function haproxyConfig(port: number, instancePorts: readonly number[], limits: BalancerLimits = FLEET_LIMITS): string {
  return [
    'global',
    `  maxconn ${limits.maxconn}`,
    'defaults',
    '  mode http',
    '  option http-keep-alive',
    '  option forwardfor',
    '  option redispatch',
    '  retries 2',
    '  retry-on conn-failure',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout http-keep-alive 60s',
    '  timeout check 2s',
    'frontend fleet',
    `  bind 127.0.0.1:${port}`,
    '  default_backend vigil',
    'backend vigil',
    '  balance leastconn',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    `  default-server inter 500ms fastinter 250ms downinter 500ms fall 2 rise 2 maxconn ${limits.serverMaxconn}`,
    ...instancePorts.map((p, i) => `  server vigil${i} 127.0.0.1:${p} check`),
    '',
  ].join('\n');
}

export function startHaproxy(dir: string, port: number, instancePorts: readonly number[], limits: BalancerLimits = FLEET_LIMITS): Balancer {
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, haproxyConfig(port, instancePorts, limits));
  const check = spawnSync(HAPROXY, ['-c', '-q', '-f', file], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`haproxy -c failed: ${check.stdout}${check.stderr}`);
  const child = spawn(HAPROXY, ['-db', '-f', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  // Its warnings (a server going down during a fault) are part of the run's story.
  child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(`[haproxy] ${chunk.toString()}`));
  return { port, process: child };
}
