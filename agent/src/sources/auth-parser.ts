import { eventIdOf, makeEvent, type AgentEvent } from '../event.js';
import type { SyslogRecord } from '../syslog.js';

/** The programs whose messages the auth source reads (also the journal filter). */
export const AUTH_IDENTS = ['sshd', 'sudo', 'su', 'useradd', 'userdel', 'usermod', 'groupadd', 'groupdel'];

const PRIVILEGED_GROUPS = new Set(['root', 'sudo', 'wheel', 'admin', 'adm', 'docker', 'lxd', 'disk', 'shadow']);

/*
 * sshd writes the user name the client sent verbatim, so a name may itself read like
 * "x from 10.9.8.7 port 22 ssh2". The name is matched greedily, so what follows it (address,
 * port, protocol, key) is the last such part of the message: the one sshd appended itself.
 */
const SSH_ACCEPTED = /^Accepted (\S+) for (.*) from (\S+) port (\d+)(?: ssh2)?(?:: (.*))?$/;
const SSH_FAILED = /^Failed (\S+) for (invalid user )?(.*) from (\S+) port (\d+)(?: ssh2)?(?:: .*)?$/;
const SSH_INVALID = /^Invalid user (.*) from (\S+)(?: port (\d+))?(?: \[preauth\])?\s*$/;
const SSH_DISCONNECTED = /^Disconnected from user (.*) (\S+) port (\d+)(?: \[preauth\])?$/;
const REPEATED = /^message repeated (\d+) times: \[ ?(.*)\]$/;
/** The most attempts one "message repeated" line may stand for (one event carries them as `count`). */
const MAX_REPEAT = 10_000;
const SUDO = /^\s*(\S+) : (?:(.*?) ; )?TTY=(\S+) ; PWD=(.*?) ; USER=(\S+) ; (?:GROUP=\S+ ; )?(?:ENV=.*? ; )?COMMAND=(.*)$/;
const SU_UTIL_LINUX = /^(FAILED SU )?\(to (\S+)\) (\S+) on (\S+)$/;
const SU_SHADOW = /^(Successful|FAILED) su for (\S+) by (\S+)$/;
const NEW_USER = /^new user: name=([^,]+), UID=(\d+), GID=(\d+), home=([^,]*), shell=([^,]*)(?:, from=(\S+))?$/;
const NEW_GROUP = /^new group: name=([^,]+), GID=(\d+)$/;
const DELETE_USER = /^delete user '([^']+)'$/;
const GROUP_REMOVED = /^group '([^']+)' removed$/;
const ADD_TO_GROUP = /^add '([^']+)' to group '([^']+)'$/;
const DELETE_FROM_GROUP = /^delete '([^']+)' from group '([^']+)'$/;
const USERMOD_CHANGE = /^(?:change|lock|unlock) user(?: name)? '([^']+)'/;

/** Where a record came from, for a stable event_id: e.g. "file:/var/log/auth.log:<inode>:<offset>" or a journal cursor. */
export type Origin = string;

/**
 * sshd, sudo, su and shadow-utils messages to `server.*` events: one event per attempt.
 * The PAM lines that echo an attempt (pam_unix auth failure, "PAM n more authentication
 * failures", session opened/closed) are not counted; `message repeated N times` is one event
 * with `count` N (at most 10,000), which the service's detectors count as N attempts; "Invalid user" counts the first attempt of that connection, so its first
 * "Failed ... for invalid user" is not counted again.
 */
export class AuthParser {
  /** sshd pids whose "Invalid user" line already counted the next failure. */
  private readonly invalidUserPids = new Map<number, true>();

  constructor(private readonly host: string) {}

  parse(rec: SyslogRecord, origin: Origin): AgentEvent[] {
    const out: AgentEvent[] = [];
    const ident = rec.ident;
    const add = (event: string, actor: string | undefined, ip: string | undefined, metadata: Record<string, unknown>) =>
      out.push(
        makeEvent({
          event,
          event_id: eventIdOf(this.host, origin, out.length),
          at: rec.at,
          host: this.host,
          actor_id: actor,
          ip,
          metadata: { source: 'auth', program: ident, pid: rec.pid, ...metadata },
        }),
      );
    if (ident === 'sshd' || ident === 'sshd-session') {
      const repeated = REPEATED.exec(rec.message);
      if (repeated) {
        // One event stands for the repeats (`count`): a forged line then costs one event, not thousands.
        const count = Math.min(Number(repeated[1]), MAX_REPEAT);
        this.sshd(rec.pid, repeated[2] as string, (event, actor, ip, metadata) => add(event, actor, ip, { ...metadata, count }));
      } else this.sshd(rec.pid, rec.message, add);
    } else if (ident === 'sudo') this.sudo(rec.message, add);
    else if (ident === 'su') this.su(rec.message, add);
    else this.shadow(ident, rec.message, add);
    return out;
  }

  private sshd(pid: number | undefined, message: string, add: AddFn): void {
    let m = SSH_ACCEPTED.exec(message);
    if (m) {
      add('server.ssh.login.success', m[2], m[3], { method: m[1], port: Number(m[4]), key: m[5] });
      return;
    }
    m = SSH_FAILED.exec(message);
    if (m) {
      // "none" is the client asking which methods exist, not a credential attempt.
      if (m[1] === 'none') return;
      const invalid = m[2] !== undefined;
      if (invalid && pid !== undefined && this.invalidUserPids.delete(pid)) return;
      add('server.ssh.login.failure', m[3], m[4], { method: m[1], port: Number(m[5]), reason: invalid ? 'invalid_user' : 'bad_credentials' });
      return;
    }
    m = SSH_INVALID.exec(message);
    if (m) {
      if (pid !== undefined) this.markInvalid(pid);
      add('server.ssh.login.failure', m[1] || undefined, m[2], {
        method: undefined,
        port: m[3] === undefined ? undefined : Number(m[3]),
        reason: 'invalid_user',
      });
      return;
    }
    m = SSH_DISCONNECTED.exec(message);
    if (m) add('server.ssh.session.closed', m[1], m[2], { port: Number(m[3]) });
  }

  private markInvalid(pid: number): void {
    this.invalidUserPids.set(pid, true);
    if (this.invalidUserPids.size > 10_000) this.invalidUserPids.delete(this.invalidUserPids.keys().next().value as number);
  }

  private sudo(message: string, add: AddFn): void {
    const m = SUDO.exec(message);
    if (!m) return;
    const problem = m[2];
    add('server.user.sudo', m[1], undefined, {
      target_user: m[5],
      command: m[6],
      tty: m[3],
      cwd: m[4],
      success: problem === undefined,
      reason: problem,
    });
  }

  private su(message: string, add: AddFn): void {
    let m = SU_UTIL_LINUX.exec(message);
    if (m) {
      add('server.user.su', m[3], undefined, { target_user: m[2], tty: m[4], success: m[1] === undefined });
      return;
    }
    m = SU_SHADOW.exec(message);
    if (m) add('server.user.su', m[3], undefined, { target_user: m[2], success: m[1] === 'Successful' });
  }

  private shadow(ident: string, message: string, add: AddFn): void {
    let m: RegExpExecArray | null;
    if (ident === 'useradd' && (m = NEW_USER.exec(message))) {
      add('server.user.created', m[1], undefined, { uid: Number(m[2]), gid: Number(m[3]), home: m[4], shell: m[5], tty: m[6] });
    } else if (ident === 'userdel' && (m = DELETE_USER.exec(message))) {
      add('server.user.deleted', m[1], undefined, {});
    } else if (ident === 'groupadd' && (m = NEW_GROUP.exec(message))) {
      add('server.group.created', undefined, undefined, { group: m[1], gid: Number(m[2]) });
    } else if (ident === 'groupdel' && (m = GROUP_REMOVED.exec(message))) {
      add('server.group.deleted', undefined, undefined, { group: m[1] });
    } else if ((ident === 'usermod' || ident === 'useradd') && (m = ADD_TO_GROUP.exec(message))) {
      add('server.user.modified', m[1], undefined, { change: 'group_added', group: m[2], privileged_group: PRIVILEGED_GROUPS.has(m[2] as string) });
    } else if ((ident === 'usermod' || ident === 'userdel') && (m = DELETE_FROM_GROUP.exec(message))) {
      if (ident === 'usermod') add('server.user.modified', m[1], undefined, { change: 'group_removed', group: m[2] });
    } else if (ident === 'usermod' && (m = USERMOD_CHANGE.exec(message))) {
      add('server.user.modified', m[1], undefined, { change: message });
    }
  }
}

type AddFn = (event: string, actor: string | undefined, ip: string | undefined, metadata: Record<string, unknown>) => void;
