import { eventIdOf, makeEvent } from '../event.js';
import { commandExists, run } from '../util/exec.js';
import { diffSnapshot } from './snapshot.js';
import { every, type Source, type SourceContext } from './source.js';

/** What the perimeter detector reads of a rule: its action, source and port. */
export interface RuleFacts {
  readonly rule: string;
  readonly chain: string;
  readonly action?: string;
  readonly source?: string;
  readonly port?: string;
}

/** nft when present (nftables hosts), else iptables-save. */
export function firewallTool(): 'nft' | 'iptables' | undefined {
  if (commandExists('nft')) return 'nft';
  if (commandExists('iptables-save')) return 'iptables';
  return undefined;
}

/**
 * A rule with no source match and no loopback or connection-state match accepts from anywhere.
 * `chain` and `rule` come from iptables-save (`-A INPUT ...`) or nft (`tcp dport 22 accept`).
 */
function facts(chain: string, rule: string, kind: 'nft' | 'iptables'): RuleFacts {
  const scoped = /(^|\s)(-i lo|iif "?lo"?|iifname "?lo"?|--ctstate|--state|ct state)(\s|$)/.test(rule);
  if (kind === 'iptables') {
    const action = /-j (\S+)/.exec(rule)?.[1];
    const source = /(?:^|\s)-s (\S+)/.exec(rule)?.[1] ?? (scoped ? undefined : 'anywhere');
    const port = /--dports? (\S+)/.exec(rule)?.[1];
    return { rule, chain, action, source, port };
  }
  const action = /(?:^|\s)(accept|drop|reject)(?:\s|$)/.exec(rule)?.[1];
  const source = /(?:ip6?) saddr (\S+)/.exec(rule)?.[1] ?? (scoped ? undefined : 'anywhere');
  const port = /dport (\{[^}]*\}|\S+)/.exec(rule)?.[1];
  return { rule, chain, action, source, port };
}

/** iptables-save output to rules keyed "table/chain: -A ..." (counters stripped). */
export function parseIptablesSave(text: string): Record<string, RuleFacts> {
  const out: Record<string, RuleFacts> = {};
  let table = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/^\[\d+:\d+\]\s*/, '').trim();
    if (line.startsWith('*')) table = line.slice(1);
    else if (line.startsWith('-A ')) {
      const chain = line.split(' ')[1] as string;
      out[`${table}/${chain}: ${line}`] = facts(chain, line, 'iptables');
    } else if (line.startsWith(':')) {
      const [chain, policy] = line.slice(1).split(' ');
      if (policy && policy !== '-')
        out[`${table}/${chain}: policy`] = { rule: `policy ${policy}`, chain: chain as string, action: policy.toLowerCase(), source: 'anywhere' };
    }
  }
  return out;
}

/** `nft -s list ruleset` output to rules keyed "family table/chain: rule". */
export function parseNftRuleset(text: string): Record<string, RuleFacts> {
  const out: Record<string, RuleFacts> = {};
  const blocks: string[] = [];
  let table = '';
  let chain = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+# handle \d+$/, '').trim();
    let m: RegExpExecArray | null;
    if (line.endsWith('{')) {
      if ((m = /^table (\S+ \S+) \{$/.exec(line))) table = m[1] as string;
      else if ((m = /^chain (\S+) \{$/.exec(line))) chain = m[1] as string;
      blocks.push(m ? (line.startsWith('table') ? 'table' : 'chain') : 'other');
      continue;
    }
    if (line === '}') {
      blocks.pop();
      continue;
    }
    if (blocks[blocks.length - 1] !== 'chain' || line === '') continue;
    if (line.startsWith('type ')) {
      const policy = /policy (\w+);/.exec(line)?.[1];
      if (policy) out[`${table}/${chain}: policy`] = { rule: `policy ${policy}`, chain, action: policy, source: 'anywhere' };
    } else out[`${table}/${chain}: ${line}`] = facts(chain, line, 'nft');
  }
  return out;
}

/** `server.firewall.rule_added` / `rule_removed` from the difference between two looks at the ruleset. */
export function firewallSource(ctx: SourceContext): Source {
  const cfg = ctx.config.sources.firewall;
  const tool = firewallTool();
  let loop: { stop(): Promise<void> } | undefined;
  const check = async () => {
    if (tool === undefined) return;
    const rules =
      tool === 'nft'
        ? parseNftRuleset(await run('nft', ['-s', 'list', 'ruleset']))
        : { ...parseIptablesSave(await run('iptables-save', [])), ...prefixed(parseIptablesSave(await run('ip6tables-save', []).catch(() => '')), 'ip6 ') };
    const now = Date.now();
    diffSnapshot<RuleFacts>(ctx, 'firewall:snapshot', rules, ({ added, removed, changed }) => [
      ...added.map(([k, r]) => ruleEvent('server.firewall.rule_added', k, r)),
      ...removed.map(([k, r]) => ruleEvent('server.firewall.rule_removed', k, r)),
      ...changed.flatMap(([k, before, after]) => [ruleEvent('server.firewall.rule_removed', k, before), ruleEvent('server.firewall.rule_added', k, after)]),
    ]);
    function ruleEvent(type: string, key: string, r: RuleFacts) {
      return makeEvent({
        event: type,
        event_id: eventIdOf(ctx.host, 'firewall', type, key, r.rule, now),
        at: now,
        host: ctx.host,
        metadata: { source: 'firewall', tool, ...r },
      });
    }
  };
  return {
    name: 'firewall',
    start() {
      loop = every(cfg.interval_s * 1000, ctx, 'firewall', check);
    },
    async stop() {
      await loop?.stop();
    },
  };
}

function prefixed<T>(rec: Record<string, T>, prefix: string): Record<string, T> {
  return Object.fromEntries(Object.entries(rec).map(([k, v]) => [prefix + k, v]));
}
