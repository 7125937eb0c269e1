import { existsSync, readFileSync, statSync } from 'node:fs';
import { Agent } from './agent.js';
import { EventBuffer } from './buffer.js';
import { ConfigError, DEFAULTS, loadConfig } from './config.js';
import { redactEvent, type RedactConfig } from './redact.js';
import type { AgentEvent } from './event.js';
import { createLogger } from './log.js';
import { authLineHandler } from './sources/auth.js';
import { containerdEvent, parseCtrLine } from './sources/containerd.js';
import { AuthParser } from './sources/auth-parser.js';
import { journalEvents } from './sources/journal.js';
import { packageLineHandler } from './sources/packages.js';
import { completeLines, lineText, type Line } from './sources/tail.js';
import { parseSyslogLine } from './syslog.js';

const USAGE = `usage: vigil-agent [run] [--config FILE]
       vigil-agent parse --source auth|packages|journal|containerd [--host NAME] FILE...
       vigil-agent status [--config FILE] [--json]

run     follows the configured sources and delivers their events (default)
parse   reads log files offline and prints, one JSON object per line, the events the agent would send
status  buffer depth, oldest pending event, last send and last error of the local buffer

The config file defaults to /etc/vigil-agent/config.yaml (VIGIL_AGENT_CONFIG); VIGIL_AGENT_* variables override it.`;

interface Args {
  command: string;
  config: string | undefined;
  source: string | undefined;
  host: string | undefined;
  json: boolean;
  files: string[];
}

function parseArgs(argv: readonly string[]): Args | string {
  const args: Args = { command: 'run', config: process.env.VIGIL_AGENT_CONFIG, source: undefined, host: undefined, json: false, files: [] };
  const rest = [...argv];
  if (rest[0] !== undefined && !rest[0].startsWith('-')) args.command = rest.shift() as string;
  while (rest.length > 0) {
    const a = rest.shift() as string;
    const value = () => {
      const v = rest.shift();
      if (v === undefined) throw new ConfigError(`${a} needs a value`);
      return v;
    };
    if (a === '--config' || a === '-c') args.config = value();
    else if (a === '--source') args.source = value();
    else if (a === '--host') args.host = value();
    else if (a === '--json') args.json = true;
    else if (a === '--help' || a === '-h') return USAGE;
    else if (a.startsWith('-')) throw new ConfigError(`unknown option ${a}`);
    else args.files.push(a);
  }
  if (args.config === undefined && existsSync('/etc/vigil-agent/config.yaml')) args.config = '/etc/vigil-agent/config.yaml';
  return args;
}

/** Splits a whole file into lines with their byte offsets, as the tailer reads them. */
function linesOf(content: Buffer): Line[] {
  const { lines, consumed } = completeLines(content, content.length, 0);
  if (consumed < content.length) lines.push({ text: lineText(content, consumed, content.length), offset: consumed });
  return lines;
}

/** The events the agent would send for these files (scrubbed as the buffer scrubs them), in order, and how many non-empty lines were not syslog records. */
export function parseFiles(
  source: string,
  host: string,
  files: readonly string[],
  redact: RedactConfig = DEFAULTS.redact,
): { readonly events: AgentEvent[]; readonly unreadable: number } {
  const out: AgentEvent[] = [];
  let unreadable = 0;
  for (const file of files) {
    const content = readFileSync(file);
    const ino = statSync(file).ino;
    if (source === 'auth') {
      const lines = linesOf(content);
      unreadable += lines.filter((line) => line.text !== '' && parseSyslogLine(line.text) === undefined).length;
      out.push(...authLineHandler(host)(lines, { path: file, ino }));
    } else if (source === 'packages') out.push(...packageLineHandler(host)(linesOf(content), { path: file, ino }));
    else if (source === 'journal') {
      const parser = new AuthParser(host);
      for (const line of linesOf(content)) out.push(...journalEvents(parser, line.text).events);
    } else if (source === 'containerd') {
      // Saved `ctr events` output; offline there is no container info, so a start carries no image or privileges.
      for (const line of linesOf(content)) {
        const e = parseCtrLine(line.text);
        const event = e && containerdEvent(host, e, undefined);
        if (event) out.push(event);
      }
    } else throw new ConfigError(`parse: unknown source "${source}" (auth, packages, journal, containerd)`);
  }
  return { events: out.map((e) => redactEvent(e, redact)), unreadable };
}

function age(ms: number | null): string {
  if (ms === null) return 'never';
  const s = Math.round((Date.now() - ms) / 1000);
  return `${new Date(ms).toISOString()} (${s}s ago)`;
}

export async function cliMain(argv: readonly string[]): Promise<number> {
  let args: Args | string;
  try {
    args = parseArgs(argv);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (typeof args === 'string') {
    process.stdout.write(args + '\n');
    return 0;
  }
  try {
    if (args.command === 'parse') {
      if (args.source === undefined || args.files.length === 0) throw new ConfigError('parse needs --source and at least one FILE');
      const cfg = args.host === undefined ? loadConfig(args.config, process.env, false) : DEFAULTS;
      const { events, unreadable } = parseFiles(args.source, args.host ?? cfg.host, args.files, cfg.redact);
      for (const e of events) process.stdout.write(JSON.stringify(e) + '\n');
      // Lines in another format would otherwise pass unnoticed: the count goes to stderr, the events stay clean JSON.
      if (unreadable > 0) process.stderr.write(`warning: ${unreadable} line${unreadable === 1 ? ' is' : 's are'} not syslog records and were skipped\n`);
      return 0;
    }
    if (args.command === 'status') {
      const cfg = loadConfig(args.config, process.env, false);
      if (!existsSync(cfg.buffer.path)) {
        process.stdout.write(`no buffer at ${cfg.buffer.path} (the agent has not run yet)\n`);
        return 1;
      }
      const buffer = new EventBuffer(cfg.buffer.path, cfg.buffer.max_events, true);
      const s = buffer.stats();
      buffer.close();
      if (args.json) process.stdout.write(JSON.stringify(s) + '\n');
      else
        process.stdout.write(
          [
            `buffer:          ${cfg.buffer.path}`,
            `pending events:  ${s.depth} of at most ${s.maxEvents}${s.depth >= s.maxEvents ? ' (FULL: log sources paused)' : ''}`,
            `oldest pending:  ${age(s.oldestPendingAt)}`,
            `last send:       ${age(s.lastSendAt)}`,
            `last error:      ${s.lastError === null ? 'none' : `${s.lastError} at ${age(s.lastErrorAt)}`}`,
            `sent:            ${s.sent}`,
            `dropped by the service (Free monthly cap): ${s.droppedByService}`,
            `rejected as invalid: ${s.rejected}`,
            `skipped while the buffer was full: ${s.skippedWhileFull}`,
          ].join('\n') + '\n',
        );
      return 0;
    }
    if (args.command !== 'run') throw new ConfigError(`unknown command "${args.command}"`);
    const cfg = loadConfig(args.config);
    const log = createLogger(cfg.log_level);
    const agent = new Agent(cfg, log);
    await agent.start();
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
    await agent.stop();
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`vigil-agent: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}
