import { parseArgs } from 'node:util';
import { Accounts } from '../accounts/accounts.js';
import { ConfigError, loadConfig, type Config } from '../config/config.js';
import { openStore } from '../services.js';
import type { Store } from '../storage/store.js';
import type { KeyKind } from '../event/account.js';
import { systemClock } from '../util/clock.js';
import { updateFeeds } from '../enrichment/feeds/update.js';
import { prepareAsnCache } from '../enrichment/index.js';

const USAGE = `Usage: vigil <command>

  accounts create --plan <plan> [--name <name>]   create an account
  accounts list                                   list accounts
  keys create --account <id> --kind secret|publishable [--origins https://a.example,https://b.example]
                                                  create a key (shown once)
  keys list [--account <id>]                      list keys (never the keys themselves)
  keys revoke <key-id>                            revoke a key at once
  plans show                                      the plan table in force (VIGIL_PLANS_FILE applied)
  feeds update                                    download the feeds with a URL in VIGIL_FEEDS_DIR/feeds.json
                                                  (a failed download keeps the old file; the service reloads on change)
  geoip prepare                                   compile the ASN data (VIGIL_GEOIP_ASN or the shipped CSVs) into the
                                                  cache the service starts from (\`npm run build\` runs it)

Storage is chosen as by the service: VIGIL_DATA_DIR (SQLite) or VIGIL_DATABASE_URL.`;

class UsageError extends Error {}

function table(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return '(none)';
  const cols = Object.keys(rows[0] as object);
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(width[i] as number))
      .join('  ')
      .trimEnd();
  return [line(cols), ...rows.map((r) => line(cols.map((c) => String(r[c] ?? ''))))].join('\n');
}

async function withStore<T>(config: Config, fn: (store: Store, accounts: Accounts) => Promise<T>): Promise<T> {
  const store = await openStore(config);
  try {
    await store.migrate();
    return await fn(store, new Accounts(store, config.plans, systemClock));
  } finally {
    await store.close();
  }
}

export async function runCli(argv: string[], out: (line: string) => void): Promise<number> {
  const [group, command, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { plan: { type: 'string' }, name: { type: 'string' }, account: { type: 'string' }, kind: { type: 'string' }, origins: { type: 'string' } },
  });
  const key = `${group ?? ''} ${command ?? ''}`;
  if (key === 'geoip prepare') {
    // Runs at build time: needs no valid service configuration, only the ASN location.
    const status = await prepareAsnCache(process.env.VIGIL_GEOIP_ASN || undefined);
    out(
      `ASN table ${status.fromCache ? 'already cached' : 'compiled'}: ranges ${JSON.stringify(status.ranges)}, ${String(status.asns)} ASNs, cache ${String(status.cache)}${status.cacheError ? ` (not written: ${String(status.cacheError)})` : ''}`,
    );
    return 0;
  }
  const config = loadConfig();
  switch (key) {
    case 'accounts create': {
      if (!values.plan) throw new UsageError('accounts create needs --plan');
      const created = await withStore(config, (_s, accounts) => accounts.create(values.name ?? 'account', values.plan as string));
      if (!created.ok) throw new UsageError(created.message);
      out(`created account ${created.value.id} (plan ${created.value.plan})`);
      return 0;
    }
    case 'accounts list': {
      const list = await withStore(config, (store) => store.listAccounts());
      out(table(list.map((a) => ({ id: a.id, name: a.name, plan: a.plan, created: new Date(a.createdAt).toISOString() }))));
      return 0;
    }
    case 'keys create': {
      if (!values.account) throw new UsageError('keys create needs --account');
      if (values.kind !== 'secret' && values.kind !== 'publishable') throw new UsageError('keys create needs --kind secret or --kind publishable');
      const origins = values.origins ? values.origins.split(',').map((o) => o.trim()) : [];
      const created = await withStore(config, (_s, accounts) => accounts.createKey(values.account as string, values.kind as KeyKind, origins));
      if (!created.ok) throw new UsageError(created.message);
      out(`created ${created.value.record.kind} key ${created.value.record.id}; it is shown this once:`);
      out(created.value.key);
      return 0;
    }
    case 'keys list': {
      const list = await withStore(config, (store) => store.listKeys(values.account));
      out(
        table(
          list.map((k) => ({
            id: k.id,
            account: k.accountId,
            kind: k.kind,
            prefix: k.prefix,
            origins: k.allowedOrigins.join(','),
            revoked: k.revokedAt ? new Date(k.revokedAt).toISOString() : '',
          })),
        ),
      );
      return 0;
    }
    case 'keys revoke': {
      const id = positionals[0];
      if (!id) throw new UsageError('keys revoke needs the key id');
      const revoked = await withStore(config, (_s, accounts) => accounts.revokeKey(id));
      if (!revoked.ok) throw new UsageError(revoked.message);
      out(`revoked ${id}`);
      return 0;
    }
    case 'feeds update': {
      if (!config.feedsDir) throw new UsageError('feeds update needs VIGIL_FEEDS_DIR (the folder with feeds.json and the feed files)');
      const report = await updateFeeds(config.feedsDir);
      out(
        table(
          report.feeds.map((f) => ({
            file: f.file,
            kind: f.kind,
            outcome: f.outcome,
            entries: f.entries ?? '',
            malformed: f.malformed ?? '',
            url: f.url ?? '',
          })),
        ),
      );
      for (const error of report.errors) out(`feeds.json: ${error}`);
      out(`${report.updated} updated, ${report.failed} failed (old file kept), ${report.skipped} without a URL`);
      return report.failed > 0 || report.errors.length > 0 ? 1 : 0;
    }
    case 'plans show': {
      out(
        table(
          Object.values(config.plans).map((p) => ({
            plan: p.name,
            rpm: p.rpm,
            eps: p.eps,
            batch_max: p.batchMax || 'unavailable',
            monthly_cap: p.monthlyCap,
            overage: p.overage,
            overage_usd_per_1000: p.overageUsdPer1000 ?? '',
          })),
        ),
      );
      return 0;
    }
    default:
      throw new UsageError(group ? `unknown command "${key.trim()}"` : 'no command given');
  }
}

export async function cliMain(argv: string[]): Promise<number> {
  try {
    return await runCli(argv, (line) => process.stdout.write(line + '\n'));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`vigil: ${err.message}\n\n${USAGE}\n`);
      return 64;
    }
    if (err instanceof ConfigError) {
      process.stderr.write(`vigil: configuration error: ${err.message}\n`);
      return 78;
    }
    if (err instanceof TypeError && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`vigil: ${err.message}\n\n${USAGE}\n`);
      return 64;
    }
    throw err;
  }
}
