import { existsSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { createInterface } from 'node:readline';
import { eventIdOf, makeEvent, type AgentEvent } from '../event.js';
import type { Source, SourceContext } from './source.js';

const SINCE_KEY = 'containers:since';
/** The events already read in the "since" second: Docker replays that whole second. */
const SEEN_KEY = 'containers:seen';

interface DockerEvent {
  readonly Type?: string;
  readonly Action?: string;
  readonly status?: string;
  readonly id?: string;
  readonly Actor?: { readonly ID?: string; readonly Attributes?: Record<string, string> };
  readonly timeNano?: number;
  readonly time?: number;
}

interface Inspect {
  readonly Name?: string;
  readonly Config?: { readonly Image?: string; readonly User?: string };
  readonly HostConfig?: { readonly Privileged?: boolean; readonly PidMode?: string; readonly NetworkMode?: string; readonly CapAdd?: string[] | null };
  readonly Mounts?: { readonly Source?: string; readonly Destination?: string }[];
}

function get(socketPath: string, path: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method: 'GET', headers: { host: 'docker' } }, resolve);
    req.on('error', reject);
    req.end();
  });
}

async function getJson(socketPath: string, path: string): Promise<unknown> {
  const res = await get(socketPath, path);
  let body = '';
  for await (const chunk of res) body += chunk;
  return JSON.parse(body);
}

/** A Docker container event (and its inspection, for a start) as `server.container.*`. */
export function containerEvent(host: string, e: DockerEvent, inspect: Inspect | undefined): AgentEvent | undefined {
  const action = e.Action ?? e.status;
  if (e.Type !== 'container' || (action !== 'start' && action !== 'die')) return undefined;
  const id = e.Actor?.ID ?? e.id ?? '';
  const attrs = e.Actor?.Attributes ?? {};
  const at = e.timeNano !== undefined ? Math.floor(e.timeNano / 1e6) : (e.time ?? 0) * 1000;
  const base = {
    source: 'containers',
    runtime: 'docker',
    container_id: id.slice(0, 12),
    container: attrs.name ?? inspect?.Name?.replace(/^\//, ''),
    image: attrs.image ?? inspect?.Config?.Image,
  };
  if (action === 'die')
    return makeEvent({
      event: 'server.container.stopped',
      event_id: eventIdOf(host, 'container', id, 'die', e.timeNano ?? at),
      at,
      host,
      metadata: { ...base, exit_code: attrs.exitCode === undefined ? undefined : Number(attrs.exitCode) },
    });
  const hc = inspect?.HostConfig;
  return makeEvent({
    event: 'server.container.started',
    event_id: eventIdOf(host, 'container', id, 'start', e.timeNano ?? at),
    at,
    host,
    metadata: {
      ...base,
      privileged: hc?.Privileged ?? false,
      pid: hc?.PidMode === 'host' ? 'host' : hc?.PidMode || undefined,
      network_mode: hc?.NetworkMode,
      cap_add: hc?.CapAdd ?? undefined,
      user: inspect?.Config?.User || undefined,
      mounts: (inspect?.Mounts ?? []).map((m) => `${m.Source ?? ''}:${m.Destination ?? ''}`),
    },
  });
}

/**
 * Docker containers started and stopped, from the Engine's event stream. It resumes from the
 * last event time, so starts that happened while the agent was stopped, or while the buffer
 * was full, are still reported, and those already read are skipped.
 */
export function containersSource(ctx: SourceContext): Source {
  const socketPath = ctx.config.sources.containers.sockets.find((s) => existsSync(s));
  let res: IncomingMessage | undefined;
  let stopping = false;
  let retry: NodeJS.Timeout | undefined;
  const follow = async () => {
    if (socketPath === undefined || stopping) return;
    // While the buffer is full the stream is not read; it resumes from the last event time once there is room.
    if (ctx.buffer.full) {
      retry = setTimeout(() => void follow(), 5000);
      return;
    }
    const since = ctx.buffer.getState<number>(SINCE_KEY) ?? Math.floor(Date.now() / 1000);
    const filters = encodeURIComponent(JSON.stringify({ type: ['container'], event: ['start', 'die'] }));
    try {
      res = await get(socketPath, `/events?since=${since}&filters=${filters}`);
      for await (const line of createInterface({ input: res })) {
        if (!line.trim()) continue;
        const e = JSON.parse(line) as DockerEvent;
        const time = e.time ?? Math.floor(Date.now() / 1000);
        const key = `${e.Actor?.ID ?? e.id ?? ''}:${e.Action ?? e.status ?? ''}:${e.timeNano ?? ''}`;
        const seen = ctx.buffer.getState<{ time: number; keys: string[] }>(SEEN_KEY);
        if (seen?.time === time && seen.keys.includes(key)) continue;
        const id = e.Actor?.ID ?? e.id;
        const inspect =
          (e.Action ?? e.status) === 'start' && id
            ? ((await getJson(socketPath, `/containers/${id}/json`).catch(() => undefined)) as Inspect | undefined)
            : undefined;
        const event = containerEvent(ctx.host, e, inspect);
        ctx.buffer.append(event ? [event] : [], {
          [SINCE_KEY]: time,
          [SEEN_KEY]: { time, keys: seen?.time === time ? [...seen.keys, key] : [key] },
        });
        if (ctx.buffer.full) break;
      }
      res.destroy();
    } catch (err) {
      if (!stopping) ctx.log.warn('containers: event stream failed', { error: (err as Error).message });
    }
    if (!stopping) retry = setTimeout(() => void follow(), 5000);
  };
  return {
    name: 'containers',
    start() {
      void follow();
    },
    stop() {
      stopping = true;
      clearTimeout(retry);
      res?.destroy();
    },
  };
}
