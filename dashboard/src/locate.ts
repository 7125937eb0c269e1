/**
 * Where a problem's path (`match.where.all[2].value`, `rule.detection.sel.CommandLine|expand`)
 * sits in the editor's text, so that the editor can select it. The service names paths in the
 * model's structure; these functions map them back onto the text the user wrote.
 */
export interface Range {
  readonly start: number;
  readonly end: number;
}

/** `match.where.all[2].value` → ['match', 'where', 'all', 2, 'value']. */
function segments(path: string): (string | number)[] {
  return (path.match(/\[\d+\]|[^.[\]]+/g) ?? []).map((s) => (s.startsWith('[') ? Number(s.slice(1, -1)) : s));
}

/** The value at `path` in JSON text, or the deepest part of the path that is there. */
export function locateInJson(text: string, path: string): Range | undefined {
  const want = segments(path);
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i] as string)) i++;
  };
  const string = (): string => {
    const start = i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return '';
    }
  };
  const skip = () => {
    ws();
    const c = text[i];
    if (c === '"') return void string();
    if (c !== '{' && c !== '[') {
      while (i < text.length && !/[\s,\]}]/.test(text[i] as string)) i++;
      return;
    }
    let depth = 0;
    while (i < text.length) {
      const d = text[i];
      if (d === '"') {
        string();
        continue;
      }
      if (d === '{' || d === '[') depth++;
      if (d === '}' || d === ']') depth--;
      i++;
      if (depth === 0) return;
    }
  };
  let found: Range | undefined;
  for (let depth = 0; ; depth++) {
    ws();
    const start = i;
    if (depth === want.length) {
      skip();
      return { start, end: i };
    }
    const seg = want[depth];
    let entered = false;
    if (text[i] === '{' && typeof seg === 'string') {
      i++;
      for (ws(); text[i] === '"'; ws()) {
        const keyStart = i;
        const key = string();
        ws();
        if (text[i] !== ':') return found;
        i++;
        if (key === seg) {
          found = { start: keyStart, end: i - 1 };
          entered = true;
          break;
        }
        skip();
        ws();
        if (text[i] === ',') i++;
      }
    } else if (text[i] === '[' && typeof seg === 'number') {
      i++;
      for (let n = 0; ; n++) {
        ws();
        if (text[i] === ']' || i >= text.length) break;
        if (n === seg) {
          entered = true;
          break;
        }
        skip();
        ws();
        if (text[i] === ',') i++;
      }
    }
    if (!entered) return found;
  }
}

/** A key of the path in YAML text: each name is looked for as `name:` after the one before it. */
export function locateInYaml(text: string, path: string): Range | undefined {
  let from = 0;
  let found: Range | undefined;
  for (const seg of segments(path.replace(/^rule\.?/, ''))) {
    if (typeof seg === 'number') continue;
    const at = text.indexOf(`${seg}:`, from);
    if (at < 0) break;
    found = { start: at, end: at + seg.length };
    from = found.end;
  }
  return found;
}
