import { HOUR_MS } from '../../util/duration.js';
import { defineDetector } from '../detector.js';
import { hostSubject } from '../facts.js';
import { COMMAND_KEYS, textOf } from '../metadata.js';

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ash', 'python', 'python3', 'perl', 'ruby', 'php']);
const NETCATS = new Set(['nc', 'ncat', 'netcat', 'nc.traditional', 'nc.openbsd']);
const FETCHERS = new Set(['curl', 'wget', 'fetch']);
const MINER_MARKS = ['xmrig', 'minerd', 'cpuminer', 'stratum+tcp://', 'stratum+ssl://', 'xmr-stak', 'ethminer', 'nanominer', 'cryptonight', 'nicehash'];
const REVERSE_SHELL_MARKS = ['/dev/tcp/', '/dev/udp/', 'pty.spawn', 'fsockopen(', '-rsocket', 'os.dup2(', 'socket.socket('];

const base = (token: string): string => token.slice(token.lastIndexOf('/') + 1);

/** Names the attack technique a command line shows, or undefined. Substring and token checks only (no backtracking). */
export function classifyCommand(command: string): string | undefined {
  const cmd = command.toLowerCase();
  if (MINER_MARKS.some((m) => cmd.includes(m))) return 'crypto_miner';
  const segments = cmd.split('|').map((s) => s.trim().split(/\s+/).map(base));
  const tokens = segments.flat();
  const runsShell = (seg: readonly string[]) => SHELLS.has(seg[0] === 'sudo' ? (seg[1] ?? '') : (seg[0] ?? ''));
  if (REVERSE_SHELL_MARKS.some((m) => cmd.includes(m))) return 'reverse_shell';
  if (tokens.some((t) => NETCATS.has(t)) && tokens.some((t) => t === '-e' || t === '-c' || t.startsWith('--exec'))) return 'reverse_shell';
  if (tokens.includes('socat') && cmd.includes('exec:')) return 'reverse_shell';
  if ((cmd.includes('bash -i') || cmd.includes('sh -i')) && cmd.includes('>&')) return 'reverse_shell';
  const fetchAt = segments.findIndex((seg) => seg.some((t) => FETCHERS.has(t)));
  if (fetchAt >= 0 && segments.slice(fetchAt + 1).some(runsShell)) return 'download_and_execute';
  if (fetchAt >= 0 && cmd.includes('chmod +x')) return 'download_and_execute';
  if (cmd.includes('$(curl') || cmd.includes('$(wget') || cmd.includes('`curl') || cmd.includes('`wget')) return 'download_and_execute';
  const decodes = cmd.includes('base64 -d') || cmd.includes('base64 --decode') || cmd.includes('base64 -d');
  if (decodes && (segments.slice(1).some(runsShell) || cmd.includes('eval'))) return 'encoded_command';
  if (
    (tokens.includes('powershell') || tokens.includes('powershell.exe') || tokens.includes('pwsh')) &&
    tokens.some((t) => t === '-enc' || t === '-e' || t === '-encodedcommand' || t === '-ec')
  )
    return 'encoded_command';
  if (cmd.includes('b64decode') && (cmd.includes('exec(') || cmd.includes('eval('))) return 'encoded_command';
  return undefined;
}

/** host.suspicious_process: reverse shells, download-and-execute, miners, encoded commands; or the agent's own verdict. */
export const suspiciousProcess = defineDetector({
  name: 'suspicious_process',
  families: ['host'],
  description: 'Reverse shells, download-and-execute, crypto miners and encoded commands.',
  alerts: {
    'host.suspicious_process': {
      severity: 'high',
      mitre: ['T1059.004', 'T1105', 'T1496', 'T1027'],
      windowMs: HOUR_MS,
      description: 'A process ran that looks like an attack tool: reverse shell, download piped to a shell, crypto miner or encoded command.',
    },
  },
  detect(ctx) {
    const f = ctx.facts;
    if (f.type !== 'server.process.executed' && f.type !== 'server.process.suspicious') return;
    const command = textOf(f.event.metadata, COMMAND_KEYS);
    const technique = command === undefined ? undefined : classifyCommand(command);
    if (technique === undefined && f.type !== 'server.process.suspicious') return;
    ctx.raise('host.suspicious_process', hostSubject(f), {
      technique: technique ?? 'reported_by_agent',
      command: command?.slice(0, 512) ?? null,
      user: f.actor ?? null,
    });
  },
});
