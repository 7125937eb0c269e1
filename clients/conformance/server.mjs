#!/usr/bin/env node
// Scripted stand-in for the Vigil ingestion API, used by every client's conformance harness.
// It answers each request with the next scripted response (or a realistic 202 when the script
// is empty) and records every request so the harness can compare them with a scenario.
//
//   node clients/conformance/server.mjs [--port N]    prints {"port":N} on one line
//
// Control routes (never recorded):
//   POST /__script    {"responses":[{status, headers?, body?, delay_ms?, reset_connection?}, ...]} appends to the script
//   GET  /__requests  {"requests":[{method, path, query, headers, body}, ...]} recorded since the previous call, then forgets them
//   POST /__reset     empties the script and the record
// Stops on SIGTERM, SIGINT, or when its stdin (if a pipe) closes.
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { fstatSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

const portArg = process.argv.indexOf('--port');
const port = portArg === -1 ? 0 : Number(process.argv[portArg + 1]);

/** Responses still to play, in order, shared by every ingestion path. */
let script = [];
/** Requests received since the last GET /__requests. */
let recorded = [];
let sequence = 0;

/** The policy of every answer unless scripted otherwise: roomy, so that only the pacing scenarios pace. */
const DEFAULT_POLICY = '"second";q=100;w=1, "minute";q=1000;w=60';

function rateLimitHeaders(status) {
  const limited = status === 429;
  return {
    'x-ratelimit-limit': '1000',
    'x-ratelimit-remaining': limited ? '0' : '999',
    'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 60),
    'ratelimit-policy': DEFAULT_POLICY,
    ratelimit: limited ? '"second";r=99;t=1, "minute";r=0;t=60' : '"second";r=99;t=1, "minute";r=999;t=60',
    ...(limited ? { 'retry-after': '60' } : {}),
  };
}

function acceptedEvent(event) {
  sequence += 1;
  return {
    id: `evt_conformance${String(sequence).padStart(10, '0')}`,
    status: 'accepted',
    received_at: new Date().toISOString(),
    ...(event && typeof event.event_id === 'string' ? { event_id: event.event_id } : {}),
    risk: { score: 10, level: 'low', action: 'allow', breakdown: [{ source: 'base', points: 10 }] },
    tags: [],
    alerts: [],
  };
}

/** The answer when nothing is scripted: what the service says when it accepts the request. */
function defaultResponse(path, body) {
  if (path === '/v1/events/batch') {
    const events = body && Array.isArray(body.events) ? body.events : [];
    return { status: 202, body: { status: 'accepted', accepted: events.length, results: events.map((e) => acceptedEvent(e)) } };
  }
  return { status: 202, body: acceptedEvent(body) };
}

function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(''));
  });
}

function parse(text) {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// Every answer closes its connection. An HTTP stack that sees a reused keep-alive socket reset
// may resend the request on its own (browsers do), which would hide a scripted network error
// behind an extra request the client never made.
function sendJson(res, status, value, headers = {}) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const contentType = typeof value === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8';
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text), connection: 'close', ...headers });
  res.end(text);
}

async function answer(req, res, path, body) {
  const scripted = script.shift();
  const response = scripted ?? defaultResponse(path, body);
  if (response.delay_ms) await delay(response.delay_ms);
  if (response.reset_connection) {
    req.socket.destroy();
    return;
  }
  if (res.destroyed || req.socket.destroyed) return;
  const status = response.status ?? 202;
  let payload = response.body;
  if (payload === undefined)
    payload =
      status === 202
        ? defaultResponse(path, body).body
        : { error: status === 429 ? 'RATE_LIMITED' : 'ERROR', message: `scripted ${status}`, request_id: randomBytes(6).toString('hex') };
  const headers = rateLimitHeaders(status);
  for (const [name, value] of Object.entries(response.headers ?? {})) headers[name.toLowerCase()] = String(value);
  sendJson(res, status, payload, headers);
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  // A harness running in a browser page talks to this server cross-origin, control routes included.
  if (req.headers.origin) {
    res.setHeader('access-control-allow-origin', req.headers.origin);
    res.setHeader('access-control-expose-headers', 'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit-Policy, RateLimit, Retry-After');
  }
  const text = await readBody(req);
  if (url.pathname === '/__script' && req.method === 'POST') {
    const body = parse(text);
    if (!body || !Array.isArray(body.responses)) return sendJson(res, 400, { error: 'INVALID_SCRIPT', message: 'expected {"responses": [...]}' });
    script.push(...body.responses);
    return sendJson(res, 200, { queued: script.length });
  }
  if (url.pathname === '/__requests' && req.method === 'GET') {
    const requests = recorded;
    recorded = [];
    return sendJson(res, 200, { requests });
  }
  if (url.pathname === '/__reset' && req.method === 'POST') {
    script = [];
    recorded = [];
    return sendJson(res, 200, { reset: true });
  }
  // Browsers ask before a cross-origin POST with an Authorization header; the preflight is not
  // part of what a client sends on purpose, so it is answered and not recorded.
  if (req.method === 'OPTIONS') {
    res.writeHead(204, {
      connection: 'close',
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'Authorization, Content-Type, X-API-Key',
      'access-control-max-age': '600',
    });
    return res.end();
  }
  const body = parse(text);
  recorded.push({ method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, body });
  await answer(req, res, url.pathname, body);
});

// A client that gave up on a delayed answer closes its socket; that is expected here.
server.on('clientError', (_err, socket) => socket.destroy());

server.listen(port, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n');
});

function stop() {
  server.close();
  server.closeAllConnections();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// Watching stdin only when it is a pipe: a parent that keeps the pipe open owns this process,
// and its exit closes the pipe; /dev/null or a terminal would end the server at once or never.
const stdin = fstatSync(0);
if (stdin.isFIFO() || stdin.isSocket()) {
  process.stdin.on('end', stop);
  process.stdin.on('close', stop);
  process.stdin.resume();
}
