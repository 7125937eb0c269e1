#!/usr/bin/env node
// Runs every test suite of the repository (the service, the clients, the agent) one after
// another, reads each runner's own report, prints one summary line per suite and a final
// "N passed, N failed" line. A suite whose toolchain is missing is skipped with a message
// on a developer machine and fails under CI=true, so CI never passes on tests it did not run.
//
// Usage: node test/runner/run-all.mjs [suite ...] [-- extra vitest arguments]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SUITES } from './suites.mjs';

const root = new URL('../../', import.meta.url).pathname;
const ci = process.env.CI === 'true';
const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const names = dash === -1 ? argv : argv.slice(0, dash);
const extra = dash === -1 ? [] : argv.slice(dash + 1);
const selected = names.length === 0 ? SUITES : SUITES.filter((s) => names.includes(s.name));
if (selected.length !== (names.length || SUITES.length)) {
  console.error(`unknown suite; known: ${SUITES.map((s) => s.name).join(', ')}`);
  process.exit(2);
}

/** Counts <testcase> elements of a JUnit XML report by outcome. */
function countJUnit(xml) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const failures = [];
  const cases = xml.match(/<testcase\b[^>]*?(\/>|>[\s\S]*?<\/testcase>)/g) ?? [];
  for (const c of cases) {
    if (/<(failure|error)\b/.test(c)) {
      failed++;
      const attribute = (name) => c.match(new RegExp(`\\b${name}="([^"]*)"`))?.[1];
      failures.push([attribute('classname'), attribute('name')].filter(Boolean).join(' > '));
    } else if (/<skipped\b/.test(c)) skipped++;
    else passed++;
  }
  return { passed, failed, skipped, failures };
}

/** Counts `go test -json` test results (subtests included). */
function countGoJson(text) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const failures = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let e;
    try {
      e = JSON.parse(line);
    } catch {
      continue;
    }
    if (!e.Test) continue;
    if (e.Action === 'pass') passed++;
    else if (e.Action === 'fail') {
      failed++;
      failures.push(e.Test);
    } else if (e.Action === 'skip') skipped++;
  }
  return { passed, failed, skipped, failures };
}

function countVitestJson(file) {
  const r = JSON.parse(readFileSync(file, 'utf8'));
  const failures = [];
  const flaky = [];
  for (const file of r.testResults ?? []) {
    const name = file.name.startsWith(root) ? file.name.slice(root.length) : file.name;
    const failedTests = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
    for (const t of failedTests) failures.push(`${name} > ${t.fullName}`);
    // A test that passed with failure messages passed on a retry.
    for (const t of file.assertionResults ?? []) {
      if (t.status === 'passed' && (t.failureMessages ?? []).length > 0) {
        flaky.push(`${name} > ${t.fullName}: ${t.failureMessages[0].split('\n')[0]}`);
      }
    }
    // A file that fails to load or fails in a hook reports no failed test of its own.
    if (file.status === 'failed' && failedTests.length === 0) failures.push(`${name}: ${(file.message ?? '').split('\n')[0]}`);
  }
  return { passed: r.numPassedTests, failed: r.numFailedTests, skipped: r.numPendingTests + r.numTodoTests, failures, flaky };
}

const summary = [];
let exitCode = 0;
for (const suite of selected) {
  console.log(`\n=== suite ${suite.name}`);
  const missing = (suite.requires ?? []).filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
  if (missing.length > 0) {
    const message = `needs ${missing.join(', ')}`;
    console.log(`${suite.name}: skipped (${message})`);
    summary.push({ name: suite.name, passed: 0, failed: ci ? 1 : 0, skipped: 0, note: message });
    if (ci) exitCode = 1;
    continue;
  }
  const dir = mkdtempSync(join(tmpdir(), `vigil-${suite.name}-`));
  const report = join(dir, suite.report === 'go-json' ? 'report.jsonl' : suite.report === 'vitest-json' ? 'report.json' : 'report.xml');
  const [command, ...args] = suite.command(report, extra);
  const run = spawnSync(command, args, {
    cwd: join(root, suite.cwd ?? '.'),
    stdio: suite.report === 'go-json' ? ['ignore', 'pipe', 'inherit'] : 'inherit',
    env: { ...process.env, ...suite.env },
    maxBuffer: 512 * 1024 * 1024,
    encoding: 'utf8',
  });
  if (suite.report === 'go-json') {
    writeFileSync(report, run.stdout ?? '');
    for (const line of (run.stdout ?? '').split('\n')) {
      try {
        const e = JSON.parse(line);
        if (e.Action === 'output' && e.Output) process.stdout.write(e.Output);
      } catch {
        // not a JSON line
      }
    }
  }
  let counts = { passed: 0, failed: 0, skipped: 0, failures: [] };
  if (existsSync(report)) {
    const text = readFileSync(report, 'utf8');
    counts = suite.report === 'vitest-json' ? countVitestJson(report) : suite.report === 'go-json' ? countGoJson(text) : countJUnit(text);
  }
  // A test file that failed to load names itself in the report but counts no failed test, and a
  // runner that failed without any report (a crash, a compile error) counts as one failure.
  if (run.status !== 0) counts.failed = Math.max(counts.failed, counts.failures.length);
  if (run.status !== 0 && counts.failed === 0) {
    counts.failed = 1;
    counts.failures.push(`the runner exited with ${run.status ?? run.signal} without a failed test in its report`);
  }
  if (run.status !== 0) exitCode = 1;
  summary.push({ name: suite.name, ...counts });
}

console.log('\n=== summary');
for (const s of summary) {
  console.log(`${s.name}: ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped${s.note ? ` (${s.note})` : ''}`);
  // The names of failed tests close the output, where a reader of a truncated CI log looks.
  for (const name of s.failures ?? []) console.log(`FAILED ${s.name}: ${name}`);
  for (const name of s.flaky ?? []) console.log(`FLAKY ${s.name}: ${name}`);
}
const passed = summary.reduce((n, s) => n + s.passed, 0);
const failed = summary.reduce((n, s) => n + s.failed, 0);
const skipped = summary.reduce((n, s) => n + s.skipped, 0);
console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(exitCode);
