/**
 * Sigma acceptance on a corpus of rules: every `.yml`/`.yaml` file under a directory (a SigmaHQ
 * checkout's `rules*` folders, say) goes through the check `POST /v1/threat-models` runs on a
 * Sigma rule sent as YAML (threat-models/check-input.ts, in process: translation, validation,
 * compilation; an account without field overrides), and the answers are counted: accepted,
 * refused, and the refusals grouped by reason.
 *
 *   npx tsx bench/sigma-corpus.ts <dir> [--json] [--files]
 *
 * A reason is the refusal's message with what it names (a modifier, a field, a condition, a
 * pattern: the text between backticks or double quotes) taken out, so that one construct's
 * refusals group together whatever rule they come from; each group lists what it named, counted,
 * and a few of its files. `--files` also lists every refused file with its messages; `--json`
 * prints all of it as JSON.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { checkModelRequest } from '../src/threat-models/check-input.js';
import type { ErrorDetail } from '../src/event/rejection.js';

const EXAMPLES_PER_REASON = 3;

interface Refused {
  readonly file: string;
  readonly errors: readonly ErrorDetail[];
}

interface ReasonGroup {
  readonly reason: string;
  /** Rules refused for it (a rule counts once per reason). */
  rules: number;
  /** What the refusals named, and how many rules named each. */
  readonly named: Map<string, number>;
  readonly examples: string[];
}

function* ruleFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* ruleFiles(path);
    else if (/\.ya?ml$/i.test(name)) yield path;
  }
}

const NAMED = /`[^`]*`|"[^"]*"/g;

/** The message with what it names replaced by `…`, and what it named. */
function reasonOf(message: string): { reason: string; named: string } {
  const named = (message.match(NAMED) ?? []).map((m) => m.slice(1, -1));
  return { reason: message.replace(NAMED, (m) => `${m[0] as string}…${m[0] as string}`), named: named.join(' ') };
}

function main(): void {
  const args = process.argv.slice(2);
  const dirArg = args.find((a) => !a.startsWith('--'));
  if (dirArg === undefined) {
    console.error('usage: npx tsx bench/sigma-corpus.ts <dir> [--json] [--files]');
    process.exit(2);
  }
  const dir = resolve(dirArg);
  const json = args.includes('--json');
  const listFiles = args.includes('--files');

  let total = 0;
  let accepted = 0;
  const refused: Refused[] = [];
  const groups = new Map<string, ReasonGroup>();
  for (const path of ruleFiles(dir)) {
    total++;
    const file = relative(dir, path);
    const result = checkModelRequest({ id: total, kind: 'input', body: readFileSync(path, 'utf8'), fields: {} });
    if (result.ok) {
      accepted++;
      continue;
    }
    refused.push({ file, errors: result.errors });
    const seen = new Set<string>();
    for (const error of result.errors) {
      const { reason, named } = reasonOf(error.message);
      const group = groups.get(reason) ?? { reason, rules: 0, named: new Map<string, number>(), examples: [] };
      groups.set(reason, group);
      if (named !== '') group.named.set(named, (group.named.get(named) ?? 0) + 1);
      if (seen.has(reason)) continue;
      seen.add(reason);
      group.rules++;
      if (group.examples.length < EXAMPLES_PER_REASON) group.examples.push(file);
    }
  }

  const reasons = [...groups.values()].sort((a, b) => b.rules - a.rules || a.reason.localeCompare(b.reason));
  const byCount = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (json) {
    const out = {
      dir,
      total,
      accepted,
      refused: refused.length,
      reasons: reasons.map((g) => ({ reason: g.reason, rules: g.rules, named: Object.fromEntries(byCount(g.named)), examples: g.examples })),
      ...(listFiles ? { files: refused } : {}),
    };
    console.log(JSON.stringify(out, null, 2));
    return;
  }
  const pct = total === 0 ? 0 : (100 * accepted) / total;
  console.log(`${dir}: ${total} rules, ${accepted} accepted (${pct.toFixed(1)}%), ${refused.length} refused`);
  if (reasons.length > 0) console.log('\nrefusals by reason (rules):');
  for (const g of reasons) {
    console.log(`${String(g.rules).padStart(6)}  ${g.reason}`);
    const named = byCount(g.named);
    if (named.length > 0)
      console.log(
        `        named: ${named
          .slice(0, 12)
          .map(([n, c]) => `${n} (${c})`)
          .join(', ')}${named.length > 12 ? `, … ${named.length - 12} more` : ''}`,
      );
    console.log(`        e.g. ${g.examples.join(', ')}`);
  }
  if (listFiles) {
    console.log('\nrefused files:');
    for (const r of refused) console.log(`${r.file}\n${r.errors.map((e) => `    ${e.field}: ${e.message}`).join('\n')}`);
  }
}

main();
