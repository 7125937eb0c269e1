import { appendFileSync, copyFileSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/process/service.js';
import { EventBuffer } from '../src/buffer.js';
import { createLogger } from '../src/log.js';
import { authLineHandler } from '../src/sources/auth.js';
import { FileTail } from '../src/sources/tail.js';
import { failureLine } from './harness.js';

const quiet = createLogger('error');

/** A log, its buffer and a tail over them; `users()` lists the buffered failures' users in order. */
function setup(maxEvents = 100_000) {
  const dir = tempDir('vigil-agent-tail-');
  const log = join(dir, 'auth.log');
  const db = join(dir, 'buffer.db');
  writeFileSync(log, '');
  const clock = { now: 0 };
  const timing = { retiredIdleMs: 60_000, retiredMaxMs: 900_000, now: () => clock.now };
  let buffer = new EventBuffer(db, maxEvents);
  let tail = new FileTail(log, buffer, authLineHandler('h1'), quiet, false, timing);
  const write = (from: number, to: number, path = log) => {
    for (let i = from; i < to; i++) appendFileSync(path, failureLine(i) + '\n');
  };
  return {
    dir,
    log,
    clock,
    write,
    poll: () => tail.poll(),
    buffer: () => buffer,
    users: () => buffer.pending(1_000_000).map((r) => (JSON.parse(r.body) as { actor_id: string }).actor_id),
    /** A new process: a fresh buffer handle and tail on the same files. */
    restart() {
      tail.close();
      buffer.close();
      buffer = new EventBuffer(db, maxEvents);
      tail = new FileTail(log, buffer, authLineHandler('h1'), quiet, false, timing);
    },
  };
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `user${from + i}`);

describe('following a log file', () => {
  it('starts at the end of an existing log, then reads what is appended', () => {
    const t = setup();
    t.write(0, 3);
    t.poll();
    expect(t.users()).toEqual([]);
    t.write(3, 6);
    t.poll();
    expect(t.users()).toEqual(range(3, 6));
  });

  it('waits for the newline of a line still being written', () => {
    const t = setup();
    t.poll();
    appendFileSync(t.log, failureLine(0));
    t.poll();
    expect(t.users()).toEqual([]);
    appendFileSync(t.log, '\n');
    t.poll();
    expect(t.users()).toEqual(['user0']);
  });

  it('rename rotation: reads the rest of the old file, then the new one, nothing twice', () => {
    const t = setup();
    t.poll();
    t.write(0, 2);
    t.poll();
    t.write(2, 4); // not yet read when the log is rotated
    renameSync(t.log, `${t.log}.1`);
    writeFileSync(t.log, '');
    t.write(4, 6);
    t.poll();
    expect(t.users()).toEqual(range(0, 6));
  });

  it('rename rotation with late writes: the renamed file stays followed until it is idle and the new log is written to', () => {
    const t = setup();
    t.poll();
    t.write(0, 1);
    t.poll();
    renameSync(t.log, `${t.log}.1`);
    writeFileSync(t.log, '');
    t.clock.now = 2_500;
    t.poll(); // the rotation is noticed; the writer has not reopened the log yet
    t.write(1, 4, `${t.log}.1`);
    t.clock.now = 3_000;
    t.poll();
    expect(t.users()).toEqual(range(0, 4));
    // The writer reopens: new lines go to the new log; the renamed file idles and is let go.
    t.write(4, 5);
    t.clock.now = 70_000;
    t.poll();
    t.write(5, 6, `${t.log}.1`);
    t.poll();
    expect(t.users()).toEqual(range(0, 5));
  });

  it('rename rotation with late writes across a restart: the renamed file is found again by its inode', () => {
    const t = setup();
    t.poll();
    t.write(0, 1);
    t.poll();
    renameSync(t.log, `${t.log}.1`);
    writeFileSync(t.log, '');
    t.poll();
    t.restart();
    t.write(1, 3, `${t.log}.1`);
    t.write(3, 4);
    t.poll();
    expect(t.users()).toEqual(range(0, 4));
  });

  it('a last line written without a newline is read once the rotated file is let go', () => {
    const t = setup();
    t.poll();
    t.write(0, 1);
    t.poll();
    renameSync(t.log, `${t.log}.1`);
    writeFileSync(t.log, '');
    appendFileSync(`${t.log}.1`, failureLine(1));
    t.poll();
    expect(t.users()).toEqual(range(0, 1));
    t.write(2, 3);
    t.clock.now = 70_000;
    t.poll();
    expect(t.users()).toEqual(range(0, 3));
  });

  it('rotation with immediate compression: lines not yet read when the renamed file was compressed and deleted are read from the open file', () => {
    const t = setup();
    t.poll();
    t.write(0, 2);
    t.poll();
    t.write(2, 4);
    renameSync(t.log, `${t.log}.1`);
    writeFileSync(t.log, '');
    t.write(4, 5, `${t.log}.1`); // a late write before the writer reopens
    writeFileSync(`${t.log}.1.gz`, gzipSync(readFileSync(`${t.log}.1`)));
    rmSync(`${t.log}.1`);
    t.write(5, 7);
    t.poll();
    expect(t.users()).toEqual(range(0, 7));
  });

  it('rotation and compression while the agent was stopped: the unread rest is read from the .gz copy', () => {
    const t = setup();
    t.poll();
    t.write(0, 2);
    t.poll();
    t.write(2, 4);
    t.restart();
    renameSync(t.log, `${t.log}.1`);
    writeFileSync(`${t.log}.1.gz`, gzipSync(readFileSync(`${t.log}.1`)));
    rmSync(`${t.log}.1`);
    writeFileSync(t.log, '');
    t.write(4, 6);
    t.poll();
    expect(t.users()).toEqual(range(0, 6));
  });

  it('copytruncate rotation: the lines after the saved offset are read from the copy', () => {
    const t = setup();
    t.poll();
    t.write(0, 2);
    t.poll();
    t.write(2, 5);
    copyFileSync(t.log, `${t.log}.1`);
    truncateSync(t.log, 0);
    t.write(5, 7);
    t.poll();
    expect(t.users()).toEqual(range(0, 7));
  });

  it('keeps its position across a restart, also when the log rotated while it was stopped', () => {
    const t = setup();
    t.poll();
    t.write(0, 3);
    t.poll();
    t.write(3, 5);
    t.restart();
    t.poll();
    expect(t.users()).toEqual(range(0, 5));
    t.write(5, 8);
    t.restart();
    renameSync(t.log, `${t.log}.1`);
    writeFileSync(t.log, '');
    t.write(8, 10);
    t.poll();
    expect(t.users()).toEqual(range(0, 10));
  });

  it('a log rewritten in place (same first line, new inode, no rotated copy) is not replayed', () => {
    const t = setup();
    t.poll();
    t.write(0, 4);
    t.poll();
    const tmp = `${t.dir}/rewrite`;
    const original = readFileSync(t.log, 'utf8').split('\n');
    writeFileSync(tmp, [0, 1, 3].map((i) => original[i]).join('\n') + '\n'); // line 2 removed, as `sed -i 2d` would
    rmSync(t.log);
    renameSync(tmp, t.log);
    t.poll();
    t.write(4, 5);
    t.poll();
    expect(t.users()).toEqual(range(0, 5));
  });

  it('pauses while the buffer is full and reads on from the same place once it drains', () => {
    const t = setup(3);
    t.poll();
    t.write(0, 10);
    t.poll();
    expect(t.buffer().depth).toBeGreaterThanOrEqual(3);
    const first = t.buffer().pending(100);
    t.buffer().acknowledge(
      first.map((r) => r.seq),
      0,
    );
    const seen = first.map((r) => (JSON.parse(r.body) as { actor_id: string }).actor_id);
    while (seen.length < 10) {
      t.poll();
      const rows = t.buffer().pending(100);
      expect(rows.length).toBeGreaterThan(0);
      seen.push(...rows.map((r) => (JSON.parse(r.body) as { actor_id: string }).actor_id));
      t.buffer().acknowledge(
        rows.map((r) => r.seq),
        0,
      );
    }
    expect(seen).toEqual(range(0, 10));
  });
});
