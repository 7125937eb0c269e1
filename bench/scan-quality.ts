/**
 * Detection quality of the request scanner on the public-fuzz-list, tool and real-traffic corpora
 * of test/fixtures/fuzz-corpus: recall per class, location and part (tuning or held-out, see
 * test/enrichment/request-scan/split.ts), false positives per benign set, location and part, and
 * every payload still missed.
 *   npx tsx bench/scan-quality.ts [--misses] [--part=held-out|tuning] [--by-file]
 */
import { CLASS_FILES, falsePositiveTable, measureFalsePositives, measureRecall, recallTable } from '../test/enrichment/request-scan/fuzz-corpus.js';

const partArg = process.argv.find((a) => a.startsWith('--part='))?.slice('--part='.length);
const recall = measureRecall().filter((f) => partArg === undefined || f.part === partArg);
const falsePositives = measureFalsePositives().filter((f) => partArg === undefined || f.part === partArg);
console.log(recallTable(recall));
console.log();
if (process.argv.includes('--by-file')) {
  for (const file of Object.values(CLASS_FILES).flat()) {
    console.log(`\n${file}`);
    console.log(recallTable(measureRecall((f) => f === file).filter((f) => partArg === undefined || f.part === partArg)));
  }
  console.log();
}
console.log(falsePositiveTable(falsePositives));
if (process.argv.includes('--misses')) {
  for (const f of recall) {
    if (f.missed.length === 0) continue;
    console.log(`\n${f.cls} in ${f.location} (${f.part}): ${f.missed.length} missed`);
    for (const m of f.missed) console.log(`  ${JSON.stringify(m.payload)}`);
  }
  for (const f of falsePositives) {
    if (f.flagged.length === 0) continue;
    console.log(`\n${f.set} in ${f.location} (${f.part}): ${f.flagged.length} flagged`);
    for (const m of f.flagged) console.log(`  [${m.classes.join(',')}] ${JSON.stringify(m.text)}`);
  }
}
