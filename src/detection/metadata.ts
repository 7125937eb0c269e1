/** Reading the few metadata fields detectors care about, whatever the sender named them. */

type Meta = Readonly<Record<string, unknown>>;

/** The first of `keys` holding a finite non-negative number (or a numeric string). */
export function numberOf(meta: Meta, keys: readonly string[]): number | undefined {
  for (const k of keys) {
    const v = meta[k];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return v;
    if (typeof v === 'string' && v.length > 0 && v.length < 20) {
      const n = Number(v);
      if (Number.isFinite(n) && n >= 0) return n;
    }
  }
  return undefined;
}

/** The first of `keys` holding a string, or strings joined by spaces for an array of strings. */
export function textOf(meta: Meta, keys: readonly string[]): string | undefined {
  for (const k of keys) {
    const v = meta[k];
    if (typeof v === 'string' && v.length > 0) return v;
    if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) return v.join(' ');
  }
  return undefined;
}

export const ROWS_KEYS = ['rows', 'row_count', 'rowCount', 'records', 'record_count', 'recordCount', 'count'] as const;
export const BYTES_KEYS = ['bytes', 'size_bytes', 'sizeBytes', 'size', 'file_size', 'fileSize'] as const;
/** A stable identifier of the device the user acts from (an app install, a browser cookie). */
export const DEVICE_KEYS = ['device_id', 'deviceId', 'device'] as const;
/** Where a role change puts the new role; the old one is never read from these. */
export const NEW_ROLE_KEYS = [
  'new_role',
  'newRole',
  'to_role',
  'toRole',
  'role_to',
  'to',
  'role',
  'roles',
  'new_roles',
  'permission',
  'permissions',
  'privilege',
  'privileges',
] as const;
export const OLD_ROLE_KEYS = ['old_role', 'oldRole', 'from_role', 'fromRole', 'role_from', 'from', 'previous_role', 'previousRole'] as const;
export const COMMAND_KEYS = ['command', 'cmdline', 'command_line', 'commandLine', 'cmd', 'args', 'process', 'exe'] as const;
export const PATH_KEYS = ['path', 'file', 'filename', 'file_path', 'filePath', 'target'] as const;

const ADMIN_WORDS = new Set(['admin', 'admins', 'administrator', 'administrators', 'owner', 'owners', 'root', 'superuser', 'superadmin', 'sysadmin']);

/** True when any word of the role text names an admin-like role (`org_owner`, `Super-Admin`, `root`). */
export function isAdminLike(role: string): boolean {
  let word = '';
  for (let i = 0; i <= role.length; i++) {
    const c = i < role.length ? role.charCodeAt(i) | 0x20 : 0;
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57 && i < role.length)) {
      word += String.fromCharCode(c);
    } else {
      if (word.length > 0 && ADMIN_WORDS.has(word)) return true;
      word = '';
    }
  }
  return false;
}
