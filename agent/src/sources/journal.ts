import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { AgentEvent } from '../event.js';
import type { SyslogRecord } from '../syslog.js';
import { AUTH_IDENTS, AuthParser } from './auth-parser.js';
import type { Source, SourceContext } from './source.js';

const CURSOR_KEY = 'journal:cursor';

/** A `journalctl -o json` entry as a syslog record; undefined for entries without a message. */
export function journalRecord(entry: Record<string, unknown>): SyslogRecord | undefined {
  const message = entry.MESSAGE;
  const ident = entry.SYSLOG_IDENTIFIER;
  if (typeof message !== 'string' || typeof ident !== 'string') return undefined;
  const micros = Number(entry._SOURCE_REALTIME_TIMESTAMP ?? entry.__REALTIME_TIMESTAMP);
  const pid = Number(entry.SYSLOG_PID ?? entry._PID);
  return { at: Number.isFinite(micros) ? Math.floor(micros / 1000) : Date.now(), ident, pid: Number.isFinite(pid) ? pid : undefined, message };
}

/** Events of one journal entry; the cursor is the stable origin. */
export function journalEvents(parser: AuthParser, line: string): { events: AgentEvent[]; cursor: string | undefined } {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return { events: [], cursor: undefined };
  }
  const cursor = typeof entry.__CURSOR === 'string' ? entry.__CURSOR : undefined;
  const rec = journalRecord(entry);
  return { events: rec === undefined || cursor === undefined ? [] : parser.parse(rec, `journal:${cursor}`), cursor };
}

/**
 * The auth programs' entries from the systemd journal (`journalctl -o json -f`), resumed
 * after the saved cursor. Used where no auth log file exists (journal-only hosts), so the
 * same attempt is not read twice from both.
 */
export function journalSource(ctx: SourceContext): Source {
  const parser = new AuthParser(ctx.host);
  let child: ChildProcess | undefined;
  let stopping = false;
  let restart: NodeJS.Timeout | undefined;
  let resume: NodeJS.Timeout | undefined;
  const launch = () => {
    const cursor = ctx.buffer.getState<string>(CURSOR_KEY);
    const args = [
      '-o',
      'json',
      '-f',
      '--no-pager',
      ...(cursor ? [`--after-cursor=${cursor}`] : ['-n', '0']),
      ...AUTH_IDENTS.map((i) => `SYSLOG_IDENTIFIER=${i}`),
    ];
    child = spawn(ctx.config.sources.journal.command, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    const rl = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    rl.on('line', (line) => {
      const { events, cursor: at } = journalEvents(parser, line);
      if (at !== undefined) ctx.buffer.append(events, { [CURSOR_KEY]: at });
      // While the buffer is full, stop reading: journalctl blocks on the pipe and resumes from there.
      if (ctx.buffer.full && resume === undefined) {
        rl.pause();
        resume = setInterval(() => {
          if (ctx.buffer.full) return;
          clearInterval(resume);
          resume = undefined;
          rl.resume();
        }, 1000);
      }
    });
    child.on('error', (err) => ctx.log.warn('journal: cannot run journalctl', { error: err.message }));
    child.on('exit', (code) => {
      if (stopping) return;
      ctx.log.warn('journal: journalctl exited; restarting', { code });
      restart = setTimeout(launch, 5000);
    });
  };
  return {
    name: 'journal',
    start: launch,
    stop() {
      stopping = true;
      clearTimeout(restart);
      clearInterval(resume);
      child?.kill('SIGTERM');
    },
  };
}
