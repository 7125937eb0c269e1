import type { EventBuffer } from '../buffer.js';
import type { AgentConfig } from '../config.js';
import type { Logger } from '../log.js';

export interface SourceContext {
  readonly config: AgentConfig;
  readonly host: string;
  readonly buffer: EventBuffer;
  readonly log: Logger;
}

/** One thing the agent watches. Each source keeps its own position or snapshot in the buffer's state table. */
export interface Source {
  readonly name: string;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

/**
 * Runs `tick` now and then every `ms`, never two at once; errors are logged, not thrown.
 * While the buffer is full the tick is skipped: sources keep their position or snapshot,
 * so what happened meanwhile is read on a later tick. A source whose input cannot wait
 * (`runWhenFull`) still runs, to count what it could not buffer.
 */
export function every(ms: number, ctx: SourceContext, name: string, tick: () => void | Promise<void>, runWhenFull = false): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const run = async () => {
    if (stopped) return;
    if (runWhenFull || !ctx.buffer.full) {
      running = (async () => tick())().catch((err: unknown) => ctx.log.warn(`${name}: ${(err as Error).message}`));
      await running;
      running = undefined;
    }
    if (!stopped) timer = setTimeout(() => void run(), ms);
  };
  void run();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
