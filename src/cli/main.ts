import { parseArgs, type ParseArgsConfig } from 'node:util';
import { Accounts } from '../accounts/accounts.js';
import { ConfigError, loadConfig, type Config } from '../config/config.js';
import { openStore } from '../services.js';
import { StoreUnavailableError, type Store } from '../storage/store.js';
import type { ApiKeyRecord } from '../storage/types.js';
import type { KeyKind } from '../event/account.js';
import { planFileEntry } from '../limits/plans.js';
import { systemClock } from '../util/clock.js';
import { updateFeeds } from '../enrichment/feeds/update.js';
import { prepareFeedsDir } from '../enrichment/feeds/defaults.js';
import { prepareAsnCache } from '../enrichment/index.js';
import { AuditTrail, CLI_OPERATOR } from '../audit/trail.js';
import { Members, type TeamDeps } from '../team/members.js';
import { Invitations } from '../team/invitations.js';
import { PasswordResets } from '../team/password-reset.js';
import { smtpMailer } from '../team/mailer.js';

/** A command line that cannot be run as written (exit 64, as sysexits' EX_USAGE). */
class UsageError extends Error {}
/** The command ran and was refused: unknown account, plan or key (exit 1). */
class CommandError extends Error {}

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

interface Command {
  /** `group command`, e.g. `keys create`. */
  readonly name: string;
  /** The arguments after the name, as shown in help. */
  readonly synopsis: string;
  readonly summary: string;
  /** Further lines of `vigil help <command>`. */
  readonly details?: readonly string[];
  readonly options?: NonNullable<ParseArgsConfig['options']>;
  /** Names of the positional arguments it takes, in order (all required). */
  readonly positionals?: readonly string[];
  /** Runs without a service configuration (build-time commands). */
  readonly configFree?: true;
  run(args: { values: Values; positionals: readonly string[]; config: Config | undefined; out: (line: string) => void }): Promise<number>;
}

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

const keyRow = (k: ApiKeyRecord) => ({
  id: k.id,
  account: k.accountId,
  kind: k.kind,
  prefix: k.prefix,
  name: k.name ?? '',
  scopes: k.scopes.join(','),
  origins: k.allowedOrigins.join(','),
  revoked: k.revokedAt ? new Date(k.revokedAt).toISOString() : '',
});

/** `a, b` as given to --origins or --scopes: comma-separated, blanks dropped (an empty value means none). */
const commaList = (text: string): string[] =>
  text
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o.length > 0);

async function withAccounts<T>(config: Config | undefined, fn: (accounts: Accounts, store: Store) => Promise<T>): Promise<T> {
  if (!config) throw new Error('this command needs the service configuration');
  const store = await openStore(config);
  try {
    await store.migrate();
    // No `changed` hook: a running service sees these changes once its key cache expires (2 s).
    return await fn(new Accounts(store.accounts, config.plans, systemClock, { audit: new AuditTrail(store.audit, systemClock) }), store);
  } finally {
    await store.close();
  }
}

/** The team classes on the CLI's store: the operator's links use VIGIL_PUBLIC_URL, and mail goes out when SMTP is set. */
const teamOf = (config: Config, store: Store): TeamDeps => ({
  store,
  audit: new AuditTrail(store.audit, systemClock),
  clock: systemClock,
  publicUrl: config.team.publicUrl,
  mailer: config.team.smtp ? smtpMailer(config.team.smtp) : undefined,
});

const CLI_ORIGIN = { actor: CLI_OPERATOR, ip: null, userAgent: null } as const;

/** Said under a printed link when VIGIL_PUBLIC_URL is unset. */
const RELATIVE_LINK_NOTE = 'The link is relative: VIGIL_PUBLIC_URL is unset, so put the address people reach Vigil at in front of it.';

/** The first line of standard input: a password given by a pipe never appears in the process list or the shell history. */
async function passwordFromStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError('members add reads the new password from standard input: pipe it in (see vigil help members add)');
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes('\n') || text.length > 1000) break;
  }
  const password = text.split(/\r?\n/)[0] ?? '';
  if (password.length === 0) throw new UsageError('members add: standard input holds no password');
  return password;
}

/** The value of an accounts/keys operation, or a one-line refusal. */
function unwrap<T>(result: { ok: true; value: T } | { ok: false; message: string }): T {
  if (!result.ok) throw new CommandError(result.message);
  return result.value;
}

function required(values: Values, name: string, command: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.length === 0) throw new UsageError(`${command} needs --${name}`);
  return value;
}

const COMMANDS: readonly Command[] = [
  {
    name: 'accounts create',
    synopsis: '--plan <plan> [--name <name>]',
    summary: 'create an account',
    options: { plan: { type: 'string' }, name: { type: 'string' } },
    async run({ values, config, out }) {
      const plan = required(values, 'plan', 'accounts create');
      const name = typeof values.name === 'string' ? values.name : 'account';
      const account = unwrap(await withAccounts(config, (accounts) => accounts.create(name, plan, CLI_ORIGIN)));
      out(`created account ${account.id} (plan ${account.plan})`);
      return 0;
    },
  },
  {
    name: 'accounts list',
    synopsis: '',
    summary: 'list accounts',
    async run({ config, out }) {
      const list = await withAccounts(config, (_accounts, store) => store.accounts.listAccounts());
      out(table(list.map((a) => ({ id: a.id, name: a.name, plan: a.plan, created: new Date(a.createdAt).toISOString() }))));
      return 0;
    },
  },
  {
    name: 'accounts set-plan',
    synopsis: '<account-id> --plan <plan>',
    summary: "change an account's plan (limits, quota and features follow at once)",
    details: ['A running service applies the change within 2 seconds; `plans show` lists the plans.'],
    options: { plan: { type: 'string' } },
    positionals: ['account-id'],
    async run({ values, positionals, config, out }) {
      const plan = required(values, 'plan', 'accounts set-plan');
      const id = positionals[0] as string;
      const account = unwrap(await withAccounts(config, (accounts) => accounts.changePlan(id, plan, CLI_ORIGIN)));
      out(`account ${account.id} is now on plan ${account.plan}`);
      return 0;
    },
  },
  {
    name: 'keys create',
    synopsis: '--account <id> [--kind secret|publishable] [--scopes ingest,read,manage] [--name <name>] [--origins <origin>,<origin>]',
    summary: 'create a key (shown once)',
    details: [
      'The kind is secret unless --kind publishable. --scopes limits what the key may do: ingest (send',
      'events), read (events, alerts, usage), manage (change the account: keys, settings, webhooks,',
      'threat models, alerts); without it a secret key may do all three. A publishable key only ever',
      'holds ingest. `keys set-scopes` changes them later; the change is in the audit trail.',
      'A publishable key is accepted from browsers only on the origins it lists (scheme://host[:port]',
      'exactly as the browser sends it, or * for any); `keys set-origins` changes them later.',
    ],
    options: { account: { type: 'string' }, kind: { type: 'string' }, origins: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' } },
    async run({ values, config, out }) {
      const account = required(values, 'account', 'keys create');
      const kind = values.kind ?? 'secret';
      if (kind !== 'secret' && kind !== 'publishable') throw new UsageError('keys create: --kind is secret or publishable');
      const origins = typeof values.origins === 'string' ? commaList(values.origins) : [];
      const options = {
        ...(typeof values.scopes === 'string' ? { scopes: commaList(values.scopes) } : {}),
        ...(typeof values.name === 'string' ? { name: values.name } : {}),
        by: CLI_ORIGIN,
      };
      const created = unwrap(await withAccounts(config, (accounts) => accounts.createKey(account, kind satisfies KeyKind, origins, options)));
      out(`created ${created.record.kind} key ${created.record.id} (scopes ${created.record.scopes.join(', ')}); it is shown this once:`);
      out(created.key);
      return 0;
    },
  },
  {
    name: 'keys list',
    synopsis: '[--account <id>]',
    summary: 'list keys (never the keys themselves)',
    options: { account: { type: 'string' } },
    async run({ values, config, out }) {
      const account = typeof values.account === 'string' ? values.account : undefined;
      const list = await withAccounts(config, (_accounts, store) => store.accounts.listKeys(account));
      out(table(list.map(keyRow)));
      return 0;
    },
  },
  {
    name: 'keys set-origins',
    synopsis: '<key-id> --origins <origin>,<origin>',
    summary: 'replace the browser origins a publishable key is accepted from',
    details: [
      'Origins are scheme://host[:port] exactly as the browser sends them (https://app.example.com),',
      'or * for any; --origins "" removes them all. A running service applies the change within 2 seconds.',
    ],
    options: { origins: { type: 'string' } },
    positionals: ['key-id'],
    async run({ values, positionals, config, out }) {
      if (typeof values.origins !== 'string') throw new UsageError('keys set-origins needs --origins');
      const origins = commaList(values.origins);
      const id = positionals[0] as string;
      const key = unwrap(await withAccounts(config, (accounts) => accounts.setKeyOrigins(id, origins, { by: CLI_ORIGIN })));
      out(key.allowedOrigins.length > 0 ? `key ${key.id} allows ${key.allowedOrigins.join(', ')}` : `key ${key.id} allows no browser origin`);
      return 0;
    },
  },
  {
    name: 'keys set-scopes',
    synopsis: '<key-id> --scopes ingest,read,manage',
    summary: 'replace what a key may do',
    details: [
      'Scopes: ingest (send events), read (events, alerts, usage), manage (change the account).',
      'A publishable key only ever holds ingest. A running service applies the change within 2 seconds.',
    ],
    options: { scopes: { type: 'string' } },
    positionals: ['key-id'],
    async run({ values, positionals, config, out }) {
      const scopes = commaList(required(values, 'scopes', 'keys set-scopes'));
      const id = positionals[0] as string;
      const key = unwrap(await withAccounts(config, (accounts) => accounts.updateKey(id, { scopes }, { by: CLI_ORIGIN })));
      out(`key ${key.id} has the scopes ${key.scopes.join(', ')}`);
      return 0;
    },
  },
  {
    name: 'keys rename',
    synopsis: '<key-id> --name <name>',
    summary: 'rename a key',
    options: { name: { type: 'string' } },
    positionals: ['key-id'],
    async run({ values, positionals, config, out }) {
      const name = required(values, 'name', 'keys rename');
      const id = positionals[0] as string;
      const key = unwrap(await withAccounts(config, (accounts) => accounts.updateKey(id, { name }, { by: CLI_ORIGIN })));
      out(`key ${key.id} is named ${JSON.stringify(key.name)}`);
      return 0;
    },
  },
  {
    name: 'keys revoke',
    synopsis: '<key-id>',
    summary: 'revoke a key',
    details: ['A running service refuses it within 2 seconds (through /v1/keys or the admin API: at once).'],
    positionals: ['key-id'],
    async run({ positionals, config, out }) {
      const id = positionals[0] as string;
      unwrap(await withAccounts(config, (accounts) => accounts.revokeKey(id, { by: CLI_ORIGIN })));
      out(`revoked ${id}`);
      return 0;
    },
  },
  {
    name: 'plans show',
    synopsis: '',
    summary: 'the plan table in force (VIGIL_PLANS_FILE applied)',
    async run({ config, out }) {
      out(table(Object.values(config?.plans ?? {}).map((p) => Object.assign({ plan: p.name }, planFileEntry(p), { batch_max: p.batchMax || 'unavailable' }))));
      return 0;
    },
  },
  {
    name: 'feeds update',
    synopsis: '',
    summary: 'download the threat-intel feeds listed with a URL in feeds.json',
    details: [
      'The feeds folder is VIGIL_FEEDS_DIR, or <VIGIL_DATA_DIR>/feeds, which gets the default feeds.json',
      '(Tor exit list, FireHOL level 1, Spamhaus DROP) when it has none. A failed download keeps the',
      'old file; the running service reloads the files that changed. Exits 1 when a download failed.',
    ],
    async run({ config, out }) {
      const dir = config?.feedsDir;
      if (!dir) throw new UsageError('feeds update needs VIGIL_FEEDS_DIR or a VIGIL_DATA_DIR on disk');
      const created = await prepareFeedsDir(dir);
      if (created) out(`wrote the default feeds.json to ${dir}`);
      const report = await updateFeeds(dir);
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
    },
  },
  {
    name: 'geoip prepare',
    synopsis: '',
    summary: 'compile the ASN data into the cache the service starts from',
    details: ['Reads VIGIL_GEOIP_ASN or the shipped CSVs; `npm install` runs it.'],
    configFree: true,
    async run({ out }) {
      const status = await prepareAsnCache(process.env.VIGIL_GEOIP_ASN || undefined);
      out(
        `ASN table ${status.fromCache ? 'already cached' : 'compiled'}: ranges ${JSON.stringify(status.ranges)}, ${String(status.asns)} ASNs, cache ${String(status.cache)}${status.cacheError ? ` (not written: ${String(status.cacheError)})` : ''}`,
      );
      return 0;
    },
  },
  {
    name: 'members add',
    synopsis: '--account <id> --email <email> --role owner|admin|analyst|viewer [--name <name>]',
    summary: 'add a person to an account (the first owner, or anyone); the password is read from standard input',
    details: [
      'A new person gets the password given on standard input (one line), e.g.',
      '  read -s PW && printf \'%s\\n\' "$PW" | npx vigil members add --account acc_… --email you@example.com --role owner',
      'A person who already has a password (a member of another account) keeps it, and nothing is read.',
      'The change is recorded in the audit trail with the operator as its actor.',
    ],
    options: { account: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' }, name: { type: 'string' } },
    async run({ values, config, out }) {
      const accountId = required(values, 'account', 'members add');
      const email = required(values, 'email', 'members add');
      const role = required(values, 'role', 'members add');
      const name = typeof values.name === 'string' ? values.name : undefined;
      const result = await withAccounts(config, async (_accounts, store) => {
        const members = new Members(store, new AuditTrail(store.audit, systemClock), systemClock);
        const existing = await store.members.findUserByEmail(email);
        const password = existing ? undefined : await passwordFromStdin();
        return members.add({ accountId, actor: CLI_OPERATOR, ip: null, userAgent: null }, { email, role, name, password });
      });
      const added = unwrap(result);
      out(`added ${added.user.email} to account ${accountId} as ${added.member.role}${added.created ? '' : ' (an existing person, who keeps their password)'}`);
      out('They sign in at /dashboard with their email and password.');
      return 0;
    },
  },
  {
    name: 'members invite',
    synopsis: '--account <id> --email <email> --role owner|admin|analyst|viewer',
    summary: 'invite someone to an account by a single-use link (valid 72 hours)',
    details: [
      'Prints the link to pass on, or mails it when VIGIL_SMTP_URL is set. The person opens it, chooses a',
      'password (or enters theirs, if they already have one) and joins the account with the role.',
    ],
    options: { account: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' } },
    async run({ values, config, out }) {
      const accountId = required(values, 'account', 'members invite');
      const email = required(values, 'email', 'members invite');
      const role = required(values, 'role', 'members invite');
      const invitation = unwrap(
        await withAccounts(config, (_accounts, store) =>
          new Invitations(teamOf(config as Config, store)).invite({ accountId, ...CLI_ORIGIN }, { email, role }),
        ),
      );
      const expires = new Date(invitation.record.expiresAt).toISOString();
      if (invitation.link === undefined) out(`mailed an invitation to ${email} (expires ${expires})`);
      else {
        out(`invitation for ${email} as ${role}, valid until ${expires}; pass this link on:`);
        out(invitation.link);
        if (!config?.team.publicUrl) out(RELATIVE_LINK_NOTE);
      }
      return 0;
    },
  },
  {
    name: 'members reset-link',
    synopsis: '--email <email>',
    summary: "a single-use link that sets a person's password (valid one hour)",
    details: ['For someone who forgot their password when Vigil sends no mail; using it ends all their sessions.'],
    options: { email: { type: 'string' } },
    async run({ values, config, out }) {
      const email = required(values, 'email', 'members reset-link');
      const { link } = unwrap(
        await withAccounts(config, (_accounts, store) => new PasswordResets(teamOf(config as Config, store)).operatorLink(CLI_ORIGIN, email)),
      );
      out(link);
      if (!config?.team.publicUrl) out(RELATIVE_LINK_NOTE);
      return 0;
    },
  },
  {
    name: 'members list',
    synopsis: '--account <id>',
    summary: "list an account's members and their roles",
    options: { account: { type: 'string' } },
    async run({ values, config, out }) {
      const accountId = required(values, 'account', 'members list');
      const list = await withAccounts(config, (_accounts, store) => store.members.listMembers(accountId));
      out(
        table(
          list.map(({ member, user }) => ({
            id: user.id,
            email: user.email,
            name: user.name,
            role: member.role,
            totp: user.totpEnabledAt === null ? 'no' : 'yes',
            last_sign_in: user.lastSignInAt === null ? '' : new Date(user.lastSignInAt).toISOString(),
          })),
        ),
      );
      return 0;
    },
  },
];

const usageLine = (c: Command) => `vigil ${c.name}${c.synopsis ? ` ${c.synopsis}` : ''}`;

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: vigil <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'vigil help <command> (or vigil <command> --help) shows its options.',
    'Storage is chosen as by the service: VIGIL_DATA_DIR (SQLite) or VIGIL_DATABASE_URL.',
  ].join('\n');
}

function commandHelp(c: Command): string {
  return [`Usage: ${usageLine(c)}`, '', `${c.summary[0]?.toUpperCase() ?? ''}${c.summary.slice(1)}.`, ...(c.details ?? [])].join('\n');
}

/** The commands whose name starts with these words (`keys` -> every keys command). */
function matching(words: readonly string[]): readonly Command[] {
  const prefix = words.join(' ');
  return COMMANDS.filter((c) => c.name === prefix || c.name.startsWith(`${prefix} `));
}

function help(words: readonly string[], out: (line: string) => void): number {
  if (words.length === 0) {
    out(overview());
    return 0;
  }
  const found = matching(words);
  if (found.length === 0) throw new UsageError(`unknown command "${words.join(' ')}"; vigil --help lists the commands`);
  out(found.length === 1 ? commandHelp(found[0] as Command) : found.map(usageLine).join('\n'));
  return 0;
}

const isHelpFlag = (arg: string) => arg === '--help' || arg === '-h';

/** Runs one command line; `out` receives stdout lines. Throws UsageError, CommandError or ConfigError. */
export async function runCli(argv: readonly string[], out: (line: string) => void): Promise<number> {
  const words = argv.filter((a) => !a.startsWith('-')).slice(0, 2);
  if (argv[0] === 'help') return help(argv.slice(1), out);
  if (argv.length === 0 || isHelpFlag(argv[0] as string)) return help([], out);
  const command = COMMANDS.find((c) => c.name === words.join(' '));
  if (argv.some(isHelpFlag)) return help(command ? command.name.split(' ') : words.slice(0, 1), out);
  if (!command) {
    const group = matching(words.slice(0, 1));
    if (group.length > 0 && words.length === 1) throw new UsageError(`"${words[0]}" needs a command: ${group.map((c) => c.name).join(', ')}`);
    throw new UsageError(`unknown command "${words.join(' ')}"; vigil --help lists the commands`);
  }
  const rest = argv.slice(2);
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...rest], options: command.options ?? {}, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${command.name}: ${(err as Error).message.split('\n')[0] ?? ''}`);
  }
  const expected = command.positionals ?? [];
  if (parsed.positionals.length < expected.length) throw new UsageError(`${command.name} needs <${expected[parsed.positionals.length] ?? ''}>`);
  if (parsed.positionals.length > expected.length) throw new UsageError(`${command.name}: unexpected argument "${parsed.positionals[expected.length] ?? ''}"`);
  const config = command.configFree ? undefined : loadConfig();
  return command.run({ values: parsed.values, positionals: parsed.positionals, config, out });
}

/** `vigil …`: output on stdout; an error is one line on stderr and a non-zero exit code. */
export async function cliMain(argv: readonly string[]): Promise<number> {
  try {
    return await runCli(argv, (line) => process.stdout.write(line + '\n'));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`vigil: ${err.message}\n`);
      return 64;
    }
    if (err instanceof CommandError) {
      process.stderr.write(`vigil: ${err.message}\n`);
      return 1;
    }
    if (err instanceof ConfigError) {
      process.stderr.write(`vigil: configuration error: ${err.message}\n`);
      return 78;
    }
    if (err instanceof StoreUnavailableError) {
      process.stderr.write(`vigil: the database cannot be reached: ${err.message.split('\n')[0] ?? ''}\n`);
      return 69;
    }
    throw err;
  }
}
