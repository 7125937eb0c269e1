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

/** Names from `ctr namespaces ls` (a NAME LABELS table). */
export function parseNamespaceList(text: string): string[] {
  return text
    .split('\n')
    .slice(1)
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((n) => n !== '');
}

/** Running task ids from `ctr tasks ls` (a TASK PID STATUS table). */
export function parseTaskList(text: string): string[] {
  return text
    .split('\n')
    .slice(1)
    .map((l) => l.trim().split(/\s+/))
    .filter((cols) => cols[2] === 'RUNNING' && cols[0] !== undefined)
    .map((cols) => cols[0] as string);
}

const RUNNING_KEY = 'containerd:running';

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
export function containerdEvent(host: string, e: CtrEvent, info: CtrContainerInfo | undefined, fromTaskList = false): AgentEvent | undefined {
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
    // Noticed by comparing task lists (the agent or ctr was down): the time is when it was noticed.
    from_task_list: fromTaskList || undefined,
  };
  const eventId = eventIdOf(host, 'containerd', e.namespace, id, e.topic, e.stamp);
  if (e.topic === '/tasks/exit')
    return makeEvent({
      event: 'server.container.stopped',
      event_id: eventId,
      at: e.at,
      host,
      // containerd leaves a zero exit status out of the event; a task list does not tell it.
      metadata: { ...base, exit_code: fromTaskList ? undefined : typeof e.event.exit_status === 'number' ? e.event.exit_status : 0 },
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
 * (containerd's event API over its socket). containerd keeps no event history, so each time
 * the stream starts the running tasks are listed and compared with those the agent last knew:
 * what started or stopped meanwhile is reported then. A start is reported once for a task the
 * agent does not know as running, a stop once for one it does. An event that arrives while the
 * buffer is full is counted as skipped, not held (a stalled subscriber would hold up containerd).
 */
export function containerdSource(ctx: SourceContext, socket: string, skipNamespaces: readonly string[]): Source {
  const ctr = ctx.config.sources.containers.ctr_command;
  const ctrArgs = (namespace: string | undefined, ...args: string[]) => ['--address', socket, ...(namespace ? ['--namespace', namespace] : []), ...args];
  let child: ChildProcess | undefined;
  let stopping = false;
  let restart: NodeJS.Timeout | undefined;
  let relook: NodeJS.Timeout | undefined;
  let queue = Promise.resolve();
  const saved = ctx.buffer.getState<string[]>(RUNNING_KEY);
  /** The tasks known as running, as "namespace/container id". */
  const running = new Set(saved ?? []);
  const split = (task: string) => [task.slice(0, task.indexOf('/')), task.slice(task.indexOf('/') + 1)] as const;
  const info = async (namespace: string, id: string): Promise<CtrContainerInfo | undefined> => {
    try {
      return JSON.parse(await run(ctr, ctrArgs(namespace, 'containers', 'info', id))) as CtrContainerInfo;
    } catch (err) {
      ctx.log.warn('containerd: cannot read container info', { container: id, error: (err as Error).message });
      return undefined;
    }
  };
  const record = (events: AgentEvent[]) => {
    if (ctx.buffer.full) {
      ctx.buffer.noteSkippedWhileFull(events.length);
      ctx.buffer.setState(RUNNING_KEY, [...running]);
    } else ctx.buffer.append(events, { [RUNNING_KEY]: [...running] });
  };
  const handle = async (line: string) => {
    const e = parseCtrLine(line);
    if (e === undefined || skipNamespaces.includes(e.namespace) || !isContainerLifecycle(e)) return;
    const task = `${e.namespace}/${e.event.container_id as string}`;
    const start = e.topic === '/tasks/start';
    if (start === running.has(task)) return;
    const event = containerdEvent(ctx.host, e, start ? await info(e.namespace, e.event.container_id as string) : undefined);
    if (start) running.add(task);
    else running.delete(task);
    record(event ? [event] : []);
  };
  /** Compares the running tasks with those last known; the first run only records them. */
  const reconcile = async (firstLook: boolean) => {
    let now: Set<string>;
    try {
      const namespaces = parseNamespaceList(await run(ctr, ctrArgs(undefined, 'namespaces', 'ls'))).filter((n) => !skipNamespaces.includes(n));
      now = new Set();
      for (const ns of namespaces) for (const id of parseTaskList(await run(ctr, ctrArgs(ns, 'tasks', 'ls')))) now.add(`${ns}/${id}`);
    } catch (err) {
      ctx.log.warn('containerd: cannot list tasks', { error: (err as Error).message });
      return;
    }
    const at = Date.now();
    const events: AgentEvent[] = [];
    const noticed = async (task: string, topic: string) => {
      const [namespace, id] = split(task);
      const e: CtrEvent = { at, stamp: `task list ${at}`, namespace, topic, event: { container_id: id } };
      const event = containerdEvent(ctx.host, e, topic === '/tasks/start' ? await info(namespace, id) : undefined, true);
      if (event) events.push(event);
    };
    if (!firstLook) {
      for (const task of now) if (!running.has(task)) await noticed(task, '/tasks/start');
      for (const task of running) if (!now.has(task)) await noticed(task, '/tasks/exit');
    }
    running.clear();
    for (const task of now) running.add(task);
    record(events);
  };
  let firstLook = saved === undefined;
  let failures = 0;
  const launch = () => {
    child = spawn(ctr, ctrArgs(undefined, 'events'), { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-500)));
    // Listed as ctr subscribes, and again once the subscription surely stands: a change around
    // the subscription is in a list or in the stream, and counted once (the running set decides).
    const look = (first: boolean) => {
      queue = queue.then(() => reconcile(first)).catch((err: unknown) => ctx.log.warn('containerd: task list not compared', { error: (err as Error).message }));
    };
    look(firstLook);
    firstLook = false;
    clearTimeout(relook);
    relook = setTimeout(() => look(false), 10_000);
    // One line at a time, in order: a start's info lookup finishes before the next line is handled.
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      failures = 0;
      queue = queue.then(() => handle(line)).catch((err: unknown) => ctx.log.warn('containerd: event not handled', { error: (err as Error).message }));
    });
    child.on('error', (err) => ctx.log.warn('containerd: cannot run ctr', { command: ctr, error: err.message }));
    child.on('exit', (code) => {
      if (stopping) return;
      // A socket that stays unreachable (containerd stopped, no permission) is retried less and less often.
      const delay = Math.min(300_000, 5000 * 2 ** failures++);
      ctx.log.warn('containerd: ctr events exited; restarting', { code, stderr: stderr.trim(), retry_in_s: delay / 1000 });
      restart = setTimeout(launch, delay);
    });
  };
  return {
    name: 'containerd',
    start: launch,
    async stop() {
      stopping = true;
      clearTimeout(restart);
      clearTimeout(relook);
      child?.kill('SIGTERM');
      await queue;
    },
  };
}
