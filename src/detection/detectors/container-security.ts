import { HOUR_MS } from '../../util/duration.js';
import { defineDetector } from '../detector.js';
import { hostSubject } from '../facts.js';

const HOST_EXPOSING_MOUNTS = ['/var/run/docker.sock', '/run/containerd/containerd.sock', '/proc/sys', '/dev/mem'];

/** Mount list of a container start event, as strings ("src:dst" or objects with a source). */
function mountsOf(meta: Readonly<Record<string, unknown>>): string[] {
  const raw = meta.mounts ?? meta.volumes ?? meta.binds;
  if (!Array.isArray(raw)) return [];
  return raw.map((m) =>
    typeof m === 'string'
      ? m
      : typeof m === 'object' && m !== null
        ? String((m as Record<string, unknown>).source ?? (m as Record<string, unknown>).src ?? '')
        : '',
  );
}

/** host.container_escape: an escape attempt, or a privileged container started with the host root, runtime socket or host PID namespace. */
export const containerSecurity = defineDetector({
  name: 'container_security',
  families: ['host'],
  description: 'Container escape attempts and containers started with the host exposed.',
  alerts: {
    'host.container_escape': {
      severity: 'critical',
      mitre: ['T1611'],
      windowMs: HOUR_MS,
      description: 'A container tried to break out to its host (privileged mounts, host namespaces, runtime exploits).',
    },
  },
  detect(ctx) {
    const f = ctx.facts;
    const meta = f.event.metadata;
    if (f.type === 'server.container.escape_attempt') {
      ctx.raise('host.container_escape', hostSubject(f), {
        container: meta.container ?? meta.container_id ?? meta.image ?? null,
        technique: meta.technique ?? null,
      });
      return;
    }
    if (f.type !== 'server.container.started' || meta.privileged !== true) return;
    const mounts = mountsOf(meta);
    const hostRoot = mounts.some((m) => m === '/' || m.startsWith('/:'));
    const exposing = mounts.find((m) => HOST_EXPOSING_MOUNTS.some((p) => m.startsWith(p)));
    if (hostRoot || exposing !== undefined || meta.pid === 'host') {
      ctx.raise('host.container_escape', hostSubject(f), {
        container: meta.container ?? meta.image ?? null,
        technique: hostRoot ? 'privileged_host_root_mount' : exposing !== undefined ? 'privileged_runtime_socket' : 'privileged_host_pid',
      });
    }
  },
});
