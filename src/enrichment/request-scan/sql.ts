import * as tokens from './sql-tokens.js';
import { tokenize, type Tok, type TokenBuffer } from './sql-tokens.js';

// Local copies: reading an imported binding per token is measurably slower in transpiled ESM.
const T_END = tokens.T_END;
const T_NUM = tokens.T_NUM;
const T_BARE = tokens.T_BARE;
const T_KEYWORD = tokens.T_KEYWORD;
const T_LOGIC = tokens.T_LOGIC;
const T_UNION = tokens.T_UNION;
const T_STATEMENT = tokens.T_STATEMENT;
const T_FUNC = tokens.T_FUNC;
const T_VAR = tokens.T_VAR;
const T_OP = tokens.T_OP;
const T_LPAREN = tokens.T_LPAREN;
const T_RPAREN = tokens.T_RPAREN;
const T_COMMA = tokens.T_COMMA;
const T_SEMI = tokens.T_SEMI;
const T_DOT = tokens.T_DOT;
const T_COMMENT = tokens.T_COMMENT;
const T_BREAK = tokens.T_BREAK;
const OP_COMPARE = tokens.OP_COMPARE;

/**
 * SQL injection as token-class shapes, after the idea of libinjection's fingerprints. A value is
 * injection when, at an *injection point*, the attacker leaves the data context and continues
 * with SQL syntax. Injection points are: the start of the value, after a leading literal (number,
 * bare word or quoted string: numeric/identifier contexts), and after every opening quote (string
 * context: the quote would close the developer's string). At a point we accept closing parens,
 * then look for: a comment terminator, a boolean condition (`or 1=1`, `and sleep(5)`), UNION
 * SELECT, a stacked statement (`; drop table`), a concatenation/arithmetic break (`'+sleep(5)+'`)
 * or clause injection (`order by 5--`, `having 1=1`). Independently of points, a few shapes are
 * flagged anywhere: time-delay calls, UNION SELECT with a literal column list, stacked statements,
 * literal tautologies joined by a logic word, a literal compared with a literal where a condition
 * starts (`where 5=5`, `elt(3=3,1)`), and well-known dangerous routines.
 *
 * Precision policy: prose ("select one or two"), names with apostrophes (O'Brien) and SQL quoted
 * in support text are not flagged, because none of them breaks out of a literal and continues
 * with SQL. Text that *begins* with a SQL statement keyword (a pasted query such as
 * `SELECT a FROM t1 UNION SELECT a FROM t2`) is treated as a snippet: the anywhere-rules for
 * UNION, stacked statements and system catalogs do not apply to it; time-delay calls, dangerous
 * routines, T-SQL dynamic execution (`declare @q …`, `exec(@q)`), server fingerprinting
 * (`select version();`) and `copy … from '/file'` still do. A statement that ends in an empty
 * comment (`select * from information_schema.tables--`) is no snippet: it cuts a query short.
 * A value that opens with a clause probe (`ORDER BY 5--`, `HAVING 1=0`) or a cut-off
 * `UNION SELECT` is injection; a keyword alone (`select`, `order by`) is not.
 * Math in prose ("1=1 or 2=2") is borderline: literal tautologies joined by and/or are flagged.
 */

const enum Point {
  Start,
  AfterValue,
  AfterQuote,
}

const enum Operand {
  None,
  Num,
  Literal,
  Bare,
  Bool,
  Func,
  Subquery,
  Var,
}

/** Look-ahead bound inside literals and function calls, keeps every rule O(1) per point. */
const MAX_SPAN = 48;

let t: TokenBuffer;
let text = '';

function kindAt(i: number): Tok {
  return i < t.count ? ((t.kind[i] ?? T_END) as Tok) : T_END;
}

function word(i: number): string {
  return text.slice(t.start[i] ?? 0, t.end[i] ?? 0);
}

function isWord(i: number, w: string): boolean {
  const s = t.start[i] ?? 0;
  return (t.end[i] ?? 0) - s === w.length && text.startsWith(w, s);
}

function skip(i: number, kind: Tok): number {
  while (kindAt(i) === kind) i++;
  return i;
}

interface ParsedOperand {
  readonly type: Operand;
  readonly end: number;
  readonly name: string;
}

const NONE: ParsedOperand = { type: Operand.None, end: 0, name: '' };

/** Index just after the Break that closes the one at `i`, or the end for an unterminated literal. */
function closeLiteral(i: number): number {
  const quote = t.aux[i];
  for (let j = i + 1; j < t.count && j <= i + MAX_SPAN; j++) {
    if (kindAt(j) === T_BREAK && t.aux[j] === quote) return j + 1;
  }
  return t.count;
}

/** Index just after the paren group opened at `i` (an LParen). */
function closeParen(i: number): number {
  let depth = 0;
  for (let j = i; j < t.count && j <= i + MAX_SPAN; j++) {
    const k = kindAt(j);
    if (k === T_LPAREN) depth++;
    else if (k === T_RPAREN && --depth === 0) return j + 1;
  }
  return t.count;
}

function parseOperand(i: number): ParsedOperand {
  for (let guard = 0; guard < 8; guard++) {
    const k = kindAt(i);
    if ((k === T_OP && (t.aux[i] ?? 0) !== OP_COMPARE) || k === T_LPAREN || (k === T_KEYWORD && isWord(i, 'not'))) i++;
    else break;
  }
  switch (kindAt(i)) {
    case T_NUM:
      return { type: Operand.Num, end: i + 1, name: '' };
    case T_BREAK:
      return { type: Operand.Literal, end: closeLiteral(i), name: '' };
    case T_BARE:
      // `members.email`: a qualified column is one operand.
      if (kindAt(i + 1) === T_DOT && kindAt(i + 2) === T_BARE) return { type: Operand.Bare, end: i + 3, name: word(i + 2) };
      return { type: Operand.Bare, end: i + 1, name: word(i) };
    case T_VAR:
      return { type: Operand.Var, end: i + 1, name: '' };
    case T_KEYWORD:
      if (isWord(i, 'exists')) return { type: Operand.Subquery, end: kindAt(i + 1) === T_LPAREN ? closeParen(i + 1) : i + 1, name: '' };
      return isWord(i, 'true') || isWord(i, 'false') || isWord(i, 'null') ? { type: Operand.Bool, end: i + 1, name: '' } : NONE;
    case T_FUNC:
      return { type: Operand.Func, end: kindAt(i + 1) === T_LPAREN ? closeParen(i + 1) : i + 1, name: word(i) };
    case T_STATEMENT:
      return isWord(i, 'select') ? { type: Operand.Subquery, end: i + 1, name: '' } : NONE;
    default:
      return NONE;
  }
}

function isLiteralLike(type: Operand): boolean {
  return (
    type === Operand.Num || type === Operand.Literal || type === Operand.Bool || type === Operand.Var || type === Operand.Func || type === Operand.Subquery
  );
}

function isComparison(i: number): boolean {
  const k = kindAt(i);
  if (k === T_OP) return t.aux[i] === OP_COMPARE;
  return (
    k === T_KEYWORD &&
    (isWord(i, 'like') || isWord(i, 'rlike') || isWord(i, 'regexp') || isWord(i, 'is') || isWord(i, 'in') || isWord(i, 'between') || isWord(i, 'sounds'))
  );
}

/** `i` is the token after a logic word. */
function isInjectedCondition(i: number, point: Point): boolean {
  const a = parseOperand(i);
  if (a.type === Operand.None) return false;
  if (a.type === Operand.Func || a.type === Operand.Subquery) return true;
  let j = skip(a.end, T_RPAREN);
  if (isComparison(j)) {
    j++;
    if (isWord(j - 1, 'sounds') && isWord(j, 'like')) j++;
    const b = parseOperand(j);
    if (b.type === Operand.None) return false;
    if (isLiteralLike(a.type) || isLiteralLike(b.type)) return true;
    if (a.type !== Operand.Bare || b.type !== Operand.Bare) return false;
    // `x=x` is a tautology anywhere; `or x=y` only where a value opens with it (a probe).
    return a.name === b.name || (point === Point.Start && (kindAt(b.end) === T_END || kindAt(b.end) === T_COMMENT));
  }
  const after = kindAt(j);
  const literal = a.type === Operand.Num || a.type === Operand.Bool || a.type === Operand.Literal;
  if (literal && (after === T_COMMENT || after === T_SEMI)) return true;
  if (after !== T_END) return false;
  // `' or 1` / `' or true` after a quote; after a number only the boolean form (`0 or true`), as
  // "1 or 2" is ordinary prose.
  return a.type === Operand.Bool || (point === Point.AfterQuote && a.type === Operand.Num);
}

/** After SELECT: does the column list look like an attacker's (literals, *, calls, col,col)? */
function isSelectList(i: number): boolean {
  i = skip(i, T_LPAREN);
  if (isWord(i, 'all') || isWord(i, 'distinct')) i++;
  if (isWord(i, 'top')) {
    i += 2;
    if (kindAt(i) === T_END) return true;
  }
  i = skip(i, T_LPAREN);
  const k = kindAt(i);
  if (k === T_NUM || k === T_VAR || k === T_FUNC || k === T_COMMENT) return true;
  if (k === T_BREAK) {
    // A closed string literal column (`'a',`); an unclosed quote is prose (`"union select" meaning`).
    const end = closeLiteral(i);
    const closed = kindAt(end - 1) === T_BREAK && end - 1 > i && t.aux[end - 1] === t.aux[i];
    if (!closed) return false;
    const next = kindAt(end);
    return next === T_COMMA || next === T_COMMENT || next === T_END || isWord(end, 'from');
  }
  if (k === T_KEYWORD) return isWord(i, 'null') || isWord(i, 'true') || isWord(i, 'false') || isWord(i, 'case');
  if (k === T_OP) return isWord(i, '*');
  if (k === T_BARE) {
    const next = kindAt(i + 1);
    return next === T_COMMA || next === T_DOT || next === T_COMMENT || isWord(i + 1, 'from');
  }
  return false;
}

/** `i` is UNION. */
function isUnionSelect(i: number): boolean {
  let j = i + 1;
  if (isWord(j, 'all') || isWord(j, 'distinct')) j++;
  j = skip(j, T_LPAREN);
  if (!isWord(j, 'select')) return false;
  // A probe cut after the keywords (`' UNION ALL SELECT`) is filled in by the tool later.
  const next = kindAt(j + 1);
  return next === T_END || next === T_COMMENT || isSelectList(j + 1);
}

const DROP_TARGETS = new Set(['table', 'database', 'schema', 'user', 'view', 'procedure', 'function', 'index', 'trigger', 'login']);

/** `i` is a statement keyword (after `;`): is it shaped like a real statement? */
function isStackedStatement(i: number, literalColumns = true): boolean {
  const next = i + 1;
  const w = word(i);
  switch (w) {
    case 'select':
      // `; select "Export"` is prose punctuation; a stacked SELECT starts with numbers, calls, *, …
      return isSelectList(next) && (literalColumns || kindAt(skip(next, T_LPAREN)) !== T_BREAK);
    case 'drop':
    case 'create':
    case 'alter':
    case 'truncate':
    case 'rename':
      return DROP_TARGETS.has(word(next));
    case 'delete':
      return isWord(next, 'from');
    case 'insert':
      return isWord(next, 'into');
    case 'update':
      return kindAt(next) === T_BARE && isWord(next + 1, 'set');
    case 'exec':
    case 'execute':
      return kindAt(next) === T_BARE || kindAt(next) === T_FUNC || kindAt(next) === T_LPAREN || kindAt(next) === T_VAR;
    case 'declare':
      return kindAt(next) === T_VAR;
    case 'shutdown': {
      const k = kindAt(next);
      return k === T_END || k === T_COMMENT || k === T_SEMI || isWord(next, 'with');
    }
    case 'waitfor':
      return isWord(next, 'delay') || isWord(next, 'time');
    case 'grant':
    case 'revoke':
      return isWord(next, 'all') || isWord(next + 1, 'on') || isWord(next + 1, 'to');
    case 'call':
      return kindAt(next) === T_FUNC;
    default:
      return false;
  }
}

/** A comment that terminates the query: no quote of the same kind inside it (`'#tag'` is prose). */
function isTerminatingComment(i: number, quote: number): boolean {
  if (quote === 0) return true;
  const body = text.slice(t.start[i] ?? 0, t.end[i] ?? 0);
  return body.indexOf(String.fromCharCode(quote)) === -1;
}

function clauseInjection(i: number): boolean {
  if ((isWord(i, 'order') || isWord(i, 'group')) && isWord(i + 1, 'by')) {
    const k = kindAt(i + 2);
    if (k !== T_NUM && k !== T_BARE) return false;
    let a = i + 3;
    if (kindAt(a) === T_DOT && kindAt(a + 1) === T_BARE) a += 2;
    const after = kindAt(a);
    return (
      after === T_END ||
      after === T_COMMENT ||
      after === T_COMMA ||
      after === T_SEMI ||
      after === T_RPAREN ||
      isWord(a, 'having') ||
      isWord(a, 'desc') ||
      isWord(a, 'asc')
    );
  }
  if (isWord(i, 'having')) return isInjectedCondition(i + 1, Point.AfterValue);
  if (isWord(i, 'limit')) return kindAt(i + 1) === T_NUM && (kindAt(i + 2) === T_COMMENT || kindAt(i + 2) === T_COMMA || kindAt(i + 2) === T_UNION);
  if (isWord(i, 'procedure')) return word(i + 1) === 'analyse';
  return false;
}

/**
 * A value that opens with a clause probe: `ORDER BY 5--`, `HAVING 1=0`, `GROUP BY id HAVING 1=1`.
 * `order by` / `group by` need a column number or a following HAVING or comment, as "Group by
 * category" and "order by tomorrow" are ordinary text.
 */
function clauseProbe(i: number): boolean {
  if (isWord(i, 'having')) return isInjectedCondition(i + 1, Point.Start);
  if (!(isWord(i, 'order') || isWord(i, 'group')) || !isWord(i + 1, 'by')) return false;
  if (kindAt(i + 2) === T_NUM) return clauseInjection(i);
  const after = kindAt(i + 3);
  return kindAt(i + 2) === T_BARE && (after === T_COMMENT || isWord(i + 3, 'having')) && clauseInjection(i);
}

/** Rules applied at injection point `i` (token index where the attacker's SQL would start). */
function injectedAt(i: number, point: Point, quote: number): boolean {
  // `1+or+1=1` after double decoding: a `+` before a logic word or UNION is whitespace.
  if (isPlusSpace(i)) i++;
  const parens = i;
  i = skip(i, T_RPAREN);
  const closedParen = i > parens;
  const k = kindAt(i);
  switch (k) {
    case T_COMMENT:
      return (point === Point.AfterQuote || closedParen) && isTerminatingComment(i, quote);
    case T_LOGIC:
      // `'||'x'||'`: the closed string concatenated with another.
      if (point === Point.AfterQuote && isWord(i, '||') && kindAt(i + 1) === T_BREAK) return true;
      return isInjectedCondition(i + 1, point);
    case T_UNION:
      return isUnionSelect(i);
    case T_SEMI: {
      const n = kindAt(i + 1);
      if (n === T_STATEMENT) return isStackedStatement(i + 1, false);
      if (n === T_LOGIC) return isInjectedCondition(i + 2, point);
      return point === Point.AfterQuote && n === T_COMMENT;
    }
    case T_LPAREN:
      // `' (select top 1 …`: a subquery opened where a value was expected.
      return point !== Point.AfterValue && isWord(i + 1, 'select') && isSelectList(i + 2);
    case T_STATEMENT:
      // `' waitfor delay ...`, `') exec xp_...`; after a bare value this is prose ("please drop table ...").
      return (point === Point.AfterQuote || closedParen) && isStackedStatement(i, false) && !isWord(i, 'select');
    case T_KEYWORD:
      if (point === Point.Start && !closedParen) return clauseProbe(i);
      if (isComparison(i) && parseOperand(i + 1).type === Operand.Subquery) return true;
      return clauseInjection(i);
    case T_OP: {
      // `'-'`, `'+sleep(5)+'`, `""=""`: the closed string joined to another. A quoted slash is
      // the root path in code (`'/'`), and a quoted comparison with a number is a version range
      // (`">10"`, `'>=9'`).
      if (point !== Point.AfterQuote || isWord(i, '/')) return false;
      const n = kindAt(i + 1);
      if (t.aux[i] === OP_COMPARE && n === T_NUM) return false;
      if (n === T_FUNC || n === T_BREAK) return true;
      if (n === T_LPAREN && parseOperand(i + 1).type === Operand.Subquery) return true;
      if (n === T_NUM) {
        const a = kindAt(i + 2);
        return a === T_COMMENT || a === T_BREAK || a === T_END || a === T_LOGIC;
      }
      return false;
    }
    default:
      return false;
  }
}

const TIME_FUNCTIONS = new Set(['sleep', 'pg_sleep', 'benchmark', 'randomblob']);
const DANGEROUS_FUNCTIONS = new Set([
  'load_file',
  'extractvalue',
  'updatexml',
  'xp_cmdshell',
  'sp_oacreate',
  'receive_message',
  'get_host_address',
  'utl_inaddr',
  'sys_eval',
  'sys_exec',
  'current_setting',
  'pg_ls_dir',
  'lo_import',
]);
const DANGEROUS_NAMES = new Set([
  'xp_cmdshell',
  'sp_oacreate',
  'utl_inaddr',
  'utl_http',
  'dbms_pipe',
  'dbms_lock',
  'pg_read_file',
  'sysobjects',
  'msysaccessobjects',
  'pg_shadow',
  'pg_authid',
  'pg_group',
]);
/** System catalogs: enumerating them is injection, unless the text is a pasted query of its own. */
const CATALOG_NAMES = new Set(['information_schema', 'syscolumns', 'all_tables', 'all_users', 'dba_users', 'sqlite_master']);
/** What `select` returns when an attacker fingerprints the server: `select version();`, `select current_user;`. */
const INTROSPECTION = new Set(['version', 'current_database', 'database', 'current_user', 'session_user', 'system_user', 'user', 'current_schema']);

function startsWithStatement(): boolean {
  const i = skip(0, T_LPAREN);
  if (kindAt(i) !== T_STATEMENT && !isWord(i, 'with')) return false;
  // A statement that ends in an empty comment (`select … from t--`) cuts off the rest of a query.
  const last = t.count - 1;
  if (kindAt(last) === T_COMMENT) {
    const body = text.slice((t.start[last] ?? 0) + 1, t.end[last] ?? 0).trim();
    if (body === '' || body === '-' || body === '+') return false;
  }
  return true;
}

/** `select version()`, `select current_user;`: fingerprinting the server, nothing else selected. */
function isIntrospection(i: number): boolean {
  const n = i + 1;
  if (!INTROSPECTION.has(word(n))) return isWord(n, '@@version');
  const after = kindAt(n) === T_FUNC && kindAt(n + 1) === T_LPAREN ? closeParen(n + 1) : n + 1;
  const k = kindAt(after);
  return (kindAt(n) === T_FUNC || word(n) !== 'user') && (k === T_END || k === T_SEMI || k === T_COMMENT);
}

/** After an expression: does SQL go on (operator, terminator, list) rather than prose ("sleep(3) in the test")? */
function continuesSql(i: number): boolean {
  const k = kindAt(i);
  return (
    k === T_END ||
    k === T_COMMENT ||
    k === T_OP ||
    k === T_LOGIC ||
    k === T_SEMI ||
    k === T_COMMA ||
    k === T_RPAREN ||
    k === T_BREAK ||
    isWord(i, 'from') ||
    isWord(i, 'then') ||
    isWord(i, 'else') ||
    isWord(i, 'end')
  );
}

function isPlusSpace(i: number): boolean {
  const next = kindAt(i + 1);
  return kindAt(i) === T_OP && isWord(i, '+') && (next === T_LOGIC || next === T_UNION);
}

function valueBefore(i: number): boolean {
  if (i > 0 && isPlusSpace(i - 1)) i--;
  const prev = i === 0 ? T_END : kindAt(i - 1);
  return prev === T_END || prev === T_NUM || prev === T_BREAK || prev === T_RPAREN || prev === T_COMMENT;
}

/** Keywords after which a condition starts: `where 1=1`, `when 2=2`, `having 3=3`, `if(…)`, `on 1=1`. */
const CONDITION_KEYWORDS = new Set(['where', 'when', 'having', 'on', 'if', 'iif', 'elt', 'make_set', 'not']);

/**
 * A literal compared with a literal (`5650=5650`, `2=3`) where SQL expects a condition: after a
 * logic word, an opening paren, a comma or a condition keyword, and followed by what ends a
 * condition. This is the tautology (or contradiction) of boolean and error-based probes, the
 * fingerprint libinjection's `1=1`-shaped entries judge; prose compares values with names
 * (`x = 5`) or inside arithmetic (`1+1=2`), neither of which is this shape.
 */
function literalCondition(i: number): boolean {
  if (kindAt(i + 1) !== T_OP || t.aux[i + 1] !== OP_COMPARE || kindAt(i + 2) !== T_NUM) return false;
  const prev = i === 0 ? T_END : kindAt(i - 1);
  const opens =
    prev === T_LOGIC ||
    prev === T_LPAREN ||
    prev === T_COMMA ||
    ((prev === T_KEYWORD || prev === T_BARE || prev === T_FUNC) && CONDITION_KEYWORDS.has(word(i - 1)));
  if (!opens) return false;
  // `(1=1)`: the open paren's own context matters: a function call, a condition keyword or a value.
  if (prev === T_LPAREN && i >= 2) {
    const before = kindAt(i - 2);
    if (before === T_BARE && !CONDITION_KEYWORDS.has(word(i - 2))) return false;
  }
  const after = kindAt(i + 3);
  return (
    after === T_END ||
    after === T_COMMENT ||
    after === T_RPAREN ||
    after === T_COMMA ||
    after === T_LOGIC ||
    after === T_SEMI ||
    isWord(i + 3, 'then') ||
    isWord(i + 3, 'having') ||
    isWord(i + 3, 'order') ||
    isWord(i + 3, 'union')
  );
}

/** Rules that do not depend on an injection point. */
function injectedAnywhere(): boolean {
  const snippet = startsWithStatement();
  let sawSelect = false;
  for (let i = 0; i < t.count; i++) {
    const k = kindAt(i);
    if (k === T_NUM) {
      if (literalCondition(i)) return true;
    } else if (k === T_FUNC) {
      const w = word(i);
      // `IF(1=1) SELECT 1 ELSE DROP FUNCTION x`: a conditional stacked statement.
      if (w === 'if' && kindAt(i + 1) === T_LPAREN && kindAt(closeParen(i + 1)) === T_STATEMENT) return true;
      if (TIME_FUNCTIONS.has(w)) {
        const prev = i === 0 ? T_END : kindAt(i - 1);
        const sqlContext =
          prev === T_END || prev === T_OP || prev === T_LOGIC || prev === T_COMMA || prev === T_LPAREN || prev === T_STATEMENT || prev === T_KEYWORD;
        const argument = kindAt(i + 2);
        if (sqlContext && kindAt(i + 1) === T_LPAREN && (argument === T_NUM || (w === 'pg_sleep' && argument === T_BARE)) && continuesSql(closeParen(i + 1))) {
          if (w !== 'benchmark' || kindAt(i + 3) === T_COMMA) return true;
        }
      } else if (DANGEROUS_FUNCTIONS.has(w)) {
        return true;
      }
    } else if (k === T_BARE) {
      const len = (t.end[i] ?? 0) - (t.start[i] ?? 0);
      if (len >= 8 && len <= 18) {
        const w = word(i);
        if (DANGEROUS_NAMES.has(w) || (!snippet && CATALOG_NAMES.has(w))) return true;
      }
      // `copy t from '/etc/passwd'`, `copy t to /tmp/x`: PostgreSQL reading or writing server files.
      if (len === 4 && isWord(i, 'copy') && kindAt(i + 1) === T_BARE && (isWord(i + 2, 'from') || isWord(i + 2, 'to'))) {
        if (kindAt(i + 3) === T_BREAK || isWord(i + 3, '/') || isWord(i + 3, 'program')) return true;
      }
    } else if (k === T_STATEMENT) {
      if (isWord(i, 'select') && (i === 0 || kindAt(i - 1) !== T_UNION)) {
        sawSelect = true;
        if (isIntrospection(i)) return true;
      }
      // T-SQL dynamic execution: `declare @q nvarchar(…)`, `exec(@q)`, `exec @q`.
      if (isWord(i, 'declare') && kindAt(i + 1) === T_VAR && (kindAt(i + 2) === T_BARE || kindAt(i + 2) === T_FUNC)) return true;
      if ((isWord(i, 'exec') || isWord(i, 'execute')) && (kindAt(i + 1) === T_VAR || (kindAt(i + 1) === T_LPAREN && kindAt(i + 2) === T_VAR))) return true;
      if (isWord(i, 'waitfor') && (isWord(i + 1, 'delay') || isWord(i + 1, 'time')) && kindAt(i + 2) === T_BREAK) return true;
    } else if (k === T_KEYWORD) {
      // Conditional expression injected into ORDER BY and friends: `(case when (1=1) then a else b end)`.
      if (isWord(i, 'case') && isWord(i + 1, 'when') && isInjectedCondition(i + 2, Point.AfterValue)) return true;
      if (isWord(i, 'into') && (isWord(i + 1, 'outfile') || isWord(i + 1, 'dumpfile'))) return true;
    } else if (!snippet && k === T_UNION) {
      const prev = i === 0 ? T_END : kindAt(i - 1);
      const valueBefore = prev === T_END || prev === T_NUM || prev === T_BREAK || prev === T_RPAREN || prev === T_COMMENT;
      if (valueBefore && !sawSelect && isUnionSelect(i)) return true;
    } else if (!snippet && k === T_SEMI) {
      if (kindAt(i + 1) === T_STATEMENT && isStackedStatement(i + 1, false)) return true;
    } else if (k === T_LOGIC && valueBefore(i)) {
      // Literal tautology joined by a logic word after a value: `x) or 1=1`, `5 and 'a'='a'`.
      const a = parseOperand(i + 1);
      if (a.type === Operand.Subquery) return true;
      if (isComparison(skip(a.end, T_RPAREN)) && parseOperand(skip(a.end, T_RPAREN) + 1).type === Operand.Subquery) return true;
      if (a.type === Operand.Num || a.type === Operand.Literal) {
        const j = skip(a.end, T_RPAREN);
        if (isComparison(j) && kindAt(j) === T_OP) {
          const b = parseOperand(j + 1);
          if (b.type === Operand.Num || b.type === Operand.Literal) return true;
        }
      }
    }
  }
  return false;
}

/** Length of the leading literal at token 0 (signed number, bare word or quoted string), or 0. */
function leadingValueEnd(): number {
  let i = 0;
  if (kindAt(i) === T_OP && (isWord(i, '-') || isWord(i, '+'))) i++;
  const k = kindAt(i);
  if (k === T_NUM || k === T_BARE) return i + 1;
  if (k === T_BREAK) return closeLiteral(i);
  return 0;
}

/** Substrings at least one of which every rule needs; text with none of them is not tokenized. */
const SQL_ANCHORS = [
  "'",
  '"',
  '`',
  '=',
  '<',
  '>',
  '--',
  '#',
  '/*',
  '||',
  '&&',
  '@@',
  'union',
  'select',
  'sleep',
  'benchmark',
  'waitfor',
  ' or',
  ' and',
  'xor',
  'order',
  'group',
  'having',
  'exec',
  'drop',
  'delete',
  'insert',
  'update',
  'case when',
  'into',
  'procedure',
  'load_file',
  'extractvalue',
  'updatexml',
  'xp_',
  'sp_',
  'dbms_',
  'utl_',
  'pg_',
  'randomblob',
  'limit',
  'shutdown',
  'declare',
  'truncate',
  'create',
  'alter',
  'grant',
  'exists',
  'sysobjects',
  'rlike',
  'regexp',
  'true',
  '; ',
];

function mayBeSql(s: string): boolean {
  for (const a of SQL_ANCHORS) if (s.indexOf(a) !== -1) return true;
  return false;
}

/** `s` is normalised (decoded, lower-case) text. */
export function detectSqlInjection(s: string): boolean {
  if (detectIn(s)) return true;
  // Filter evasions that only work against a filter which deletes empty comments (`uni/**/on`)
  // or unescapes `\x27`-style hex escapes: read the value the way such a filter leaves it.
  if (s.includes('/**/') && detectIn(s.replaceAll('/**/', ''))) return true;
  return s.includes('\\x') && detectIn(unescapeHex(s));
}

/** `\x27\x4f\x52`: the hex escapes a filter or a language layer unescapes (one linear pass). */
function unescapeHex(s: string): string {
  let out = '';
  let chunk = 0;
  for (let i = s.indexOf('\\x'); i !== -1; i = s.indexOf('\\x', i + 1)) {
    const h = hexDigit(s.charCodeAt(i + 2));
    const l = hexDigit(s.charCodeAt(i + 3));
    if (h < 0 || l < 0 || i < chunk) continue;
    out += s.slice(chunk, i) + String.fromCharCode(h * 16 + l).toLowerCase();
    chunk = i + 4;
  }
  return out + s.slice(chunk);
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

function detectIn(s: string): boolean {
  if (!mayBeSql(s)) return false;
  t = tokenize(s);
  text = s;
  if (t.count === 0) return false;
  if (injectedAt(0, Point.Start, 0)) return true;
  const valueEnd = leadingValueEnd();
  if (valueEnd > 0 && valueEnd < t.count && injectedAt(valueEnd, Point.AfterValue, 0)) return true;
  // Opening quotes: an even number of the same quote before them. Backticks are no injection
  // point: attacks break out of string literals, and Markdown wraps every inline code span
  // (`'/'`, `||`, `*`) in backticks.
  let singles = 0;
  let doubles = 0;
  for (let i = 0; i < t.count; i++) {
    if (kindAt(i) !== T_BREAK) continue;
    const q = t.aux[i] ?? 0;
    if (q !== 39 && q !== 34) continue;
    const seen = q === 39 ? singles++ : doubles++;
    if (seen % 2 === 0 && injectedAt(i + 1, Point.AfterQuote, q)) return true;
  }
  return injectedAnywhere();
}
