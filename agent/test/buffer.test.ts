import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventBuffer } from '../src/buffer.js';
import { DEFAULTS } from '../src/config.js';
import { authLineHandler } from '../src/sources/auth.js';

const mode = (path: string) => statSync(path).mode & 0o777;
const SUDO = 'Jan 20 03:14:07 db1 sudo:   alice : TTY=pts/0 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/mysql -u root -pS3cretPassw0rd shop\n';

describe('the event buffer on disk', () => {
  it('creates its database, WAL and shared-memory files readable by the agent’s user only, whatever the umask', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-buffer-'));
    const previous = process.umask(0o022);
    try {
      const buffer = new EventBuffer(join(dir, 'buffer.db'), 1000, false, DEFAULTS.redact);
      buffer.append(authLineHandler('db1')([{ text: SUDO.trimEnd(), offset: 0 }], { path: '/var/log/auth.log', ino: 1 }));
      for (const file of ['buffer.db', 'buffer.db-wal', 'buffer.db-shm']) expect(mode(join(dir, file)), file).toBe(0o600);
      buffer.close();
    } finally {
      process.umask(previous);
    }
  });

  it('narrows a buffer an earlier release left world-readable', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-buffer-'));
    const path = join(dir, 'buffer.db');
    new EventBuffer(path, 1000).close();
    chmodSync(path, 0o644);
    // An empty WAL file is one SQLite ignores; left behind 0644 it is narrowed too.
    writeFileSync(`${path}-wal`, '', { mode: 0o644 });
    chmodSync(`${path}-wal`, 0o644);
    const buffer = new EventBuffer(path, 1000);
    expect([mode(path), mode(`${path}-wal`)]).toEqual([0o600, 0o600]);
    buffer.close();
  });

  it('never writes a password from a sudo command line to disk', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-buffer-'));
    const buffer = new EventBuffer(join(dir, 'buffer.db'), 1000, false, DEFAULTS.redact);
    buffer.append(authLineHandler('db1')([{ text: SUDO.trimEnd(), offset: 0 }], { path: '/var/log/auth.log', ino: 1 }));
    const [pending] = buffer.pending(10);
    expect(JSON.parse(pending?.body ?? '{}').metadata.command).toBe('/usr/bin/mysql -u root -p*** shop');
    for (const file of ['buffer.db', 'buffer.db-wal']) expect(readFileSync(join(dir, file)).includes('S3cretPassw0rd'), file).toBe(false);
    buffer.close();
  });
});
