// The floors of src/, lowest first. A module may import from its own folder and from lower floors,
// never from a higher one. `npm run layers` lists every upward import.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const FLOORS: readonly (readonly string[])[] = [
  ['util', 'event'],
  ['catalog'],
  ['enrichment', 'limits', 'storage'],
  ['detection', 'scoring'],
  ['redis', 'threat-models'],
  ['privacy'],
  ['pipeline'],
  ['audit'],
  ['accounts', 'ops', 'config', 'webhooks', 'team'],
  ['http', 'dashboard'],
  ['app.ts', 'services.ts'],
  ['main.ts', 'cli'],
];

const root = new URL('../../src/', import.meta.url).pathname;
const floorOf = new Map<string, number>(FLOORS.flatMap((names, floor) => names.map((name): [string, number] => [name, floor])));

function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (/\.(ts|tsx)$/.test(name)) yield path;
  }
}

/** Every import in src/ that goes to a higher floor (or to a folder with no floor). */
export function upwardImports(): string[] {
  const found: string[] = [];
  for (const file of sources(root)) {
    const from = relative(root, file).split('/')[0] as string;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:import|export)[^'"]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/g)) {
      const spec = (m[1] ?? m[2]) as string;
      const target = relative(root, resolve(dirname(file), spec)).split('/')[0] as string;
      if (target === from || target.startsWith('..')) continue;
      const a = floorOf.get(from);
      const b = floorOf.get(target.replace(/\.js$/, '.ts'));
      if (a === undefined || b === undefined || b > a) found.push(`${relative(root, file)} -> ${spec}`);
    }
  }
  return found;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const found = upwardImports();
  for (const line of found) console.log(line);
  console.log(`${found.length} upward import${found.length === 1 ? '' : 's'}`);
  process.exit(found.length === 0 ? 0 : 1);
}
