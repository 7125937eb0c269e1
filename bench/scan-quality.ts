/**
 * Detection quality of the request scanner on the public-fuzz-list and real-traffic corpora of
 * test/fixtures/fuzz-corpus: recall per class and location, false positives per benign set, and
 * every payload still missed. Run: npx tsx bench/scan-quality.ts [--misses]
 */
import { falsePositiveTable, measureFalsePositives, measureRecall, recallTable } from '../test/enrichment/request-scan/fuzz-corpus.js';

const recall = measureRecall();
const falsePositives = measureFalsePositives();
console.log(recallTable(recall));
console.log();
console.log(falsePositiveTable(falsePositives));
if (process.argv.includes('--misses')) {
  for (const f of recall) {
    if (f.missed.length === 0) continue;
    console.log(`\n${f.cls} in ${f.location}: ${f.missed.length} missed`);
    for (const m of f.missed) console.log(`  ${JSON.stringify(m.payload)}`);
  }
  for (const f of falsePositives) {
    if (f.flagged.length === 0) continue;
    console.log(`\n${f.set} in ${f.location}: ${f.flagged.length} flagged`);
    for (const m of f.flagged) console.log(`  [${m.classes.join(',')}] ${JSON.stringify(m.text)}`);
  }
}
