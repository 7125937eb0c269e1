import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { eventIdOf, makeEvent, type AgentEvent } from '../event.js';
import { run } from '../util/exec.js';
import type { Source, SourceContext } from './source.js';

/** Docker's own namespace in containerd: those containers are reported by the Docker source, with Docker's names. */
export const DOCKER_NAMESPACE = 'moby';

/** One line of `ctr events`: time, namespace, topic and the event as JSON. */
export interface CtrEvent {
  readonly at: number;
  /** The time as ctr printed it, part of the event_id. */
  readonly stamp: string;
  readonly namespace: string;
  readonly topic: string;
  readonly event: Record<string, unknown>;
}

/** The part of `ctr containers info` read for a start: the image, labels and the OCI runtime spec. */
export interface CtrContainerInfo {
  readonly Image?: string;
  readonly Labels?: Record<string, string> | null;
  readonly Spec?: {
    readonly process?: { readonly user?: { readonly uid?: number }; readonly capabilities?: { readonly bounding?: readonly string[] } };
    readonly mounts?: readonly { readonly destination?: string; readonly type?: string; readonly source?: string; readonly options?: readonly string[] }[];
    readonly linux?: { readonly namespaces?: readonly { readonly type?: string; readonly path?: string }[] };
  };
}

// ctr prints Go's time.Time: "2024-10-23 18:15:14.94376525 +0000 UTC", then namespace, topic and JSON.
const CTR_LINE = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))? ([+-]\d\d)(\d\d) \S+ (\S+) (\/\S+) (\{.*\})\s*$/;

/** A `ctr events` line; undefined for anything else (warnings, blank lines). */
export function parseCtrLine(line: string): CtrEvent | undefined {
  const m = CTR_LINE.exec(line);
  if (!m) return undefined;
  const [, date, time, fraction, offH, offM, namespace, topic, json] = m as unknown as string[];
  const at = Date.parse(`${date}T${time}.${(fraction ?? '').padEnd(3, '0').slice(0, 3)}${offH}:${offM}`);
  let event: unknown;
  try {
    event = JSON.parse(json as string);
  } catch {
    return undefined;
  }
  if (!Number.isFinite(at) || typeof event !== 'object' || event === null) return undefined;
  const stamp = `${date} ${time}.${fraction ?? ''} ${offH}${offM}`;
  return { at, stamp, namespace: namespace as string, topic: topic as string, event: event as Record<string, unknown> };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Whether a `ctr events` line starts or stops a container (an exec's exit is not a stop). */
export function isContainerLifecycle(e: CtrEvent): boolean {
  if (e.topic === '/tasks/start') return str(e.event.container_id) !== undefined;
  // The exit of a container's init process carries its own id; an exec's exit carries the exec id.
  return e.topic === '/tasks/exit' && str(e.event.container_id) !== undefined && (e.event.id === undefined || e.event.id === e.event.container_id);
}

/**
 * A containerd task start or exit as `server.container.*`, with what a start's container info
 * says about its privileges: `privileged` when its bounding set holds CAP_SYS_ADMIN (what
 * `--privileged` and Kubernetes `privileged: true` grant), `pid: host` when it has no PID
 * namespace of its own, and its bind mounts as `source:destination`.
 */
export function containerdEvent(host: string, e: CtrEvent, info: CtrContainerInfo | undefined): AgentEvent | undefined {
  if (!isContainerLifecycle(e)) return undefined;
  const id = e.event.container_id as string;
  const labels = info?.Labels ?? {};
  const base = {
    source: 'containers',
    runtime: 'containerd',
    namespace: e.namespace,
    container_id: id.slice(0, 12),
    container: labels['io.kubernetes.container.name'] ?? labels['nerdctl/name'] ?? id,
    pod: labels['io.kubernetes.pod.name'],
    image: str(info?.Image),
  };
  const eventId = eventIdOf(host, 'containerd', e.namespace, id, e.topic, e.stamp);
  if (e.topic === '/tasks/exit')
    return makeEvent({
      event: 'server.container.stopped',
      event_id: eventId,
      at: e.at,
      host,
      // containerd leaves a zero exit status out of the event.
      metadata: { ...base, exit_code: typeof e.event.exit_status === 'number' ? e.event.exit_status : 0 },
    });
  const spec = info?.Spec;
  const namespaces = spec?.linux?.namespaces;
  return makeEvent({
    event: 'server.container.started',
    event_id: eventId,
    at: e.at,
    host,
    metadata: {
      ...base,
      privileged: spec?.process?.capabilities?.bounding?.includes('CAP_SYS_ADMIN') ?? false,
      pid: namespaces !== undefined && !namespaces.some((n) => n.type === 'pid') ? 'host' : undefined,
      user: spec?.process?.user?.uid,
      mounts: (spec?.mounts ?? [])
        .filter((m) => m.type === 'bind' || (m.options ?? []).some((o) => o === 'bind' || o === 'rbind'))
        .map((m) => `${m.source ?? ''}:${m.destination ?? ''}`),
    },
  });
}

/**
 * Containers started and stopped on a containerd host, from `ctr --address SOCKET events`
 * (containerd's event API over its socket). containerd keeps no event history, so what
 * happens while the agent is stopped is not reported; an event that arrives while the
 * buffer is full is counted as skipped, not held (a stalled subscriber would hold up containerd).
 */
export function containerdSource(ctx: SourceContext, socket: string, skipNamespaces: readonly string[]): Source {
  const ctr = ctx.config.sources.containers.ctr_command;
  let child: ChildProcess | undefined;
  let stopping = false;
  let restart: NodeJS.Timeout | undefined;
  let queue = Promise.resolve();
  const info = async (namespace: string, id: string): Promise<CtrContainerInfo | undefined> => {
    try {
      return JSON.parse(await run(ctr, ['--address', socket, '--namespace', namespace, 'containers', 'info', id])) as CtrContainerInfo;
    } catch (err) {
      ctx.log.warn('containerd: cannot read container info', { container: id, error: (err as Error).message });
      return undefined;
    }
  };
  const handle = async (line: string) => {
    const e = parseCtrLine(line);
    if (e === undefined || skipNamespaces.includes(e.namespace) || !isContainerLifecycle(e)) return;
    const event = containerdEvent(ctx.host, e, e.topic === '/tasks/start' ? await info(e.namespace, e.event.container_id as string) : undefined);
    if (event === undefined) return;
    if (ctx.buffer.full) ctx.buffer.noteSkippedWhileFull(1);
    else ctx.buffer.append([event]);
  };
  const launch = () => {
    child = spawn(ctr, ['--address', socket, 'events'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-500)));
    // One line at a time, in order: a start's info lookup finishes before the next line is handled.
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      queue = queue.then(() => handle(line)).catch((err: unknown) => ctx.log.warn('containerd: event not handled', { error: (err as Error).message }));
    });
    child.on('error', (err) => ctx.log.warn('containerd: cannot run ctr', { command: ctr, error: err.message }));
    child.on('exit', (code) => {
      if (stopping) return;
      ctx.log.warn('containerd: ctr events exited; restarting', { code, stderr: stderr.trim() });
      restart = setTimeout(launch, 5000);
    });
  };
  return {
    name: 'containerd',
    start: launch,
    async stop() {
      stopping = true;
      clearTimeout(restart);
      child?.kill('SIGTERM');
      await queue;
    },
  };
}
