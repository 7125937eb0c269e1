import { readFileSync } from 'node:fs';
import { eventIdOf, makeEvent } from '../event.js';
import { diffSnapshot } from './snapshot.js';
import { every, type Source, type SourceContext } from './source.js';

/** Loaded modules from /proc/modules: name -> size. */
export function parseProcModules(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const [name, size] = line.split(' ');
    if (name) out[name] = Number(size);
  }
  return out;
}

/** `server.kernel.module_loaded` for each module that appears in /proc/modules. */
export function modulesSource(ctx: SourceContext): Source {
  const cfg = ctx.config.sources.modules;
  let loop: { stop(): Promise<void> } | undefined;
  const check = () => {
    const now = Date.now();
    diffSnapshot<number>(ctx, 'modules:snapshot', parseProcModules(readFileSync(cfg.proc_modules, 'utf8')), ({ added }) =>
      added.map(([module, size]) =>
        makeEvent({
          event: 'server.kernel.module_loaded',
          event_id: eventIdOf(ctx.host, 'modules', module, now),
          at: now,
          host: ctx.host,
          metadata: { source: 'modules', module, size },
        }),
      ),
    );
  };
  return {
    name: 'modules',
    start() {
      loop = every(cfg.interval_s * 1000, ctx, 'modules', check);
    },
    async stop() {
      await loop?.stop();
    },
  };
}
