/**
 * Cross-site scripting in normalised (decoded, lower-case) text, by HTML/JS context:
 * - tags: `<script`/`</script`, embedding tags with attributes (iframe, object, embed, base, meta,
 *   link, frame, applet), and any tag carrying an `on*=` handler, a `javascript:`/`vbscript:`/
 *   `data:text/html` URL in a URL attribute, `srcdoc` markup, or a scripted `style`;
 * - attribute breakouts without a tag: `" onmouseover=alert(1)`;
 * - script URLs anywhere (`javascript:alert(1)`, including tabs/newlines inside the scheme);
 * - JavaScript string breakouts calling a sink (`'-alert(1)-'`, `";eval(atob(...))//`).
 * Markup without script (`<b>`, `<p>`, `a < b`), `<user@example.com>` and prose mentioning
 * "JavaScript:" are not flagged. Every scan is a forward pass with bounded look-around.
 */

const MAX_TAG_SCAN = 4096;

function isLetter(c: number): boolean {
  return c >= 97 && c <= 122;
}

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x0c;
}

const EMBEDDING_TAGS = new Set([
  'iframe',
  'frame',
  'object',
  'embed',
  'applet',
  'base',
  'meta',
  'link',
  'frameset',
  'isindex',
  'import',
  'layer',
  'ilayer',
  'xml',
]);
const URL_ATTRIBUTES = new Set([
  'href',
  'src',
  'action',
  'formaction',
  'data',
  'xlink:href',
  'background',
  'poster',
  'lowsrc',
  'dynsrc',
  'code',
  'codebase',
  'values',
  'to',
  'from',
  'by',
  'content',
  'url',
  'ping',
  'srcset',
  'cite',
  'longdesc',
  'profile',
  'manifest',
  'icon',
  'archive',
]);

/** Text of `s` from `i` with tab/newline/CR removed (browsers strip them from URL schemes). */
function compactFrom(s: string, i: number, max: number): string {
  let out = '';
  for (let j = i; j < s.length && out.length < max; j++) {
    const c = s.charCodeAt(j);
    if (c !== 9 && c !== 10 && c !== 13) out += s[j];
  }
  return out;
}

function isScriptUrl(value: string): boolean {
  let v = value;
  let k = 0;
  while (k < v.length && (isSpace(v.charCodeAt(k)) || v.charCodeAt(k) < 32)) k++;
  if (k > 0) v = v.slice(k);
  return (
    v.startsWith('javascript:') ||
    v.startsWith('vbscript:') ||
    v.startsWith('livescript:') ||
    v.startsWith('mocha:') ||
    v.startsWith('data:text/html') ||
    v.startsWith('data:image/svg') ||
    v.startsWith('data:application/x') ||
    v.startsWith('data:text/xml')
  );
}

/** Handler attribute at `i` (`on` + letters + optional spaces + `=`)? Returns index after `=`, or -1. */
function handlerAt(s: string, i: number): number {
  if (s.charCodeAt(i) !== 111 || s.charCodeAt(i + 1) !== 110) return -1;
  let j = i + 2;
  while (j < s.length && j < i + 40 && isLetter(s.charCodeAt(j))) j++;
  if (j - i < 5) return -1;
  while (j < s.length && isSpace(s.charCodeAt(j))) j++;
  return s.charCodeAt(j) === 61 ? j + 1 : -1;
}

/** `+` separates attributes where a form-encoded value reaches the page undecoded as space. */
function attrBoundary(c: number): boolean {
  return isSpace(c) || c === 47 || c === 34 || c === 39 || c === 96 || c === 43 || Number.isNaN(c);
}

/** Scans the attributes of the tag whose name ends at `i`, up to `>`; true when scripted. */
function scriptedAttributes(s: string, i: number, end: number): boolean {
  let j = i;
  while (j < end) {
    const c = s.charCodeAt(j);
    if (!isLetter(c) || !attrBoundary(s.charCodeAt(j - 1))) {
      j++;
      continue;
    }
    if (handlerAt(s, j) !== -1) return true;
    let k = j;
    while (k < end && (isLetter(s.charCodeAt(k)) || s.charCodeAt(k) === 58 || s.charCodeAt(k) === 45)) k++;
    const name = s.slice(j, k);
    while (k < end && isSpace(s.charCodeAt(k))) k++;
    if (s.charCodeAt(k) === 61) {
      k++;
      while (k < end && isSpace(s.charCodeAt(k))) k++;
      const q = s.charCodeAt(k);
      if (q === 34 || q === 39 || q === 96) k++;
      if (URL_ATTRIBUTES.has(name) && isScriptUrl(compactFrom(s, k, 24))) return true;
      if (name === 'srcdoc') return true;
      if (name === 'style') {
        const v = s.slice(k, Math.min(end, k + 400));
        if (v.includes('expression(') || v.includes('javascript:') || v.includes('-moz-binding') || v.includes('behavior:')) return true;
      }
      if (name === 'http-equiv' && s.startsWith('refresh', k)) return true;
      j = k + 1;
    } else {
      // No value: `k` is already at the next attribute (`<details open ontoggle=…>`).
      j = k;
    }
  }
  return false;
}

function scriptedTag(s: string): boolean {
  // Position of the next `>` at or after the current tag, searched forward only (linear overall).
  let gt: number = -1;
  let i = s.indexOf('<');
  while (i !== -1) {
    let j = i + 1;
    if (s.charCodeAt(j) === 47) j++;
    const nameStart = j;
    while (
      j < s.length &&
      (isLetter(s.charCodeAt(j)) || (j > nameStart && (s.charCodeAt(j) === 58 || s.charCodeAt(j) === 45 || (s.charCodeAt(j) >= 48 && s.charCodeAt(j) <= 57))))
    )
      j++;
    if (j > nameStart) {
      const name = s.slice(nameStart, j);
      const next = s.charCodeAt(j);
      const bounded = Number.isNaN(next) || isSpace(next) || next === 47 || next === 62 || next === 43;
      // `<x:script xmlns:x="http://www.w3.org/1999/xhtml">` is a script element in XHTML.
      const script = name === 'script' || name.endsWith(':script');
      if (script && bounded && scriptElement(s, j, nameStart)) return true;
      if (name === 'style' && bounded && s.charCodeAt(nameStart - 1) !== 47 && scriptedStyle(s.slice(j, j + MAX_STYLE_SCAN))) return true;
      if (gt !== Infinity && gt < j) {
        gt = s.indexOf('>', j);
        if (gt === -1) gt = Infinity;
      }
      let close = gt === Infinity ? -1 : gt;
      const nextTag = s.indexOf('<', j);
      if (close === -1 || (nextTag !== -1 && nextTag < close)) close = nextTag === -1 ? s.length : nextTag;
      close = Math.min(close, j + MAX_TAG_SCAN);
      if (EMBEDDING_TAGS.has(name) && bounded && s.charCodeAt(nameStart - 1) !== 47 && hasAttribute(s, j, close)) return true;
      if (bounded && scriptedAttributes(s, j, close)) return true;
      i = s.indexOf('<', Math.max(j, close));
    } else {
      i = s.indexOf('<', i + 1);
    }
  }
  return false;
}

/**
 * `<script` with attributes, a closing `</script`, or `<script>` followed by code. Prose that
 * names the tag ("the <script> tag explained") has no code after it.
 */
function scriptElement(s: string, afterName: number, nameStart: number): boolean {
  if (s.charCodeAt(nameStart - 1) === 47) return true;
  let k = afterName;
  while (k < s.length && isSpace(s.charCodeAt(k))) k++;
  if (s.charCodeAt(k) !== 62) return true;
  const body = s.slice(k + 1, k + 201);
  const close = body.indexOf('</script');
  const code = close === -1 ? body : body.slice(0, close);
  if (close === 0) return true;
  for (const c of ['(', '=', '`', '.', ';', '[', '+']) if (code.includes(c)) return true;
  return close !== -1 && code.length > 0;
}

/** Style sheet text is read this far for script and remote-code constructs. */
const MAX_STYLE_SCAN = 400;

/** CSS that runs script or loads remote code: `expression(`, `-moz-binding`, `behavior:`, `@import`, `javascript:`. */
function scriptedStyle(css: string): boolean {
  return css.includes('expression(') || css.includes('-moz-binding') || css.includes('behavior:') || css.includes('@import') || css.includes('javascript:');
}

function hasAttribute(s: string, from: number, to: number): boolean {
  for (let k = from; k < to; k++) if (s.charCodeAt(k) === 61) return true;
  return false;
}

/** `on*=` outside any tag, after a quote or whitespace, whose value is code: an attribute breakout. */
function handlerBreakout(s: string): boolean {
  let firstQuote = s.length;
  for (const q of ['"', "'", '`']) {
    const at = s.indexOf(q);
    if (at !== -1 && at < firstQuote) firstQuote = at;
  }
  let i = s.indexOf('on');
  while (i !== -1) {
    if (i > 0 && attrBoundary(s.charCodeAt(i - 1))) {
      const v = handlerAt(s, i);
      if (v !== -1 && firstQuote < i) {
        let k = v;
        while (k < s.length && (isSpace(s.charCodeAt(k)) || s.charCodeAt(k) === 34 || s.charCodeAt(k) === 39)) k++;
        if (isScriptUrl(s.slice(k, k + 24)) || sinkCallAt(s, k) || identifierCallAt(s, k)) return true;
      }
    }
    i = s.indexOf('on', i + 2);
  }
  return false;
}

/** An identifier (optionally dotted) followed by `(`, `` ` `` or `=`: code, not prose. */
function identifierCallAt(s: string, i: number): boolean {
  let j = i;
  while (
    j < s.length &&
    j < i + 64 &&
    (isLetter(s.charCodeAt(j)) ||
      s.charCodeAt(j) === 46 ||
      s.charCodeAt(j) === 95 ||
      s.charCodeAt(j) === 36 ||
      (s.charCodeAt(j) >= 48 && s.charCodeAt(j) <= 57))
  )
    j++;
  if (j === i) return false;
  const c = s.charCodeAt(j);
  return c === 40 || c === 96 || c === 91;
}

const SINKS = [
  'alert',
  'prompt',
  'confirm',
  'eval',
  'print',
  'settimeout',
  'setinterval',
  'function',
  'fetch',
  'import',
  'atob',
  'document.write',
  'document.cookie',
  'document.domain',
  'document.location',
  'window.location',
  'location.href',
  'fromcharcode',
  'constructor',
];
const SINK_OWNERS = ['window.', 'top.', 'self.', 'parent.', 'this.', 'globalthis.', 'frames.', 'content.', 'document.'];

function sinkCallAt(s: string, i: number): boolean {
  for (const sink of SINKS) {
    if (s.startsWith(sink, i)) {
      const c = s.charCodeAt(i + sink.length);
      if (c === 40 || c === 96 || c === 41 || c === 59 || c === 61 || c === 46 || c === 93 || Number.isNaN(c)) return true;
    }
  }
  return false;
}

function callArgumentIsCode(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  if ((c >= 48 && c <= 57) || c === 39 || c === 34 || c === 96 || c === 47 || c === 41 || c === 91) return true;
  return (
    s.startsWith('document', i) ||
    s.startsWith('window', i) ||
    s.startsWith('string', i) ||
    s.startsWith('this', i) ||
    s.startsWith('top', i) ||
    s.startsWith('self', i) ||
    s.startsWith('location', i) ||
    s.startsWith('atob', i) ||
    s.startsWith('name', i) ||
    s.startsWith('origin', i)
  );
}

const CALL_SINKS = ['alert', 'prompt', 'confirm', 'eval', 'settimeout', 'setinterval'];
/** Chars that may precede a sink call in an injected JS expression. */
function isJsBoundary(c: number): boolean {
  return (
    Number.isNaN(c) ||
    c === 59 ||
    c === 45 ||
    c === 43 ||
    c === 42 ||
    c === 47 ||
    c === 39 ||
    c === 34 ||
    c === 40 ||
    c === 123 ||
    c === 124 ||
    c === 38 ||
    c === 61 ||
    c === 44 ||
    c === 58 ||
    c === 63 ||
    c === 62 ||
    c === 96 ||
    c === 33 ||
    c === 126 ||
    c === 91 ||
    c === 125 ||
    c === 37 ||
    c === 94
  );
}

/** `alert(1)`, `'-prompt(1)-'`, ``alert`1` ``, `window.alert(1)`, `eval('..')` in a JS-break context. */
function sinkCall(s: string): boolean {
  for (const sink of CALL_SINKS) {
    let i = s.indexOf(sink);
    while (i !== -1) {
      let j = i + sink.length;
      while (j < s.length && isSpace(s.charCodeAt(j))) j++;
      const open = s.charCodeAt(j);
      // A name between two backticks (`` `eval` ``, `` `setTimeout` ``) is a Markdown code span, not a tagged template.
      if ((open === 40 && callArgumentIsCode(s, j + 1)) || (open === 96 && !(j === i + sink.length && s.charCodeAt(i - 1) === 96))) {
        let p = i - 1;
        while (p >= 0 && isSpace(s.charCodeAt(p))) p--;
        const prev = p < 0 ? NaN : s.charCodeAt(p);
        if (isJsBoundary(prev)) return true;
        for (const owner of SINK_OWNERS) if (s.startsWith(owner, i - owner.length)) return true;
      }
      i = s.indexOf(sink, i + sink.length);
    }
  }
  return false;
}

const SCRIPT_SCHEMES = ['java', 'live', 'vb'];

/** `javascript:` (or vbscript:) used as a URL: followed by code rather than prose. */
function scriptUrl(s: string): boolean {
  let i = s.indexOf('script');
  while (i !== -1) {
    // Look back far enough to see `java` even with tabs/newlines interleaved (`j\ta\tv\ta`).
    const from = Math.max(0, i - 16);
    const compact = compactFrom(s, from, 64);
    const at = compact.lastIndexOf('script:', compactFrom(s, from, i - from + 6).length);
    if (at !== -1) {
      for (const prefix of SCRIPT_SCHEMES) {
        const start = at - prefix.length;
        if (start < 0 || !compact.startsWith(prefix, start) || isLetter(compact.charCodeAt(start - 1))) continue;
        let k = at + 7;
        while (k < compact.length && isSpace(compact.charCodeAt(k))) k++;
        if (compact.startsWith('void(0)', k) || compact.startsWith('void 0', k)) break;
        const c = compact.charCodeAt(k);
        if (!Number.isNaN(c) && !isLetter(c)) return true;
        if (isLetter(c) && (identifierCallAt(compact, k) || sinkCallAt(compact, k))) return true;
      }
    }
    i = s.indexOf('script', i + 6);
  }
  return false;
}

/** A `data:` URL carrying an HTML or SVG document. */
function dataDocumentUrl(s: string): boolean {
  const i = s.indexOf('data:');
  if (i === -1) return false;
  const compact = compactFrom(s, i, 200);
  return (
    (compact.startsWith('data:text/html') || compact.startsWith('data:image/svg') || compact.startsWith('data:application/xhtml')) &&
    (compact.includes('base64,') || compact.includes('<') || compact.includes(','))
  );
}

/** Template-injection gadgets that reach the Function constructor. */
function templateGadget(s: string): boolean {
  return s.includes('constructor.constructor(') || s.includes("constructor('") || (s.includes('{{') && s.includes('$eval('));
}

/** Global objects whose computed members reach `alert`, `eval` and friends (`top['al'+'ert'](1)`). */
const GLOBAL_OWNERS = ['top[', 'window[', 'self[', 'parent[', 'this[', 'globalthis[', 'frames[', 'document['];
const VALUE_SINKS = ['alert', 'prompt', 'confirm', 'eval'];
/** Look-ahead from `top[` to the `](` that calls the computed member. */
const MAX_COMPUTED_MEMBER = 64;

/**
 * Script that calls a sink without writing `alert(`: a sink passed as a value (`[1].find(alert)`,
 * `a=alert,a(1)`, `(alert)(1)`, `onerror=alert`), a computed member of a global called
 * (`top[/al/.source+/ert/.source](1)`), an array-built call (`[]['filter']['constructor'](…)()`),
 * `top.open\`…\`` and `new Function\`…\``.
 */
function jsGadget(s: string): boolean {
  for (const sink of VALUE_SINKS) {
    for (let i = s.indexOf(sink); i !== -1; i = s.indexOf(sink, i + sink.length)) {
      const before = s.charCodeAt(i - 1);
      const after = s.charCodeAt(i + sink.length);
      if (before === 40 && after === 41) {
        const call = s.charCodeAt(i + sink.length + 1);
        const owner = s.charCodeAt(i - 2);
        if (call === 40 || call === 96 || isLetter(owner) || owner === 93 || owner === 41) return true;
      }
      if ((before === 61 || before === 44) && (after === 44 || after === 59 || after === 41)) return true;
    }
  }
  if (s.indexOf('[') !== -1 && computedGlobalCall(s)) return true;
  if (s.indexOf('`') !== -1 && (s.includes('.open`') || s.includes('new function`'))) return true;
  return s.includes('new function(');
}

/** `top['al'+'ert'](1)`, `[]['filter']['constructor'](…)()`: a computed member called. */
function computedGlobalCall(s: string): boolean {
  for (const owner of GLOBAL_OWNERS) {
    for (let i = s.indexOf(owner); i !== -1; i = s.indexOf(owner, i + owner.length)) {
      if (i > 0 && isLetter(s.charCodeAt(i - 1))) continue;
      const close = s.slice(i + owner.length, i + owner.length + MAX_COMPUTED_MEMBER).indexOf(']');
      if (close === -1) continue;
      const call = s.charCodeAt(i + owner.length + close + 1);
      if (call === 40 || call === 96) return true;
    }
  }
  return s.includes('[][') && s.includes('](');
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/** JavaScript escapes in identifiers and strings (`al\u0065rt`, `\x28`) decoded; one linear pass. */
function decodeJsEscapes(s: string): string {
  let out = '';
  let chunk = 0;
  for (let i = s.indexOf('\\'); i !== -1 && i < s.length; i = s.indexOf('\\', i + 1)) {
    const kind = s.charCodeAt(i + 1);
    const digits = kind === 117 ? 4 : kind === 120 ? 2 : 0;
    if (digits === 0) continue;
    let cp = 0;
    let k = 0;
    for (; k < digits; k++) {
      const d = hexDigit(s.charCodeAt(i + 2 + k));
      if (d < 0) break;
      cp = cp * 16 + d;
    }
    if (k < digits) continue;
    out += s.slice(chunk, i) + String.fromCharCode(cp).toLowerCase();
    chunk = i + 2 + digits;
    i = chunk - 1;
  }
  return chunk === 0 ? s : out + s.slice(chunk);
}

/** Tab, newline and carriage return removed: browsers drop them inside URL schemes and tokens. */
function withoutLineBreaks(s: string): string {
  let out = '';
  let chunk = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 9 || c === 10 || c === 13) {
      out += s.slice(chunk, i);
      chunk = i + 1;
    }
  }
  return chunk === 0 ? s : out + s.slice(chunk);
}

export function detectXss(s: string): boolean {
  if (detectIn(s)) return true;
  const compact = s.indexOf('\t') !== -1 || s.indexOf('\n') !== -1 || s.indexOf('\r') !== -1 ? withoutLineBreaks(s) : s;
  if (compact !== s && detectIn(compact)) return true;
  if (s.indexOf('\\') === -1) return false;
  const unescaped = decodeJsEscapes(compact);
  return unescaped !== compact && detectIn(unescaped);
}

function detectIn(s: string): boolean {
  if (s.indexOf('<') !== -1 && scriptedTag(s)) return true;
  if (s.indexOf('script') !== -1 && scriptUrl(s)) return true;
  if (dataDocumentUrl(s)) return true;
  if (s.indexOf('on') !== -1 && s.indexOf('=') !== -1 && handlerBreakout(s)) return true;
  const call = s.indexOf('(') !== -1 || s.indexOf('`') !== -1;
  if (call && (sinkCall(s) || templateGadget(s))) return true;
  return (call || s.indexOf('=') !== -1) && jsGadget(s);
}
