/**
 * The databases the benchmarks start from: one per schema and size, filled once through the
 * batch route (so alerts, usage and detector state are those of real traffic), kept in
 * $TMPDIR/vigil-bench-prefill/, and copied for each run.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acceptedOf, bodies, drive, freePort, keyFor, type Server } from './lib.js';

/** Starts a checkout's service on `port` with `dataDir`. */
export type StartVigil = (dir: string, port: number, plansFile: string, dataDir: string) => Promise<Server>;

/** The checkout's migrations, hashed: databases filled by one schema are not reused by another. */
export function schemaTag(dir: string): string {
  const migrations = join(dir, 'src/storage/migrations');
  const hash = createHash('sha256');
  for (const file of readdirSync(migrations).sort()) hash.update(file).update(readFileSync(join(migrations, file)));
  return hash.digest('hex').slice(0, 12);
}

export async function stopServer(server: Server): Promise<void> {
  const exited = new Promise((done) => server.child.once('exit', done));
  server.child.kill('SIGTERM');
  await exited;
}

/**
 * The kept database of `events` events for the schema of the checkout at `dir`, made if missing:
 * a database of that size filled under an earlier schema is moved by this checkout's migrations
 * (far faster than filling anew); one the migrations cannot move is not used.
 */
export async function keptDatabase(dir: string, events: number, plansFile: string, startVigil: StartVigil): Promise<string> {
  const templates = join(tmpdir(), 'vigil-bench-prefill');
  const template = join(templates, `${schemaTag(dir)}-${events}`);
  if (existsSync(join(template, 'bench.json'))) return template;
  const filling = `${template}.filling`;
  rmSync(filling, { recursive: true, force: true });
  mkdirSync(filling, { recursive: true });
  const earlier = readdirSync(templates).find((name) => name.endsWith(`-${events}`) && existsSync(join(templates, name, 'bench.json')));
  const started = Date.now();
  let key: string | undefined;
  if (earlier !== undefined) {
    console.log(`migrating a copy of ${join(templates, earlier)} to ${template}`);
    cpSync(join(templates, earlier), filling, { recursive: true });
    const server = await startVigil(dir, await freePort(), plansFile, filling).catch(() => undefined);
    if (server) {
      await stopServer(server);
      key = (JSON.parse(readFileSync(join(filling, 'bench.json'), 'utf8')) as { key: string }).key;
      console.log(`  migrated (${Math.round((Date.now() - started) / 1000)} s)`);
    } else {
      rmSync(filling, { recursive: true, force: true });
      mkdirSync(filling, { recursive: true });
    }
  }
  if (key === undefined) {
    const port = await freePort();
    const server = await startVigil(dir, port, plansFile, filling);
    key = await keyFor(port, 'bench');
    console.log(`filling ${template} with ${events} events (once per schema and size)`);
    // Numbered past the measured bodies, so the runs do not replay the stored events.
    const payloads = bodies(1000, 100, 10_000_000);
    const auth = { authorization: `Bearer ${key}` };
    // Counted by the server: under load the client gives up on slow batches the server still stores.
    for (let stored = 0; stored < events; stored = (await acceptedOf(server)) ?? 0) {
      await drive('prefill', 'batch100', [server], '/v1/events/batch', payloads, 100, auth, undefined, 2);
      console.log(`  ${(await acceptedOf(server)) ?? 0} events stored (${Math.round((Date.now() - started) / 1000)} s)`);
    }
    await stopServer(server);
    writeFileSync(join(filling, 'bench.json'), JSON.stringify({ key }));
  }
  rmSync(template, { recursive: true, force: true });
  renameSync(filling, template);
  return template;
}

/** A fresh copy of a kept database, and the key of its account. */
export function copyOfKept(template: string, prefix: string): { dataDir: string; key: string } {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  // The server leaves folders in its data directory (feeds), so the copy is recursive.
  cpSync(template, dataDir, { recursive: true });
  const { key } = JSON.parse(readFileSync(join(template, 'bench.json'), 'utf8')) as { key: string };
  return { dataDir, key };
}
