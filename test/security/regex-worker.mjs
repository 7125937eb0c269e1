// Runs regular expressions against long adversarial strings and reports after each one; see
// regex-backtracking.test.ts. Plain JavaScript: it runs in a worker thread, outside vitest.
import { parentPort, workerData } from 'node:worker_threads';

const LENGTH = 20000;

/** Characters the pattern can match literally or through a class, plus a few generic ones. */
function alphabet(source) {
  const chars = new Set([' ', 'a', 'A', '0', '.', '-', '_', '/', '@', ':', '\t']);
  for (const c of source.replace(/\\[dDsSwWbB]/g, '')) if (c >= ' ' && c <= '~' && !'\\^$()|?*+{}[]'.includes(c)) chars.add(c);
  return [...chars].slice(0, 24);
}

for (const { source, flags } of workerData) {
  const regex = new RegExp(source, flags);
  const chars = alphabet(source);
  let tried = 0;
  for (const a of chars) {
    for (const input of [a.repeat(LENGTH) + '\u0000', a.repeat(LENGTH) + '!']) {
      regex.test(input);
      tried++;
    }
    for (const b of chars.slice(0, 10)) {
      if (a === b) continue;
      regex.test((a + b).repeat(LENGTH / 2) + '\u0000');
      tried++;
    }
  }
  parentPort.postMessage(tried);
}
